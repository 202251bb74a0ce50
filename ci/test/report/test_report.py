"""The report generator (make report, make results) on summaries of real short k6 runs and on crafted
edge cases (zero requests, only errors, dropped iterations, incomparable runs, by_path, routes):
verdicts, warnings, budgets, the merge of several runners from Prometheus, bad input, the matrix
runner's argument checks. Every Markdown table is compared with the JSON numbers and every HTML
report is rendered in headless chromium (no console message allowed, a screenshot taken)."""
import json
import os
import re
import shutil

import pytest

from conftest import CHECKS, ROOT, TESTDATA, k6_environ, recipe, renders_cleanly, run
from benchreport import timeline

TD = TESTDATA


def ok(result):
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


# ---- the report folders the tests read, each written on first use by whichever test reads it ----
# A recipe gives `report --out out/NAME`'s arguments; f(fixture) is a session fixture's value.

RECIPES = {
    # budgets a loaded 2-core machine holds
    "real": lambda f: ["--prometheus", f("prometheus").url, "--budget", "errors=0", "--budget", "p50=1s",
                       f("runs")["a"]],
    "comparable": lambda f: ["--prometheus", f("prometheus").url, f("runs")["a"], f("runs")["c"]],
    "incomparable": lambda f: [f("runs")["a"], f("runs")["b"]],
    "churn": lambda f: ["--prometheus", f("prometheus").url, f("runs")["churn"]],
    "zero": lambda f: [TD / "zero-requests.json"],
    "errors": lambda f: [TD / "only-errors.json"],
    "dropped": lambda f: [TD / "traefik.json", TD / "dropped.json", TD / "only-errors.json"],
    "paths": lambda f: [TD / "paths.json"],
    "routes": lambda f: ["--budget", "errors=0", "--budget", "p50=1s", TD / "routes-ab.json",
                         TD / "routes-change-broken.json"],
    "restart": lambda f: [TD / "controller-restart.json", TD / "traefik.json"],
    "dpscale": lambda f: [TD / "dataplane-scale.json", TD / "traefik.json"],
    "upgrade": lambda f: [TD / "controller-upgrade.json", TD / "traefik.json"],
    "failover": lambda f: [TD / "backend-failover.json", TD / "traefik.json"],
    "longlived": lambda f: [TD / "long-lived.json", TD / "traefik.json"],
    "b1": lambda f: ["--budget", "p99=1us", f("runs")["a"]],
    "b2": lambda f: ["--budget", "p99=10s", "--budget", "errors.http_5xx=0.1%", f("runs")["a"]],
    "b3": lambda f: ["--budget", "errors=0.01%", TD / "paths.json"],
    "promdown": lambda f: ["--prometheus", f"http://127.0.0.1:{f('closed_port')}", f("runs")["a"]],
    "notest": lambda f: ["--prometheus", f("prometheus").url, TD / "traefik.json"],
}
for _name, _args in RECIPES.items():
    recipe(_name)(_args)


def runner_summary(f, flagged):
    """Run a's summary with the runner verdict each witness would set when flagged (CPU-bound lag, a
    cgroup CPU limit that throttled it, its own Go runtime), or a comfortable runner's."""
    name = "flagged" if flagged else "comfortable"
    r = json.loads(f("runs")["a"].read_text())
    rn = r["runner"]
    rn.update(cpu_bound=flagged, runtime_bound=flagged, cpu_throttled=flagged)
    rn["cgroup_cpu"].update(cgroup="v2 /sys/fs/cgroup", quota_cores=0.25, periods=45,
                            throttled_periods=40 if flagged else 0, throttled_ratio=0.8889 if flagged else 0)
    path = f("work") / f"{name}-runner.json"
    path.write_text(json.dumps(r))
    return [path]


recipe("flagged")(lambda f: runner_summary(f, True))
recipe("comfortable")(lambda f: runner_summary(f, False))


@pytest.mark.parametrize("name", [*RECIPES, "flagged", "comfortable"])
def test_written(gen, name):
    """`report --out out/NAME` with the recipe's arguments exits 0 (what it wrote: the cases below)."""
    ok(gen(name))


# ---- the real runs held their rates ----

@pytest.mark.parametrize("name", ["a", "c", "b"])
def test_real_run_held_rate(real_runs, name):
    """These rates hold on local nginx: exit 0. 99 (iterations dropped) is a failed check."""
    r = real_runs[name]
    req = r.summary["requests"]
    assert r.rc == 0, f"{r.name}: exit {r.rc}, {req['dropped_iterations']} dropped iterations ({req.get('dropped_because')})"


# ---- one run over three runners, merged from Prometheus (make results) ----

def test_k6_runs_leave_the_callers_bench_variables_out(monkeypatch):
    """A k6 run's environment has none of the caller's BENCH_* variables (BENCH_REPORT_KEEP, a BENCH_RATE
    left in the shell): the scenarios refuse a BENCH_* they do not know (k6 exit 107), and a test's
    runs take only the settings it gives them."""
    monkeypatch.setenv("BENCH_REPORT_KEEP", "/tmp/keep")
    monkeypatch.setenv("BENCH_RATE", "5")
    env = k6_environ()
    assert not [k for k in env if k.startswith("BENCH_")] and env["PATH"] == os.environ["PATH"], sorted(env)


