"""The alone part's own machinery (ci/test/alone.py): a seeded draw that takes the parts in turn, and
a test that passes only after another one fails when run by itself."""
import pathlib
import random

import alone  # ci/test, on pytest.ini's pythonpath


def test_the_same_seed_draws_the_same_tests_each_part_in_turn():
    ids = {"big": [f"big::t{i}" for i in range(500)], "small": ["small::a", "small::b"]}
    one, two = (alone.draw(ids, 5, random.Random(7)) for _ in range(2))
    assert one == two and len(set(one)) == 5, one
    assert sorted(x for x in one if x.startswith("small")) == ["small::a", "small::b"], one
    assert alone.draw(ids, 5, random.Random(8)) != one


def test_a_test_that_reads_what_another_wrote_fails_alone(tmp_path):
    (tmp_path / "test_order.py").write_text(
        "import pathlib\n"
        "SHARED = pathlib.Path(__file__).with_name('shared.txt')\n"
        "def test_writes():\n    SHARED.write_text('x')\n"
        "def test_reads():\n    assert SHARED.read_text() == 'x'\n")
    passed, _, out = alone.run_alone(f"{tmp_path}/test_order.py::test_reads", 60)
    assert not passed and "FileNotFoundError" in out, out[-2000:]
    assert alone.run_alone(f"{tmp_path}/test_order.py::test_writes", 60)[0]
    assert alone.run_alone(f"{tmp_path}/test_order.py::test_reads", 60)[0]


def test_a_test_over_its_time_fails_and_takes_its_processes_with_it(tmp_path):
    pid_file = tmp_path / "child.pid"
    (tmp_path / "test_slow.py").write_text(
        "import subprocess, time\n"
        f"def test_sleeps():\n    p = subprocess.Popen(['sleep', '300'])\n    open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "    time.sleep(300)\n")
    passed, seconds, out = alone.run_alone(f"{tmp_path}/test_slow.py::test_sleeps", 5)
    assert not passed and seconds < 60 and "timed out after 5 s" in out, out[-2000:]
    pid = int(pid_file.read_text())
    assert not pathlib.Path(f"/proc/{pid}").exists() or "Z" in pathlib.Path(f"/proc/{pid}/stat").read_text().split()[2], pid
