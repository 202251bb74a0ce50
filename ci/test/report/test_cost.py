"""The controller's cost (summary controller_cost, `make results`): without cAdvisor series in
Prometheus (this part's Prometheus has only k6's) every figure is null and the reason names the
query and the flags; the report shows it. The figures themselves come from the kubelet's real
cAdvisor on the local cluster (ci/test/e2e/test_4_matrix.py)."""
import json
import re

import pytest

from conftest import ROOT, TD, output_of

CONTRACT = ROOT / "ci/test/contract.py"


@pytest.fixture(scope="session")
def merged_without_cadvisor(report, prometheus, merged, work):
    out = work / "out/merged-cost"
    r = report("results", "--testid", "report-merge", "--prometheus", prometheus.url, "--out", str(out),
               "--rate", "150", "--duration", "10s", "--controller-namespace", "bench", "--controller-pods", "traefik.*")
    assert r.returncode == 0, output_of(r)
    return out, r


def test_cost_unknown_without_cadvisor(merged_without_cadvisor):
    out, r = merged_without_cadvisor
    cost = json.loads((out / "summary.json").read_text())["controller_cost"]
    assert cost["namespace_regex"] == "bench" and cost["pod_regex"] == "traefik.*", cost
    assert cost["pods"] == [] and cost["cpu_seconds"] is None and cost["memory_peak_bytes"] is None, cost
    assert "no container_cpu_usage_seconds_total series" in cost["unknown_reason"], cost
    assert "--controller-pods" in cost["unknown_reason"], cost
    assert "note: controller cost unknown" in r.stdout, r.stdout


def test_summary_with_cost_is_valid(report, merged_without_cadvisor):
    out, _ = merged_without_cadvisor
    v = report.script(CONTRACT, "valid", out / "summary.json")
    assert v.returncode == 0, output_of(v)


def test_report_shows_the_reason(merged_without_cadvisor):
    out, _ = merged_without_cadvisor
    md = (out / "report.md").read_text()
    assert "## Controller cost" in md and "no container_cpu_usage_seconds_total series" in md


def test_default_pod_regex_is_the_contracts(report, prometheus, merged, work):
    """Without --controller-pods the regex is scenarios/contract.json's controllerPods.podRegex (the
    controller dashboard's default too)."""
    contract = json.loads((ROOT / "scenarios/contract.json").read_text())
    out = work / "out/merged-cost-default"
    r = report("results", "--testid", "report-merge", "--prometheus", prometheus.url, "--out", str(out),
               "--rate", "150", "--duration", "10s")
    assert r.returncode == 0, output_of(r)
    cost = json.loads((out / "summary.json").read_text())["controller_cost"]
    assert cost["pod_regex"] == contract["controllerPods"]["podRegex"] and cost["namespace_regex"] == ".*"
    dashboard = json.loads((ROOT / "dashboards/controllers.json").read_text())
    pod_var = next(v for v in dashboard["templating"]["list"] if v["name"] == "controller_pod")
    assert pod_var["query"] == contract["controllerPods"]["podRegex"], pod_var


# ---- the CPU arithmetic on raw cAdvisor samples (benchreport.cost) ----

def samples(*points):
    return {"metric": {}, "values": [[t, str(v)] for t, v in points]}


def test_cpu_of_a_run_shorter_than_the_scrape_interval():
    """0.1 core between scrapes 30 s apart, a 15 s run inside: 1.5 CPU-seconds."""
    from benchreport.cost import _cpu_seconds
    s = samples((0, 0), (30, 3), (60, 6), (90, 9))
    assert _cpu_seconds([s], 40, 55) == pytest.approx(1.5)


def test_cpu_sums_containers_and_counts_a_counter_reset():
    from benchreport.cost import _cpu_seconds
    steady = samples((0, 0), (10, 1), (20, 2))               # 0.1 core
    restarted = samples((0, 10), (10, 12), (15, 1), (20, 3))  # +2, reset to 1, +2: 5 in 20 s
    assert _cpu_seconds([steady, restarted], 0, 20) == pytest.approx(2 + 5)


def test_cpu_unknown_with_one_sample():
    from benchreport.cost import _cpu_seconds
    assert _cpu_seconds([samples((5, 1))], 0, 20) is None


def test_cost_per_route_columns_only_for_route_runs(report, work):
    """A route experiment's cost (controller_cost.routes and the per-route figures) adds three
    columns to the table; a load run beside it shows its per-route cells empty. The figures come
    from real cAdvisor series on the local cluster (ci/test/e2e/test_5_gateway.py)."""
    routes = json.loads((TD / "routes-ab.json").read_text())
    routes["controller_cost"] = {
        "namespace_regex": ".*", "pod_regex": "traefik.*", "pods": ["bench-traefik/traefik-1"], "cpu_seconds": 2.5,
        "cpu_seconds_per_1k_requests": 0.5, "memory_peak_bytes": 64 * 2**20, "routes": 20,
        "cpu_seconds_per_route": 0.125, "memory_peak_bytes_per_route": round(64 * 2**20 / 20), "unknown_reason": None}
    load = json.loads((TD / "traefik.json").read_text())
    load["controller_cost"] = dict(routes["controller_cost"], routes=None, cpu_seconds_per_route=None,
                                   memory_peak_bytes_per_route=None)
    for name, summary in (("cost-routes", routes), ("cost-load", load)):
        (work / f"{name}.json").write_text(json.dumps(summary))
        v = report.script(CONTRACT, "valid", work / f"{name}.json")
        assert v.returncode == 0, output_of(v)
    out = work / "out/cost-per-route"
    r = report("--out", str(out), str(work / "cost-routes.json"), str(work / "cost-load.json"))
    assert r.returncode == 0, output_of(r)
    md = (out / "report.md").read_text()
    header = next(line for line in md.splitlines() if line.startswith("| run | requests | CPU-seconds"))
    assert "| routes | CPU-seconds per route | peak memory per route (MiB) |" in header, header
    assert re.search(r"^\| route-propagation \|.*\| 20 \| 0\.125 \| 3\.2 \|", md, re.M), md