@pytest.mark.parametrize("i", [1, 2, 3])
def test_merge_runner_held_rate(merge_runners, i):
    r = merge_runners[i - 1]
    assert r.rc == 0, f"{r.name}: exit {r.rc}, {r.summary['requests']['dropped_iterations']} dropped iterations"


def settled_holds_every_request(report, prometheus, settled_step, testid, runners):
    """`settled` printed an instant after every runner ended at which Prometheus' request count of
    the run is final: it counts at least each runner's own requests (warm-up included) and reads
    the same now."""
    wait = ok(settled_step)
    at = float(wait.stdout.strip())
    ended = max(r.summary_path.stat().st_mtime for r in runners)
    assert ended - 1 <= at, f"settled at {at}, before the last runner ended at {ended}"
    query = f'sum(last_over_time(k6_http_reqs_total{{testid="{testid}"}}[30m]))'
    then, now = (float(ok(report.prom(prometheus.url, "value", query, *when)).stdout or 0)
                 for when in (["--at", str(at)], []))
    own = sum(r.summary["requests"]["total"] + r.summary["requests"].get("warmup_requests", 0) for r in runners)
    assert then == now >= own > 0, (then, now, own)


def test_merge_settled(report, prometheus, merged, merge_runners):
    """three runners: `settled` waits until Prometheus holds every runner's last samples."""
    settled_holds_every_request(report, prometheus, merged[0], "report-merge", merge_runners)


def test_merge_written(merged):
    """results: exit 0, the merged summary of the three runners' run and its report written."""
    ok(merged[1])
    r = json.loads((merged[2] / "summary.json").read_text())
    assert (r["schema"], r["testid"], len(r["runners"])) == ("bench.summary/v1", "report-merge", 3), r.get("runners")
    for name in ("report.md", "report.html", "report.json"):
        assert (merged[2] / name).stat().st_size > 0, name


def test_merge_matches(report, prometheus, merged, merge_runners):
    """results: merged counts, classes, percentiles and lag match the runners and Prometheus."""
    ok(report.script(CHECKS / "check_merge.py", merged[2] / "summary.json", prometheus.url,
                     *[r.summary_path for r in merge_runners]))


def test_merge_error_causes(merged):
    """results: the report shows what each class was made of (refused connects, resets after the write)."""
    assert re.search(r"\| *connection/refused *\|(.*\|)? *read/reset *\|", (merged[2] / "report.md").read_text())


def test_merge_checker_catches(report, prometheus, merged, merge_runners, work):
    """check_merge.py exits 1 naming a changed request count, read errors and runner 1's lag count."""
    r = json.loads((merged[2] / "summary.json").read_text())
    r["requests"]["total"] += 50
    r["errors"]["read"] += 1
    r["runners"][0]["lag_ms"]["count"] += 1
    (work / "tampered-merge.json").write_text(json.dumps(r))
    res = report.script(CHECKS / "check_merge.py", work / "tampered-merge.json", prometheus.url,
                        *[x.summary_path for x in merge_runners])
    assert res.returncode == 1, res.stdout
    for want in ("FAIL: merged requests = sum of the runners", "FAIL: errors.read = sum over runners",
                 "FAIL: runner 1: lag samples = its own"):
        assert any(line.startswith(want) for line in res.stdout.splitlines()), f"no {want!r}:\n{res.stdout}"


def test_merge_settings(merged):
    """results: every setting from the runners' k6_bench_run_info series (nothing given on the command line)."""
    r = json.loads((merged[2] / "summary.json").read_text())
    s = r["settings"]
    assert (s["rate"], s["duration_s"], s["warmup_s"], s["connections"], s["keepalive"], r["scenario"],
            r["controller"]) == (150, 10, 2, 60, True, "static", "none"), s
    assert s["runner_parallelism"] == 3 and s["target_url"].startswith("http://"), s
    assert r["requests"]["rate_target"] == 150, r["requests"]


def test_merge_leaves_the_warmup_out(merged, merge_runners):
    """results: the 2 s warm-up's requests (scenario and role warmup in Prometheus) are counted apart, as
    each runner's own summary counts them, and are in no figure: the totals and the rate are the
    measured 10 s at 150 req/s."""
    r = json.loads((merged[2] / "summary.json").read_text())
    own = [x.summary["requests"] for x in merge_runners]
    assert r["requests"]["warmup_requests"] == sum(o["warmup_requests"] for o in own) >= 0.95 * 150 * 2, (r["requests"], own)
    assert r["requests"]["total"] == sum(o["total"] for o in own) <= 150 * 10 * 1.02, (r["requests"], own)
    # the latency histogram holds the measured requests only (the warm-up's are a fifth more)
    assert abs(r["merge"]["latency_histogram_count"] - r["requests"]["total"]) <= 0.01 * r["requests"]["total"], r["merge"]


def test_flags_win_over_the_run_info(merged_flags, merged, out):
    """results --rate/--duration win over the series; --runner-summary adds its environment."""
    ok(merged_flags)
    r = json.loads((out / "merged-flags/summary.json").read_text())
    m = json.loads((merged[2] / "summary.json").read_text())
    assert (r["settings"]["rate"], r["settings"]["duration_s"]) == (200, 12), r["settings"]
    assert r["settings"]["connections"] == 60 and "environment" in r["settings"], r["settings"]
    assert r["requests"]["total"] == m["requests"]["total"]


