"""The runner build's own guards (scenarios/runner/build-k6.sh, patch-xk6-kubernetes.sh): the
patch applies to xk6-kubernetes as the Go proxy serves it and refuses a release it was not written
for, and a k6 whose `k6 version` does not list both extensions is refused. That is k6 v2's silent
trap: a v2 command with extensions built for go.k6.io/k6 links without a word, lists no extension,
and fails every script with "unknown modules" (scenarios/runner/README.md, "k6 v2")."""
import json
import shutil
import subprocess

import pins
import pytest

from conftest import ROOT, run

RUNNER = ROOT / "scenarios" / "runner"
# What `k6 version` prints for a k6 v2 command whose extensions registered with the v1 module.
K6_V2_WITHOUT_EXTENSIONS = "k6 v2 (go1.26.8, linux/amd64)\n"


def check_extensions(binary):
    """build-k6.sh's check_extensions on BINARY (the script sourced: nothing is built)."""
    return run(["bash", "-c", f'. "{RUNNER}/build-k6.sh" out work && check_extensions "{binary}"'],
               env={"PATH": "/usr/bin:/bin", "K6_VERSION": "v0", "XK6_KUBERNETES_VERSION": "v0"})


@pytest.fixture(scope="module")
def pristine_xk6_kubernetes(tmp_path_factory):
    """xk6-kubernetes at its pin, as the proxy serves it (a writable copy)."""
    work = tmp_path_factory.mktemp("xk6k")
    found = run(["go", "mod", "download", "-json", f"github.com/grafana/xk6-kubernetes@{pins.value('XK6_KUBERNETES_VERSION')}"],
                cwd=work)
    assert found.returncode == 0, found.stderr
    copy = work / "module"
    shutil.copytree(json.loads(found.stdout)["Dir"], copy)
    subprocess.run(["chmod", "-R", "u+w", copy], check=True)
    return copy


def test_a_k6_listing_no_extension_is_refused(tmp_path):
    fake = tmp_path / "k6"
    fake.write_text(f"#!/bin/sh\nprintf '{K6_V2_WITHOUT_EXTENSIONS}'\n")
    fake.chmod(0o755)
    result = check_extensions(fake)
    assert result.returncode != 0, result.stdout
    assert "does not register k6/x/kubernetes k6/x/bench" in result.stderr, result.stderr
    assert "go.k6.io/k6/v2" in result.stderr, result.stderr


def test_the_built_runner_lists_both_extensions():
    k6 = run(["bash", RUNNER / "build.sh"])
    assert k6.returncode == 0, k6.stderr
    result = check_extensions(k6.stdout.strip())
    assert result.returncode == 0, result.stderr


def test_the_patch_applies_to_the_pinned_release(pristine_xk6_kubernetes, tmp_path):
    module = tmp_path / "m"
    shutil.copytree(pristine_xk6_kubernetes, module)
    result = run(["bash", RUNNER / "patch-xk6-kubernetes.sh", module])
    assert result.returncode == 0, result.stderr
    source = (module / "kubernetes.go").read_text()
    assert 'goja "github.com/grafana/sobek"' in source and "dop251/goja" not in source
    assert "lib/testutils" not in (module / "kubernetes_test.go").read_text()


def test_the_patch_refuses_a_release_it_was_not_written_for(pristine_xk6_kubernetes, tmp_path):
    module = tmp_path / "m"
    shutil.copytree(pristine_xk6_kubernetes, module)
    source = module / "kubernetes.go"
    source.write_text(source.read_text().replace('\t"github.com/dop251/goja"\n', '\t"github.com/grafana/sobek"\n'))
    result = run(["bash", RUNNER / "patch-xk6-kubernetes.sh", module])
    assert result.returncode == 1, result.stdout
    assert "expected the line" in result.stderr and "kubernetes.go, found it 0 times" in result.stderr, result.stderr
