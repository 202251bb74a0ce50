"""charts/bench installed from an offline copy: the subcharts cannot be downloaded on the local
cluster, so the copy drops the dependency list (every subchart is disabled by the local values,
charts/bench/ci/08-local-cluster-values.yaml, so the chart's own templates render unchanged)."""
import re
import shutil

from .settings import ROOT

CHART = ROOT / "charts" / "bench"
# Chart.yaml's `dependencies:` block: the key and its indented or list lines up to the next key
DEPENDENCIES = re.compile(r"^dependencies:.*\n(?:(?:[ \t-].*|#.*|)\n)*", re.M)


def offline_copy(directory):
    """charts/bench copied into DIRECTORY/bench (symlinks resolved) without Chart.lock, charts/ and
    the dependency list; returns the copy's path."""
    dst = directory / "bench"
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(CHART, dst, symlinks=False, ignore=shutil.ignore_patterns("charts", "Chart.lock"))
    chart_yaml = DEPENDENCIES.sub("", (CHART / "Chart.yaml").read_text())
    if re.search(r"^dependencies:", chart_yaml, re.M):
        raise RuntimeError(f"could not drop dependencies from {dst / 'Chart.yaml'}")
    (dst / "Chart.yaml").write_text(chart_yaml)
    return dst


def install(kube, testid, *helm_args, check=True):
    """helm upgrade --install of the release for run id TESTID from the offline copy over the local
    values, waiting for its objects; HELM_ARGS after them win."""
    chart = offline_copy(kube.work / "chart")
    return kube.helm("upgrade", "--install", kube.release, chart, "-n", kube.namespace, "-f", kube.settings.values,
                     "--set-string", f"loadtest.runId={testid}", "--wait", "--timeout", "5m", *helm_args, check=check)