def results_rejected(report, args, *wants):
    r = report("results", *map(str, args))
    assert r.returncode == 2 and all(w in r.stderr for w in wants), \
        f"exit {r.returncode}, wanted 2 and {wants}; got:\n{r.stderr}"


def test_merged_read_back(gen, merged):
    """results: the merged summary is read back by the report."""
    ok(gen("merged-again", merged[2] / "summary.json"))


def test_merge_runner_rows(merged):
    """results: one report row per runner with its lag, runtime and CPU-throttle verdicts."""
    row = re.compile(r"^\| 3 \| [0-9]+ \| 50 \| [0-9.]+ \|.*\| (ok|CPU-BOUND) \| [0-9.]+ \| [0-9.]+ \| "
                     r"(ok|RUNTIME-BOUND) \| [0-9.]+ \| (ok|THROTTLED) \|$", re.M)
    assert row.search((merged[2] / "report.md").read_text())


# ---- parts and steps over two runners: by_path, the knee (max-rps), the ceiling (calibrate) ----

@pytest.mark.parametrize("kind", list(("paths", "knee", "ceiling")))
@pytest.mark.parametrize("i", [1, 2])
def test_part_runner_held_rate(part_runners, kind, i):
    r = part_runners[kind][i - 1]
    assert r.rc == 0, f"{r.name}: exit {r.rc}, {r.summary['requests']['dropped_iterations']} dropped iterations"


@pytest.mark.parametrize("kind", ["paths", "knee", "ceiling"])
def test_parts_settled(report, prometheus, merged_parts, part_runners, kind):
    """two runners: `settled` waits until Prometheus holds every runner's last samples."""
    settled_holds_every_request(report, prometheus, merged_parts[kind][0], f"report-{kind}", part_runners[kind])


@pytest.mark.parametrize("kind", ["paths", "knee", "ceiling"])
def test_parts_merged(merged_parts, kind):
    """two runners: merged by results into one summary of the run over both."""
    ok(merged_parts[kind][1])
    r = json.loads((merged_parts[kind][2] / "summary.json").read_text())
    assert (r["testid"], len(r["runners"])) == (f"report-{kind}", 2), r.get("runners")


@pytest.mark.parametrize("kind", ["paths", "knee", "ceiling"])
def test_parts_match(report, merged_parts, part_runners, kind):
    """two runners: merged parts and steps match the runners' own."""
    ok(report.script(CHECKS / "check_parts.py", merged_parts[kind][2] / "summary.json",
                     *[r.summary_path for r in part_runners[kind]]))


@pytest.mark.parametrize("i", [1, 2])
def test_dropping_runner_dropped_in_every_part(dropping_runners, i):
    """the dropping run's runner i: exit 99 (no dropped iterations is its threshold) and drops in every part."""
    r = dropping_runners[i - 1]
    assert r.rc == 99, f"{r.name}: exit {r.rc}, wanted 99 (iterations dropped)"
    parts = r.summary["by_path"]
    assert parts and all(p["requests"]["dropped_iterations"] > 0 for p in parts.values()), \
        {name: p["requests"]["dropped_iterations"] for name, p in parts.items()}


def test_dropping_parts_match(report, merged_dropping, dropping_runners):
    """two runners that dropped iterations: each merged part's dropped iterations are the runners' sum
    (k6 tags dropped_iterations with the scenario's name but none of its own tags)."""
    ok(merged_dropping[0])
    ok(merged_dropping[1])
    merged = json.loads((merged_dropping[2] / "summary.json").read_text())
    assert all(p["requests"]["dropped_iterations"] > 0 for p in merged["by_path"].values()), merged["by_path"]
    ok(report.script(CHECKS / "check_parts.py", merged_dropping[2] / "summary.json",
                     *[r.summary_path for r in dropping_runners]))


def parts_checker_catches(report, tampered, runners, wanted):
    res = report.script(CHECKS / "check_parts.py", tampered, *[r.summary_path for r in runners])
    assert res.returncode == 1, f"exit {res.returncode}, wanted 1:\n{res.stdout}"
    for want in wanted:
        assert re.search(f"^FAIL: {want}", res.stdout, re.M), f"no 'FAIL: {want}' line:\n{res.stdout}"


def test_parts_checker_catches_knee(report, merged_parts, part_runners, work):
    """parts checker catches a changed knee and step rate."""
    r = json.loads((merged_parts["knee"][2] / "summary.json").read_text())
    r["max_rps"]["knee_rate"] = r["max_rps"]["steps"][0]["rate_target"]
    r["max_rps"]["steps"][2]["rate_achieved"] *= 0.9
    (work / "tampered-knee.json").write_text(json.dumps(r))
    parts_checker_catches(report, work / "tampered-knee.json", part_runners["knee"],
                          ["max_rps: the knee is the highest held step", "max_rps step .*: achieved = sum of the runners'"])


