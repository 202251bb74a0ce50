"""Reading bench.summary/v1 files (scenarios/interfaces.md) into Run objects, with clear errors."""

import json
import math
import pathlib
from dataclasses import dataclass, field

# The schema name, the percentiles and the error classes come from scenarios/contract.json, their
# one statement (the report runs from the repository, like results.py reading scenarios/lib/lag.js).
CONTRACT = json.loads((pathlib.Path(__file__).resolve().parents[3] / "scenarios" / "contract.json").read_text())
SCHEMA = CONTRACT["summarySchema"]["$id"]
# Percentile keys in table order, and the fraction each stands for (chart x positions).
PERCENTILES = [p["key"] for p in CONTRACT["percentiles"]["list"]]
PERCENTILE_FRACTIONS = {p: float(p[1:]) / 100 for p in PERCENTILES}
LATENCY_KEYS = ["min", "avg", "max"] + PERCENTILES
ERROR_CLASSES = list(CONTRACT["errorClasses"]["causes"])
# The share of the target rate a run must reach to have held it, and the runner verdicts' limits.
RATE_HELD_SHARE = CONTRACT["verdicts"]["rateHeldShare"]
RUNNER_LIMITS = CONTRACT["verdicts"]["runnerLag"]
CONVERGENCE_EVENTS = ["added", "removed"]


def prometheus_name(metric):
    """The Prometheus series name of k6 metric METRIC (scenarios/contract.json metrics)."""
    return next(m["prometheus"] for m in CONTRACT["metrics"]["list"] if m["name"] == metric)


CONVERGENCE_STATS = ["count", "p50", "max"]
# Settings shown first, in this order; any other key the summary carries follows.
# Top-level keys of bench.summary/v1; any other (e.g. a scenario's "throughput") is shown as extra.
KNOWN_KEYS = {"schema", "testid", "scenario", "controller", "settings", "requests", "latency_ms",
              "errors", "error_causes", "convergence_ms", "scale_events", "by_path", "runners", "routes",
              "controller_cost", "provenance", "controller_restart", "dataplane_scale",
              "controller_upgrade", "backend_failover", "attribution",
              # long-lived's streams; a merge that lacks part of the run, and the runner's end record
              "long_lived", "incomplete", "end_record"}
SETTINGS_ORDER = ["target_url", "path", "rate", "duration_s", "warmup_s", "connections", "timeout_s",
                  "keepalive", "tls", "churn_pattern"]


def _flat_settings(settings):
    """settings with nested objects (settings.environment: controller chart and version, replicas,
    placement) spread into "environment.<key>" entries: one row each in the settings table."""
    flat = {}
    for key, value in settings.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat


class SummaryError(ValueError):
    """A summary file that does not follow bench.summary/v1; the message names file and field."""


@dataclass
class Run:
    """One measured series: a whole run, or one path of a `paths` run (by_path)."""
    source: str
    testid: str
    scenario: str
    controller: str
    settings: dict
    requests: dict
    latency_ms: dict
    errors: dict
    convergence_ms: dict = field(default_factory=dict)
    # class -> cause -> count (scenarios/lib/errors.js ERROR_CAUSES); empty for older summaries.
    error_causes: dict = field(default_factory=dict)
    scale_events: int = 0
    path_name: str = ""
    label: str = ""
    extra: dict = field(default_factory=dict)
    # A merged run (results.py): one entry per k6 runner, and what the merge noted.
    runners: list = field(default_factory=list)
    merge_notes: list = field(default_factory=list)
    # The route experiments' results (summary `routes`: experiment, count, by_kind ...); whole runs only.
    routes: dict = field(default_factory=dict)
    # The runner's verdicts (summary `runner`: cpu_bound, runtime_bound, cpu_throttled, their figures).
    runner: dict = field(default_factory=dict)
    # A repeat of a series (summary `series`, the matrix runner's --repeats): its id and number.
    series_id: str = ""
    repeat: int = 0
    # What the controller spent (summary `controller_cost`, merged runs only): CPU-seconds, memory.
    controller_cost: dict = field(default_factory=dict)
    # What reruns it (summary `provenance`, make results with the release): chart, cluster, images.
    provenance: dict = field(default_factory=dict)
    # controller-restart's results (summary `controller_restart`: pods deleted, replaced and recovered
    # times, requests lost, the zero-error gate); whole runs only.
    controller_restart: dict = field(default_factory=dict)
    # dataplane-scale's results (summary `dataplane_scale`: per scale step of the data plane its
    # replicas, time to Ready and failed probes, requests lost, the zero-error gate); whole runs only.
    dataplane_scale: dict = field(default_factory=dict)
    # controller-upgrade's results (summary `controller_upgrade`: what changed, per pod its old
    # terminating and new Ready times, the rollout's time, requests lost, the zero-error gate).
    controller_upgrade: dict = field(default_factory=dict)
    # backend-failover's results (summary `backend_failover`: the flapping pod's flaps, its unhealthy
    # time and time to not Ready per flap, requests lost, the gate and its budget); whole runs only.
    backend_failover: dict = field(default_factory=dict)
    # long-lived's results (summary `long_lived`: per kind of stream, opened, broken by cause, open
    # errors, messages received and lost; requests lost; its gate); whole runs only.
    long_lived: dict = field(default_factory=dict)
    # Errors and latency outliers by the event they followed within W (summary `attribution`, make
    # results; benchreport.timeline); the report recomputes it when it has the run's Prometheus.
    attribution: dict = field(default_factory=dict)
    # How far a percentile may be off (merge.percentile_max_error_pct; 0 for a runner's exact summary).
    percentile_error_pct: float = 0.0
    # A merged run that Prometheus did not hold whole (summary `incomplete`: affects, findings,
    # runners); {} when complete. The verdicts that depend on an affected figure are withheld.
    incomplete: dict = field(default_factory=dict)

    @property
    def total_requests(self):
        return self.requests.get("total") or 0

    @property
    def total_errors(self):
        return sum(self.errors.get(c) or 0 for c in ERROR_CLASSES)


