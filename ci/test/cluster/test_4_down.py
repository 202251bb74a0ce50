"""`down` stops everything and removes what `up` created; again, it is a no-op that succeeds."""
from conftest import leftovers, output_of, script


def test_down_succeeds(cluster):
    result = cluster.timed("down", script("down"))
    cluster.down_done = True
    assert result.returncode == 0, output_of(result)[-4000:]


def test_down_leaves_nothing_behind(cluster):
    # no process, mount, netns, iptables chain, bridge, cgroup or folder
    assert leftovers() == []


def test_down_again_is_idempotent(cluster):
    result = cluster.timed("down again", script("down"))
    assert result.returncode == 0, output_of(result)[-4000:]