def test_parts_checker_catches_ceiling(report, merged_parts, part_runners, work):
    """parts checker catches a changed ceiling."""
    r = json.loads((merged_parts["ceiling"][2] / "summary.json").read_text())
    r["calibrate"]["ceiling_rate"] = r["calibrate"]["steps"][0]["rate_target"]
    (work / "tampered-ceiling.json").write_text(json.dumps(r))
    parts_checker_catches(report, work / "tampered-ceiling.json", part_runners["ceiling"],
                          ["calibrate: the ceiling is the highest held step"])


def test_results_list(report, prometheus, merged):
    """results --list names the run."""
    r = ok(report("results", "--list", "--prometheus", prometheus.url))
    assert "report-merge" in r.stdout.splitlines(), r.stdout


@pytest.mark.parametrize("args, wants", [
    (["--testid", "nope"], ["no k6_http_reqs_total series with testid=nope", "report-merge"]),
    (["--testid", "a b"], ["--testid 'a b' is not a run id", "at most 63"]),
    (["--testid", "report-merge", "--duration", "soon"], ["--duration 'soon' is not a duration", "expected e.g. 180s"]),
], ids=["unknown run id", "malformed run id", "bad duration"])
def test_results_rejected(report, prometheus, merged, work, args, wants):
    results_rejected(report, [*args, "--prometheus", prometheus.url, "--out", work / "out/nope"], *wants)


@pytest.mark.parametrize("name", ["a", "b", "c"])
def test_real_run_without_errors(real_runs, name):
    """real run: requests answered without error."""
    r = real_runs[name].summary
    assert r["requests"]["total"] > 0 and sum(r["errors"].values()) == 0, (r["requests"], r["errors"])


# ---- reports of real runs ----

def test_real_verdict(gen, out):
    r = gen.json("real")
    assert r["runs"][0]["verdict"] == "PASS" and r["runs"][0]["timeseries"] and r["budgets"] == ["errors=0", "p50=1s"]


def test_real_timeseries_chart(gen):
    p = gen.dir("real") / "charts/timeseries-1.svg"
    assert p.is_file() and p.stat().st_size


def test_comparable_no_settings_warning(gen):
    r = gen.json("comparable")
    assert not any("settings." in w for w in r["warnings"]) and len(r["runs"]) == 2, r["warnings"]


def test_comparable_overlay(gen):
    p = gen.dir("comparable") / "charts/percentiles-overlay.svg"
    assert p.is_file() and p.stat().st_size


def test_incomparable_warnings(gen):
    w = gen.json("incomparable")["warnings"]
    assert any("settings.rate differs" in x for x in w) and any("settings.path differs" in x for x in w), w


# ---- scale events from Prometheus (simulated churn telemetry, real k6 and Prometheus) ----

def test_churn_scale_events(gen, real_runs):
    """churn series: every scale event k6 counted is marked (a mark counts the events of its step)."""
    want = int(real_runs["churn"].extra["export"]["metrics"]["bench_scale_events"]["count"])
    seen = gen.json("churn")["runs"][0]["scale_events_seen"]
    assert seen == want and seen > 0, (seen, want)


@pytest.mark.parametrize("text", ["replicas desired", "errors/s connection"], ids=["replicas", "errors by class"])
def test_churn_drawn(gen, text):
    assert text in (gen.dir("churn") / "charts/timeseries-1.svg").read_text()


def test_churn_replica_range(gen):
    assert "Backend replicas (desired, from k6_bench_replicas_desired): 5 to 7." in gen.md("churn")


def test_churn_merged_written(churn_merged):
    ok(churn_merged)


def test_churn_merged_matches(churn_merged, real_runs, out):
    """The merged scale events equal k6's own count, so do the convergence events (emit.js records
    one per scale step), and the merged convergence max lies within one schema-3 bucket of k6's."""
    m = json.loads((out / "churn-merged/summary.json").read_text())
    e = real_runs["churn"].extra["export"]["metrics"]
    conv, k6conv = m["convergence_ms"], e["bench_endpoint_convergence"]
    events = int(e["bench_scale_events"]["count"])
    assert events > 0 and m["scale_events"] == events
    assert conv["added"]["count"] + conv["removed"]["count"] == events
    merged_max = max(conv[x]["max"] or 0 for x in ("added", "removed"))
    assert k6conv["max"] / 2 ** (1 / 8) <= merged_max <= k6conv["max"] * 2 ** (1 / 8), (merged_max, k6conv["max"])


# ---- crafted edge cases ----

def test_zero_verdict(gen):
    r = gen.json("zero")
    assert r["runs"][0]["verdict"] == "NO DATA" and any("no request completed" in w for w in r["warnings"])


def test_zero_latency_na(gen):
    assert "| broken | 0 | n/a | n/a |" in gen.md("zero")


def test_zero_fail_on_verdict(report, out):
    r = report("--out", out / "zero-gate", "--fail-on-verdict", TD / "zero-requests.json")
    assert r.returncode == 1, f"exit {r.returncode}, want 1:\n{r.stderr}"


def test_errors_verdict(gen):
    r = gen.json("errors")["runs"][0]
    assert r["verdict"] == "FAIL" and r["reasons"] == ["errors = 60000 > 0"], r


def test_errors_share(gen):
    assert "| 59000 | 0 | 0 | 1000 | 0 | 0 | 60000 | 100% |" in gen.md("errors")