def _number(path, where, value, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        allowed = "a finite number" + (" or null" if allow_none else "")
        raise SummaryError(f"{path}: {where}={json.dumps(value)} is not {allowed}")
    if value < 0:
        raise SummaryError(f"{path}: {where}={value} is negative; expected a number >= 0")
    return value


def _object(path, where, value):
    if not isinstance(value, dict):
        raise SummaryError(f"{path}: {where} must be a JSON object, got {json.dumps(value)[:60]}")
    return value


def _read_requests(path, where, data):
    req = _object(path, where, data.get("requests"))
    out = {}
    for key in ("total", "rate_target", "rate_achieved", "dropped_iterations"):
        # by_path entries may leave out the run-wide rate and drop counters.
        optional = key != "total"
        if key not in req:
            if optional:
                out[key] = None
                continue
            raise SummaryError(f"{path}: {where}.{key} is missing")
        out[key] = _number(path, f"{where}.{key}", req[key], allow_none=optional)
    return out


def _read_latency(path, where, data):
    lat = _object(path, where, data.get("latency_ms"))
    # Zero requests leave every latency statistic undefined: null (or a missing key) is allowed.
    return {k: _number(path, f"{where}.{k}", lat.get(k), allow_none=True) for k in LATENCY_KEYS}


def _read_errors(path, where, data):
    errs = _object(path, where, data.get("errors"))
    unknown = sorted(set(errs) - set(ERROR_CLASSES))
    if unknown:
        raise SummaryError(f"{path}: {where} has unknown class(es) {', '.join(unknown)}; "
                           f"allowed: {', '.join(ERROR_CLASSES)}")
    return {c: _number(path, f"{where}.{c}", errs.get(c, 0)) for c in ERROR_CLASSES}


def _read_error_causes(path, data):
    """error_causes: {class: {cause: count}} under the six classes; optional (older summaries)."""
    causes = _object(path, "error_causes", data.get("error_causes") or {})
    unknown = sorted(set(causes) - set(ERROR_CLASSES))
    if unknown:
        raise SummaryError(f"{path}: error_causes has unknown class(es) {', '.join(unknown)}; "
                           f"allowed: {', '.join(ERROR_CLASSES)}")
    return {c: {k: _number(path, f"error_causes.{c}.{k}", v)
                for k, v in _object(path, f"error_causes.{c}", causes[c]).items()} for c in causes}


def _read_convergence(path, data):
    conv = data.get("convergence_ms") or {}
    _object(path, "convergence_ms", conv)
    out = {}
    for event in CONVERGENCE_EVENTS:
        stats = _object(path, f"convergence_ms.{event}", conv.get(event) or {})
        out[event] = {s: _number(path, f"convergence_ms.{event}.{s}", stats.get(s), allow_none=True)
                      for s in CONVERGENCE_STATS}
    return out


def _extra_keys(data):
    """Scalars under top-level keys the schema does not name, flattened to 'key.sub'."""
    out = {}
    for key in sorted(set(data) - KNOWN_KEYS):
        value = data[key]
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items() if not isinstance(v, (dict, list))})
        elif not isinstance(value, list):
            out[key] = value
    return out


def _read_runners(path, data):
    """runners of a merged summary (results.py): a list of objects with an instance_id."""
    runners = data.get("runners") or []
    if not isinstance(runners, list):
        raise SummaryError(f"{path}: runners must be a JSON list, got {json.dumps(runners)[:60]}")
    for i, r in enumerate(runners):
        _object(path, f"runners[{i}]", r)
        if not isinstance(r.get("instance_id"), str):
            raise SummaryError(f"{path}: runners[{i}].instance_id={json.dumps(r.get('instance_id'))}; expected a string")
        _number(path, f"runners[{i}].requests", r.get("requests"))
    return runners


def _read_routes(path, data):
    """routes of a route experiment (scenarios/lib/route-experiment.js): an object whose by_kind maps
    httproute / ingress to objects; {} when the run has none."""
    routes = data.get("routes")
    if routes is None:
        return {}
    _object(path, "routes", routes)
    for kind, entry in _object(path, "routes.by_kind", routes.get("by_kind") or {}).items():
        _object(path, f"routes.by_kind.{kind}", entry)
        for key in ("created", "serving", "unconverged"):
            _number(path, f"routes.by_kind.{kind}.{key}", entry.get(key))
    return routes


