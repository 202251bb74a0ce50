"""What the harness works on: this checkout, the release under test and the local cluster's
settings. The cluster's settings are written once, in ci/cluster/config.sh (sourced by its own
scripts); they are read here through bash, never copied."""
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
E2E_DIR = ROOT / "ci" / "e2e"
# The preset users install: the e2e Traefik takes its arguments and metrics port from it.
TRAEFIK_PRESET = ROOT / "values" / "traefik.yaml"

# The variables of lib/common.sh, ci/cluster/config.sh and env.sh the harness uses.
_SHELL_NAMES = ("BENCH_CACHE", "BENCH_TOOLS", "KUBECONFIG", "PATH", "BENCH_GATEWAY_IP", "BENCH_KUBELET_PORT",
                "BENCH_NODE_NAME", "K6_OPERATOR_VERSION")
_READ = "set -a && . lib/common.sh >/dev/null && . ci/cluster/env.sh && env -0"


@dataclass(frozen=True)
class Settings:
    release: str
    namespace: str
    work: Path        # where each run keeps its evidence (runs/<testid>) and the offline chart copy
    values: Path      # the local cluster's values file
    shell: dict       # _SHELL_NAMES as the cluster's scripts set them

    @classmethod
    def read(cls, environ=None, **overrides):
        """From the environment (BENCH_E2E_RELEASE, _NAMESPACE, _WORK, _VALUES), OVERRIDES winning."""
        environ = dict(os.environ if environ is None else environ)
        out = subprocess.run(["bash", "-c", _READ], cwd=ROOT, env=environ, capture_output=True, check=True).stdout
        values = dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)
        shell = {k: values.get(k, "") for k in _SHELL_NAMES}
        fields = {
            "release": environ.get("BENCH_E2E_RELEASE", "bench"),
            "namespace": environ.get("BENCH_E2E_NAMESPACE", "bench"),
            "work": Path(environ.get("BENCH_E2E_WORK") or Path(shell["BENCH_CACHE"]) / "e2e"),
            "values": Path(environ.get("BENCH_E2E_VALUES") or ROOT / "charts/bench/ci/08-local-cluster-values.yaml"),
            "shell": shell,
        }
        fields.update(overrides)
        return cls(**fields)

    def env(self, base=None):
        """An environment for kubectl, helm and k6 on the local cluster."""
        return dict(os.environ if base is None else base, KUBECONFIG=self.shell["KUBECONFIG"],
                    PATH=self.shell["PATH"], K6_NO_USAGE_REPORT="true", K6_AUTO_EXTENSION_RESOLUTION="false")
