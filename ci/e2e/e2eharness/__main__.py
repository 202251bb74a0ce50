"""The harness' commands (python -m e2eharness, with dashboards/report on PYTHONPATH):
  run [--keep]                         the demo's run (demo.py): from nothing to a finished benchmark
  matrix --out DIR [matrix.sh options] NAME:SPEC...
                                       dashboards/report/matrix.sh on the local cluster: the stack
                                       deployed if missing, its release, namespace and Prometheus as
                                       defaults (given options win), each variant installed by
                                       install-variant (make matrix LOCAL=1)
  install-variant RELEASE NAMESPACE RUN_ID [HELM_ARGS...]
                                       one variant from the offline chart copy (matrix.sh --installer)
  follow DIR TIMEOUT_S                 follows the release namespace's TestRun, prints its tables and
                                       writes DIR/summary.json (ci/demo/kind.sh)"""
import argparse
import os
import subprocess
import sys
from dataclasses import replace

from . import chart, stack
from .kube import Kube
from .settings import E2E_DIR, ROOT, Settings
from .testrun import follow_evidence, summary_tables


def matrix(args):
    kube = Kube()
    subprocess.run(["bash", ROOT / "ci/tools/install.sh", "helm"], check=True)
    if not kube.ready():
        raise SystemExit(f"error: the local cluster does not answer at {kube.env['KUBECONFIG']}; start it with make cluster-up")
    prom_url = stack.deploy(kube)
    os.execve("/bin/bash", ["bash", str(ROOT / "dashboards/report/matrix.sh"), "--release", kube.release,
                            "--namespace", kube.namespace, "--prometheus", prom_url,
                            "--installer", str(E2E_DIR / "install-variant"), *args], kube.env)



def install_variant(args):
    if len(args) < 3:
        raise SystemExit("usage: install-variant RELEASE NAMESPACE RUN_ID [HELM_ARGS...]")
    release, namespace, run_id, *helm_args = args
    kube = Kube().for_release(release, namespace)
    result = chart.install(kube, run_id, *helm_args, "--create-namespace", check=False)
    sys.stderr.write(result.stdout + result.stderr)
    return result.returncode


def follow(args):
    """On the cluster of the caller's kubeconfig and PATH (kind), not the local cluster's."""
    if len(args) != 2:
        raise SystemExit("usage: follow DIR TIMEOUT_S")
    settings = Settings.read()
    settings = replace(settings, shell={**settings.shell, "KUBECONFIG": os.environ.get("KUBECONFIG", ""),
                                        "PATH": os.environ["PATH"]})
    evidence = follow_evidence(Kube(settings), args[0], int(args[1]))
    print(summary_tables(evidence.log_text))
    if evidence.summary is None:
        print(f"no bench.summary/v1 JSON in the runner log ({evidence.describe()})")
    else:
        print(f"Results: {evidence.path / 'summary.json'}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        parser = argparse.ArgumentParser(prog="e2eharness run")
        parser.add_argument("--keep", action="store_true", help="leave the release installed at the end")
        from .demo import main as run_main
        try:
            return run_main(parser.parse_args(argv[1:]).keep)
        except (RuntimeError, TimeoutError) as e:   # CommandError is a RuntimeError
            raise SystemExit(f"error: {e}") from None
    commands = {"matrix": matrix, "install-variant": install_variant, "follow": follow}
    if not argv or argv[0] not in commands:
        raise SystemExit(f"usage: python -m e2eharness run|{'|'.join(commands)} ARGS... (see {__file__})")
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