def test_dropped_warnings(gen):
    """incomparable crafted runs: dropped, shortfall, duration, path warnings."""
    w = gen.json("dropped")["warnings"]
    for k in ["dropped 9000 iterations", "achieved 700 req/s", "settings.duration_s differs", "settings.path differs"]:
        assert any(k in x for x in w), (k, w)


def test_flagged_runner_warnings(gen):
    w = gen.json("flagged")["warnings"]
    for k in ["runner was CPU-bound", "CPU-throttled by its cgroup's CPU limit in 88.9% of the quota periods",
              "runner paused itself"]:
        assert any(k in x for x in w), (k, w)


def test_flagged_runner_markdown(gen):
    assert "CPU-throttled by its cgroup's CPU limit in 88.9% of the quota periods" in gen.md("flagged")


def test_comfortable_runner_no_warning(gen):
    w = gen.json("comfortable")["warnings"]
    assert not any("k6 runner" in x for x in w), w


def test_paths_labels(gen):
    assert [x["label"] for x in gen.json("paths")["runs"]] == ["traefik", "traefik / ingress", "traefik / clusterip"]


# ---- the route experiments, from real runs of ci/test/scenarios/routes/ (Traefik v3.6.12) kept as
# testdata: the migration A/B in one summary and a route change to a Service without endpoints ----

def test_routes_rows(gen):
    """routes: HTTPRoute and Ingress side by side, one Routes row each."""
    rows = re.findall(r"^\| route-propagation \| propagation \| (httproute|ingress) \|", gen.md("routes"), re.M)
    assert sorted(rows) == ["httproute", "ingress"], rows


def test_routes_verdicts(gen):
    """routes: the A/B passes, the broken change fails on its change errors."""
    r = gen.json("routes")
    assert r["runs"][0]["verdict"] == "PASS"
    assert [x["verdict"] for x in r["runs"] if x["label"] == "route-change"][0] == "FAIL"
    assert any(s.startswith("routes.httproute.change_errors = ") for x in r["runs"] for s in x["reasons"])


# ---- controller-restart, from a real run of the e2e kept as testdata: the e2e Traefik (one replica,
# v3.6.12) deleted under 200 req/s, its runner's own summary; beside it the report's own churn run ----

def test_controller_restart_section(gen):
    """restart: one row for the controller-restart run, its deletion, times, lost requests and gate."""
    md = gen.md("restart")
    assert "## Controller restart" in md
    rows = re.findall(r"^\| traefik( \[[^]]*\])? \| bench-traefik \| app.kubernetes.io/instance=bench-e2e,"
                      r"app.kubernetes.io/name=traefik \| 1 \| 0 \| .* \| FAILED \|$", md, re.M)
    assert len(rows) == 1, md


# ---- the common checks of every report folder: Markdown = JSON, renders cleanly ----

# ---- dataplane-scale, from a summary written by hand in the shape summary-writer.js gives (no e2e
# run of it is kept yet): the e2e Traefik's controller-restart summary with its section swapped for
# gradual 1 -> 2 -> 1 of Deployment bench-traefik/traefik, 37 connection resets after the scale-down ----

def test_dataplane_scale_section(gen):
    """dpscale: one row for the dataplane-scale run (its Deployment, levels, steps, lost requests, gate)
    and one per step."""
    md = gen.md("dpscale")
    assert "## Data-plane scale" in md
    rows = re.findall(r"^\| traefik( \[[^]]*\])? \| bench-traefik/traefik \| gradual \| 2,1 \| 2,1 \| 2 \| 0 \| 2197 \| 3124 "
                      r"\| 37 \| connection 37 \| FAILED \|$", md, re.M)
    assert len(rows) == 1, md
    # the load errors within W of each step: the summary's attribution timeline, one mark per step
    steps = re.findall(r"^\| traefik( \[[^]]*\])? \| (\d) \| (\d -> \d) \| (\d+) \| (\d+) \| (\d+) \|$", md, re.M)
    assert [s[1:] for s in steps] == [("1", "1 -> 2", "3124", "0", "0"), ("2", "2 -> 1", "1270", "3", "34")], md


def test_dataplane_scale_through_an_nginxproxy_names_it_beside_the_deployment(gen, out):
    """A summary whose steps set NGINX Gateway Fabric's NginxProxy (dataplane_scale.scaled): the row says
    so after the Deployment it followed."""
    summary = json.loads((TD / "dataplane-scale.json").read_text())
    summary["dataplane_scale"]["scaled"] = "NginxProxy bench/bench-proxy-config spec.kubernetes.deployment.replicas"
    path = out.parent / "dpscale-ngf.json"
    path.write_text(json.dumps(summary))
    ok(gen("dpscale-ngf", path))
    assert re.search(r"^\| traefik( \[[^]]*\])? \| bench-traefik/traefik through NginxProxy bench/bench-proxy-config "
                     r"spec\.kubernetes\.deployment\.replicas \| gradual \|", gen.md("dpscale-ngf"), re.M), gen.md("dpscale-ngf")