def _read_series(path, data):
    series = _object(path, "series", data.get("series") or {})
    if not series:
        return {}
    sid, repeat = series.get("id"), series.get("repeat")
    if not isinstance(sid, str) or not sid:
        raise SummaryError(f"{path}: series.id={json.dumps(sid)}; expected a non-empty string")
    if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 1:
        raise SummaryError(f"{path}: series.repeat={json.dumps(repeat)}; expected a whole number from 1")
    return {"series_id": sid, "repeat": repeat}


def _read_incomplete(path, data):
    """incomplete of a merged summary: {} when complete, else {affects, findings, runners} (lists)."""
    inc = data.get("incomplete")
    if inc is None:
        return {}
    _object(path, "incomplete", inc)
    for key in ("affects", "findings"):
        if not isinstance(inc.get(key), list) or not inc[key]:
            raise SummaryError(f"{path}: incomplete.{key}={json.dumps(inc.get(key))[:60]}; expected a non-empty list")
    return inc


def load_summary(path):
    """Returns the list of Runs in one summary file: the run itself, then one per by_path entry."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise SummaryError(f"{path}: cannot read: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise SummaryError(f"{path}: not JSON ({e.msg} at line {e.lineno} column {e.colno})") from e
    _object(path, "the document", data)
    if data.get("schema") != SCHEMA:
        raise SummaryError(f"{path}: schema={json.dumps(data.get('schema'))}; expected {json.dumps(SCHEMA)}")
    testid = data.get("testid")
    if not isinstance(testid, str) or not testid:
        raise SummaryError(f"{path}: testid={json.dumps(testid)}; expected a non-empty string")
    settings = _flat_settings(_object(path, "settings", data.get("settings")))
    base = dict(source=str(path), testid=testid, scenario=str(data.get("scenario") or ""),
                controller=str(data.get("controller") or ""), settings=settings)
    runs = [Run(**base, requests=_read_requests(path, "requests", data),
                latency_ms=_read_latency(path, "latency_ms", data),
                errors=_read_errors(path, "errors", data),
                error_causes=_read_error_causes(path, data),
                convergence_ms=_read_convergence(path, data),
                scale_events=_number(path, "scale_events", data.get("scale_events", 0)),
                extra=_extra_keys(data),
                runners=_read_runners(path, data),
                routes=_read_routes(path, data),
                runner=_object(path, "runner", data.get("runner") or {}),
                **_read_series(path, data),
                controller_cost=_object(path, "controller_cost", data.get("controller_cost") or {}),
                provenance=_object(path, "provenance", data.get("provenance") or {}),
                controller_restart=_object(path, "controller_restart", data.get("controller_restart") or {}),
                dataplane_scale=_object(path, "dataplane_scale", data.get("dataplane_scale") or {}),
                controller_upgrade=_object(path, "controller_upgrade", data.get("controller_upgrade") or {}),
                backend_failover=_object(path, "backend_failover", data.get("backend_failover") or {}),
                long_lived=_object(path, "long_lived", data.get("long_lived") or {}),
                attribution=_object(path, "attribution", data.get("attribution") or {}),
                percentile_error_pct=_number(path, "merge.percentile_max_error_pct",
                                             (data.get("merge") or {}).get("percentile_max_error_pct"),
                                             allow_none=True) or 0.0,
                merge_notes=[str(n) for n in (data.get("merge") or {}).get("notes") or []],
                incomplete=_read_incomplete(path, data))]
    by_path = _object(path, "by_path", data.get("by_path") or {})
    for name, entry in by_path.items():
        where = f"by_path.{name}"
        _object(path, where, entry)
        runs.append(Run(**base, path_name=name,
                        requests=_read_requests(path, f"{where}.requests", entry),
                        latency_ms=_read_latency(path, f"{where}.latency_ms", entry),
                        errors=_read_errors(path, f"{where}.errors", entry),
                        incomplete=_part_incomplete(runs[0].incomplete)))
    return runs


def _part_incomplete(whole):
    """A by_path part of an incomplete run: every figure of the part is short when by_path is (its
    series lack the same samples and no end-of-run record restores a part)."""
    if not whole or "by_path" not in whole["affects"]:
        return {}
    return dict(whole, affects=["requests", "errors", "dropped_iterations", "latency_ms"])


def label_runs(runs):
    """Gives every Run a short unique label: controller (or scenario), path, then the testid."""
    for run in runs:
        parts = [run.controller or run.scenario or "run"]
        if run.path_name:
            parts.append(run.path_name)
        run.label = " / ".join(parts)
    counts = {}
    for run in runs:
        counts[run.label] = counts.get(run.label, 0) + 1
    for run in runs:
        if counts[run.label] > 1:
            run.label = f"{run.label} [{run.testid}]"
    seen = {}
    for run in runs:  # the same file given twice: number the copies
        n = seen.get(run.label, 0) + 1
        seen[run.label] = n
        if n > 1:
            run.label = f"{run.label} #{n}"
    return runs