def test_dataplane_scale_attribution(gen):
    """dpscale: the summary's attribution gives the sentence (in the section and under Errors by event)
    and a row per event kind and for no event."""
    md = gen.md("dpscale")
    said = re.findall(r"^traefik( \[[^]]*\])?: 92 % of errors \(34 of 37\) within 7 s of a data-plane scale step\. "
                      r"\(Errors by event\.\)$", md, re.M)
    assert len(said) == 2 and "## Errors by event" in md, md
    assert re.search(r"^\| traefik( \[[^]]*\])? \| 7 \| dataplane_scale \| 2 \| 34 \| 92 % \| connection 34 \| 1 \|$", md, re.M), md
    assert re.search(r"^\| traefik( \[[^]]*\])? \| 7 \| no event \|  \| 3 \| 8 % \| connection 3 \| 0 \|$", md, re.M), md
    assert gen.json("dpscale")["runs"][0]["attribution"]["window_s"] == 7


# ---- controller-upgrade, from a summary written by hand the same way: dataplane-scale.json's run with
# its section swapped for a roll of Deployment bench-traefik/traefik (one pod replaced, the annotation
# alone), its 37 connection resets ----

def test_controller_upgrade_section(gen):
    """upgrade: one row for the controller-upgrade run (its workload, change, rollout, lost requests,
    gate) and one per pod step."""
    md = gen.md("upgrade")
    assert "## Controller upgrade" in md
    rows = re.findall(r"^\| traefik( \[[^]]*\])? \| Deployment bench-traefik/traefik \| annotation \| left_rolled \| 1 \| 1 "
                      r"\| 4210.5 \| 37 \| connection 37 \| FAILED \|$", md, re.M)
    assert len(rows) == 1, md
    steps = re.findall(r"^\| traefik( \[[^]]*\])? \| (\d) \| ([\d.]+) \| ([\d.]+) \|$", md, re.M)
    assert [s[1:] for s in steps] == [("1", "3120.2", "2875.9")], md


# ---- backend-failover, from a summary written by hand in the runner's shape (no e2e run of it is kept
# yet): the dataplane-scale file's load with its section swapped for 3 flaps in mode errors, 37 503s
# over a budget of 20 ----

def test_backend_failover_section(gen):
    """failover: one row for the backend-failover run (mode, flaps, 503 time, lost requests, budget)."""
    md = gen.md("failover")
    assert "## Backend failover" in md
    rows = re.findall(r"^\| traefik( \[[^]]*\])? \| errors \| 3 \| 3004 \| 3101 \| n/a \| n/a \| 37 \| 12\.3 "
                      r"\| http_5xx 37 \| FAILED \(at most 20\) \|$", md, re.M)
    assert len(rows) == 1, md


# ---- long-lived, from a summary written by hand in the runner's shape: the backend-failover file's
# load (37 http_5xx) with a long_lived section: 6 streams broken by the path, 2 ended by the backend ----

def test_long_lived_section(gen):
    """longlived: one gate row for the run, one row per kind of stream (opened, broken by cause, lost)."""
    md = gen.md("longlived")
    assert "## Long-lived streams" in md
    gate = re.findall(r"^\| traefik( \[[^]]*\])? \| reload, backend, controller \| 6 \| 2 \| 2 \| 39 \| 37 \| FAILED \|$", md, re.M)
    assert len(gate) == 1, md
    kinds = re.findall(r"^\| traefik(?: \[[^]]*\])? \| (http|websocket|grpc) \| (\d+) \| (\d+) \| (\d+) \|", md, re.M)
    assert kinds == [("http", "5", "0", "1"), ("websocket", "10", "5", "0"), ("grpc", "7", "1", "1")], md


def test_long_lived_breaks_by_event(gen):
    """longlived: the attribution make results adds (in the file) gives the stream breaks' sentence in
    the section, and a stream breaks column in Errors by event, the errors' own figures unchanged."""
    md = gen.md("longlived")
    section = md.split("## Long-lived streams")[1].split("\n## ")[0]
    label = "traefik [constructed-long-lived]"
    assert (f"{label}: 62 % of stream breaks (5 of 8) within 7 s of a controller pod deletion. (Errors by event.)"
            in section), section
    assert f"{label}: 100 % of errors (37 of 37) within 7 s of a controller pod deletion." in section, section
    by_event = md.split("## Errors by event")[1].split("\n## ")[0]
    rows = re.findall(r"^\| traefik(?: \[[^]]*\])? \| 7 \| (\w+|no event) \| [^|]* \| (\d+) \|.*\| ([^|]*) \|$", by_event, re.M)
    assert ("controller_podkill", "37", "reset 5") in rows and ("stream_scale", "0", "backend_stop 2") in rows, rows
    assert ("no event", "0", "none") in rows, rows


# The experiments' gates: NAME's report fails the one run whose reasons start with PREFIX (its section's
# gate), and judges the steady run beside it by nothing of that section.
GATES = {
    "restart": "controller_restart.requests_lost = ",  # the zero-error gate
    "dpscale": "dataplane_scale.requests_lost = ",  # the zero-error gate
    "upgrade": "controller_upgrade.requests_lost = ",  # the zero-error gate
    "failover": "backend_failover.requests_lost = 37 > 20",  # its budget
    "longlived": "long_lived: 6 stream(s) broken by the path, 37 request(s) lost",  # streams and requests
}


@pytest.mark.parametrize("name", GATES)
def test_gated_run_fails(gen, name):
    runs = gen.json(name)["runs"]
    gated = [r for r in runs if any(s.startswith(GATES[name]) for s in r["reasons"])]
    assert len(gated) == 1 and gated[0]["verdict"] == "FAIL", runs


REPORT_DIRS = ["merged", "real", "comparable", "incomparable", "churn", "zero", "errors", "dropped", "paths", "routes",
               "restart", "dpscale", "upgrade", "failover", "longlived"]


@pytest.fixture
def report_dir(request, gen, name):
    """The report folder NAME: `results`' for merged, else the recipe's, written if still missing."""
    path = request.getfixturevalue("merged")[2] if name == "merged" else gen.dir(name)
    assert (path / "report.md").is_file(), f"no report in {path}: see its 'written' case"
    return path


@pytest.mark.parametrize("name", REPORT_DIRS)
def test_markdown_matches_json(report, report_dir, name):
    ok(report.script(CHECKS / "check_markdown.py", report_dir))


@pytest.mark.parametrize("name", REPORT_DIRS)
def test_renders_cleanly(report_dir, work, name):
    """HTML renders in chromium without console messages; screenshot taken."""
    problems = renders_cleanly(report_dir / "report.html", work / "screenshots" / f"{name}.png")
    assert not problems, "\n".join(problems)


# ---- budgets decide the verdict ----

def test_budget_p99_1us_fails(gen):
    r = gen.json("b1")["runs"][0]
    assert r["verdict"] == "FAIL" and r["reasons"][0].startswith("p99 = "), r


def test_budget_p99_10s_passes(gen):
    r = gen.json("b2")
    assert r["runs"][0]["verdict"] == "PASS" and r["budgets"] == ["p99=10s", "errors.http_5xx=0.1%"]


def test_budget_error_share(gen):
    """budget errors=0.01% passes 1 in 15000, fails 2 in 15000."""
    assert [x["verdict"] for x in gen.json("b3")["runs"]] == ["PASS", "FAIL", "PASS"]


# ---- time series unavailable ----

def test_no_prometheus(gen):
    assert "Time series unavailable: no --prometheus URL" in gen.md("incomparable")


def test_prometheus_down_named(gen, closed_port):
    assert f"Time series unavailable: cannot query Prometheus at http://127.0.0.1:{closed_port}" in gen.md("promdown")


def test_prometheus_without_testid(gen):
    assert "has no k6_http_reqs_total series with testid=run-1" in gen.md("notest")


# ---- bad input: exit 2 and a message naming the value and what is allowed ----

@pytest.fixture(scope="session")
def bad_inputs(work):
    traefik = (TD / "traefik.json").read_text()
    assert '"timeout": 0' in traefik and '"other": 0' in traefik
    (work / "bad-schema.json").write_text('{"schema": "bench.summary/v0", "testid": "x"}')
    (work / "bad-negative.json").write_text(traefik.replace('"timeout": 0', '"timeout": -3'))
    (work / "bad-class.json").write_text(traefik.replace('"other": 0', '"gremlins": 1'))
    return work


BAD_INPUT = {
    "wrong schema": (["{w}/bad-schema.json"], ["bench.summary/v0", 'expected "bench.summary/v1"']),
    "negative count": (["{w}/bad-negative.json"], ["errors.timeout=-3 is negative", ">= 0"]),
    "unknown error class": (["{w}/bad-class.json"], ["unknown class(es) gremlins", "allowed: connection, timeout"]),
    "missing file": (["{w}/missing.json"], ["{w}/missing.json: cannot read", "No such file"]),
    "unknown budget key": (["--budget", "p42=1ms", "{a}"], ["unknown key 'p42'", "allowed keys: p50"]),
    "budget not a duration": (["--budget", "p99=fast", "{a}"], ["'fast' is not a duration", "expected e.g. 100ms"]),
    "budget not a count": (["--budget", "errors=lots", "{a}"], ["'lots' is not a whole number", "percentage like 0.1%"]),
    "budget given twice": (["--budget", "errors=0", "--budget", "errors=1", "{a}"],
                           ["given more than once for errors", "give each key once"]),
    "Prometheus URL": (["--prometheus", "ftp://x", "{a}"], ["--prometheus 'ftp://x'", "expected an http(s) URL"]),
}


@pytest.mark.parametrize("case", BAD_INPUT)
def test_bad_input(report, bad_inputs, runs, work, case):
    args, wants = BAD_INPUT[case]
    fill = lambda s: s.format(w=work, a=runs["a"])  # noqa: E731
    r = report("--out", work / "out/bad", *map(fill, args))
    assert r.returncode == 2 and all(fill(w) in r.stderr for w in wants), \
        f"exit {r.returncode}, wanted 2 and {wants}; got:\n{r.stderr}"


# ---- matrix runner: argument checks (a cluster run is documented in dashboards/report/README.md) ----

MATRIX = {
    "no variant": ([], "give at least one variant NAME:SPEC"),
    "bad variant name": (["A B:x=1", "b:loadtest.rate=1"], "variant 'A B:x=1' is not NAME:SPEC"),
    "bad spec item": (["a:oops", "b:loadtest.rate=1"], "item 'oops' in variant spec 'oops' is neither"),
    "missing values file": (["a:nope.yaml", "b:loadtest.rate=1"],
                            "values file 'nope.yaml' (variant spec 'nope.yaml') does not exist"),
    "runId is the runner's": (["a:loadtest.runId=x", "b:loadtest.rate=1"], "sets loadtest.runId"),
    "bad release name": (["--release", "Bad_Name", "a:loadtest.rate=1", "b:loadtest.rate=2"],
                         "--release 'Bad_Name' is not a Helm release name"),
    "missing kubeconfig": (["--kubeconfig", "{w}/none", "a:loadtest.rate=1", "b:loadtest.rate=2"],
                           "--kubeconfig '{w}/none' does not exist"),
    "missing preset": (["-f", "{w}/none.yaml", "a:loadtest.rate=1", "b:loadtest.rate=2"],
                       "values file '{w}/none.yaml' (-f) does not exist"),
    "bad cool-down": (["--cooldown", "soon", "a:loadtest.rate=1", "b:loadtest.rate=2"],
                      "--cooldown 'soon' is not a whole number"),
    "installer not a program": (["--installer", "{w}/none", "a:loadtest.rate=1"],
                                "--installer '{w}/none' is not an executable file"),
    "zero repeats": (["--repeats", "0", "a:loadtest.rate=1", "b:loadtest.rate=2"],
                     "--repeats '0' is not a whole number from 1 to 20"),
    "too many repeats": (["--repeats", "21", "a:loadtest.rate=1", "b:loadtest.rate=2"],
                         "--repeats '21' is not a whole number from 1 to 20"),
    "repeats not a number": (["--repeats", "many", "a:loadtest.rate=1", "b:loadtest.rate=2"],
                             "--repeats 'many' is not a whole number from 1 to 20"),
}


@pytest.mark.parametrize("case", MATRIX)
def test_matrix_rejected(tmp_path, case):
    """dashboards/report/matrix.sh exits non-zero before touching any cluster, naming the problem."""
    args, want = MATRIX[case]
    (tmp_path / "matrix-values.yaml").write_text("loadtest:\n  rate: 100\n")
    fill = lambda s: s.format(w=tmp_path)  # noqa: E731
    r = run(["bash", ROOT / "dashboards/report/matrix.sh", "--values", tmp_path / "matrix-values.yaml",
             "--out", tmp_path / "m", *map(fill, args)])
    assert r.returncode != 0 and fill(want) in r.stderr, f"exit {r.returncode}, wanted [{fill(want)}]; got:\n{r.stderr}"


# ---- the checkers themselves can fail ----

def test_markdown_checker_catches(report, gen, out):
    """A changed number in the Markdown's 'none' row is caught."""
    shutil.copytree(gen.dir("real"), out / "tampered", dirs_exist_ok=True)
    md = out / "tampered/report.md"
    row = re.compile(r"^(\| none \| )[0-9]+( \| [0-9.]+ \|)", re.M)
    text = md.read_text()
    assert row.search(text), "no '| none | N | x |' row to change"
    md.write_text(row.sub(r"\g<1>999999\g<2>", text))
    r = report.script(CHECKS / "check_markdown.py", out / "tampered")
    assert r.returncode == 1, f"exit {r.returncode}, want 1:\n{r.stdout}"


def test_chromium_catches_console_error(gen, out, work):
    (out / "console/charts").mkdir(parents=True, exist_ok=True)
    for svg in (gen.dir("real") / "charts").glob("*.svg"):
        shutil.copy(svg, out / "console/charts")
    html = (gen.dir("real") / "report.html").read_text()
    (out / "console/report.html").write_text(html.replace("</body>", '<script>console.error("planted")</script></body>'))
    problems = renders_cleanly(out / "console/report.html", work / "screenshots/planted.png")
    assert any("CONSOLE" in p for p in problems), problems


def test_churn_attribution(gen, real_runs):
    """churn series: every error is attributed to a scale event or to none (the parts add up to the
    run's own error count), every scale mark is on the timeline, and the report says it."""
    a = gen.json("churn")["runs"][0]["attribution"]
    seen = gen.json("churn")["runs"][0]["scale_events_seen"]
    errors = int(real_runs["churn"].extra["export"]["metrics"]["bench_errors"]["count"])  # all from role=load VUs
    # emit.js also creates and changes routes: those are events of their own kinds
    assert a["events"]["scale"]["events"] == seen == sum(m["events"] for m in a["timeline"] if m["kind"] == "scale"), a
    assert {"route_change", "route_create"} <= set(a["events"]), a
    parts = sum(b["errors_total"] for b in a["events"].values()) + a["unattributed"]["errors_total"]
    assert parts == a["errors_total"] == errors > 0, (a, errors)
    md = gen.md("churn")
    # the sentence names the kind with most errors: which that is depends on when emit.js's errors
    # landed (route creations or scale steps, both within W on a loaded machine), so it is read from a
    top = max(a["events"], key=lambda kind: a["events"][kind]["errors_total"])
    assert "## Errors by event" in md and f"within {a['window_s']:g} s of {timeline.words(top)}." in md, md


def test_churn_merged_attribution(churn_merged, out):
    """make results' summary carries the same section (the contract test validates it)."""
    m = json.loads((out / "churn-merged/summary.json").read_text())
    a = m["attribution"]
    assert "scale" in a["events"] and a["window_s"] > 2 and a["errors_total"] == sum(m["errors"].values()), a
