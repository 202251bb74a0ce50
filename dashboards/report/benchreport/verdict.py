"""Budgets (--budget KEY=VALUE), the verdict per run, and the comparability warnings."""

import json
import re
from dataclasses import dataclass

from .duration import DurationError, parse_duration
from .summary import CONVERGENCE_EVENTS, ERROR_CLASSES, PERCENTILES, RATE_HELD_SHARE

# Used when no --budget is given: no error of any class and p99.99 under 100 ms (a clean run of the
# published test), and a
# load generator that kept up (otherwise the latencies are the generator's, not the path's).
DEFAULT_BUDGETS = ["errors=0", "p99.99=100ms", "dropped_iterations=0"]
# Runs whose achieved rate is below this share of the target did not get the load they were asked for.
RATE_SHORTFALL = RATE_HELD_SHARE
# Settings that must match for two runs to be compared: load shape and payload.
COMPARABLE_SETTINGS = ["rate", "duration_s", "warmup_s", "path", "connections", "keepalive", "tls", "timeout_s",
                       "k6_version"]
# What a summary without the key meant: one written before warm-ups existed had none; one written
# before the k6 release was recorded ran on an older k6 than any runner that records it.
SETTING_WHEN_ABSENT = {"warmup_s": 0, "k6_version": "not recorded"}

LATENCY_BUDGET_KEYS = PERCENTILES + ["avg", "max"]
COUNT_BUDGET_KEYS = (["errors"] + [f"errors.{c}" for c in ERROR_CLASSES] + ["dropped_iterations"])
CONVERGENCE_BUDGET_KEYS = [f"convergence.{e}" for e in CONVERGENCE_EVENTS]
ALL_BUDGET_KEYS = LATENCY_BUDGET_KEYS + COUNT_BUDGET_KEYS + CONVERGENCE_BUDGET_KEYS


# The controller experiments' zero gates: (summary section, count, why a non-zero count fails the run).
ZERO_GATES = [
    ("controller_restart", "requests_lost", "zero-error gate"),
    ("controller_restart", "unrecovered", "a deleted controller pod was not replaced, or the path did not answer "
                                          "again, before the end"),
    ("dataplane_scale", "requests_lost", "zero-error gate"),
    ("dataplane_scale", "unready", "a scale step of the data plane was not Ready within its timeout"),
    ("controller_upgrade", "requests_lost", "zero-error gate"),
    ("controller_upgrade", "incomplete", "the controller's rollout was not complete within its timeout"),
]


class BudgetError(ValueError):
    """A --budget argument that cannot be parsed; the message names it and what is allowed."""


@dataclass
class Budget:
    key: str
    limit: float          # milliseconds, a count, or a fraction of requests (percent budgets)
    percent: bool = False
    text: str = ""

    def measure(self, run):
        """Returns the run's value for this budget (None when undefined, e.g. no requests)."""
        if self.key in LATENCY_BUDGET_KEYS:
            return run.latency_ms.get(self.key)
        if self.key.startswith("convergence."):
            return run.convergence_ms.get(self.key.split(".", 1)[1], {}).get("max")
        if self.key == "dropped_iterations":
            return run.requests.get("dropped_iterations") or 0
        count = run.total_errors if self.key == "errors" else run.errors[self.key.split(".", 1)[1]]
        if self.percent:
            # Same share as the errors table: of the requests sent (dropped iterations sent none).
            return count / run.total_requests if run.total_requests else None
        return count


def parse_budget(arg):
    """'p99.99=100ms' -> Budget. Latency and convergence take a duration (with its unit);
    counts take a whole number, error counts also a percentage of the requests ('0.1%')."""
    key, sep, value = arg.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or key not in ALL_BUDGET_KEYS:
        raise BudgetError(f"--budget {arg!r}: unknown key {key!r}; allowed keys: {', '.join(ALL_BUDGET_KEYS)}")
    if key in LATENCY_BUDGET_KEYS or key in CONVERGENCE_BUDGET_KEYS:
        try:
            ms = parse_duration(value, "ms")
        except DurationError:
            raise BudgetError(f"--budget {arg!r}: {value!r} is not a duration; expected e.g. 100ms, 0.5s, 250us "
                              "or 1m30s (a bare number has no unit)") from None
        return Budget(key, ms, text=arg)
    if key.startswith("errors") and value.endswith("%"):
        m = re.fullmatch(r"(\d+(?:\.\d+)?)%", value)
        if not m or float(m.group(1)) > 100:
            raise BudgetError(f"--budget {arg!r}: {value!r} is not a percentage from 0% to 100%")
        return Budget(key, float(m.group(1)) / 100, percent=True, text=arg)
    if not re.fullmatch(r"\d+", value):
        raise BudgetError(f"--budget {arg!r}: {value!r} is not a whole number"
                          + (" or a percentage like 0.1%" if key.startswith("errors") else ""))
    return Budget(key, int(value), text=arg)


def parse_budgets(args):
    budgets = [parse_budget(a) for a in (args or DEFAULT_BUDGETS)]
    keys = [b.key for b in budgets]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise BudgetError(f"--budget given more than once for {', '.join(dup)}; give each key once")
    return budgets


@dataclass
class Verdict:
    status: str       # PASS, FAIL or NO DATA
    reasons: list     # human-readable violations


def _fmt(b, v, percent_spec="g"):
    """A budget's limit or measured value with its unit: 15%, 100 ms or 3."""
    if b.percent:
        return format(v * 100, percent_spec) + "%"
    if b.key in LATENCY_BUDGET_KEYS or b.key in CONVERGENCE_BUDGET_KEYS:
        return f"{v:g} ms"
    return f"{v:g}"


def depends_on(budget):
    """The summary keys a budget's figure is made of (summary `incomplete` affects)."""
    if budget.key in LATENCY_BUDGET_KEYS:
        return {"latency_ms"}
    if budget.key in CONVERGENCE_BUDGET_KEYS:
        return {"convergence_ms"}
    if budget.key == "dropped_iterations":
        return {"dropped_iterations"}
    return {"errors", "requests"} if budget.percent else {"errors"}


def judge(run, budgets):
    """Every budget is a maximum: a run passes when each measured value is at most its limit.
    A run without a single request has no latency to judge and never passes. In a run that
    Prometheus did not hold whole (run.incomplete), a budget whose figure is affected is withheld,
    unless its count, which lost samples can only shorten, is already over the limit: the run is
    INCOMPLETE when nothing else fails it."""
    affected = set((run.incomplete or {}).get("affects") or [])
    if run.total_requests == 0 and not affected:
        return Verdict("NO DATA", ["no request completed (requests.total = 0)"])
    reasons, withheld = [], []
    for b in budgets:
        v = b.measure(run)
        if depends_on(b) & affected:
            lower_bound = b.key not in LATENCY_BUDGET_KEYS + CONVERGENCE_BUDGET_KEYS and not b.percent
            if lower_bound and v is not None and v > b.limit:
                reasons.append(f"{b.key} >= {_fmt(b, v, '.4g')} > {_fmt(b, b.limit)} (at least: samples are missing)")
            else:
                withheld.append(f"{b.key} withheld (budget {_fmt(b, b.limit)}): samples are missing")
            continue
        if v is None:
            if b.key.startswith("convergence."):
                continue  # no scale event of that kind in this run: nothing to judge
            reasons.append(f"{b.key} unknown (budget {_fmt(b, b.limit)})")
        elif v > b.limit:
            reasons.append(f"{b.key} = {_fmt(b, v, '.4g')} > {_fmt(b, b.limit)}")
    for kind, k in sorted((run.routes.get("by_kind") or {}).items()):
        # route-change passes only with zero non-2xx answers; a route that never served fails any route experiment
        if k.get("change_errors"):
            reasons.append(f"routes.{kind}.change_errors = {k['change_errors']:g} > 0")
        if k.get("unconverged"):
            reasons.append(f"routes.{kind}.unconverged = {k['unconverged']:g} > 0 (no 200 within the route timeout)")
    if "errors" in affected:
        # every gate below counts the load's failed requests: not judged on a short count
        if any(getattr(run, section) for section, _, _ in ZERO_GATES) or run.backend_failover or run.long_lived:
            withheld.append("the experiment's gate withheld: its error count is short (samples are missing)")
        return _incomplete_verdict(reasons, withheld)
    # the controller experiments pass only with zero lost requests and every pod or step back in time
    for section, key, why in ZERO_GATES:
        value = getattr(run, section).get(key)
        if value:
            reasons.append(f"{section}.{key} = {value:g} > 0 ({why})")
    # backend-failover's gate is a budget (0 in mode readiness): scenarios/lib/failover.js gateMaxErrors
    bf = run.backend_failover
    if bf and not (bf.get("gate") or {}).get("passed", True):
        reasons.append(f"backend_failover.requests_lost = {bf.get('requests_lost'):g} > {bf['gate'].get('max_errors'):g} "
                       f"(the flapping backend's error budget, mode {bf.get('mode') or 'unknown'})")
    # long-lived: no stream broken by the path and no failed request (scenarios/lib/long-lived-summary.js)
    ll = run.long_lived
    if ll and not (ll.get("gate") or {}).get("passed", True):
        reasons.append(f"long_lived: {ll.get('broken_by_path'):g} stream(s) broken by the path, "
                       f"{ll.get('requests_lost'):g} request(s) lost > 0 (zero downtime for streams and requests)")
    return _incomplete_verdict(reasons, withheld)


def _incomplete_verdict(reasons, withheld):
    """FAIL on any certain reason, else INCOMPLETE when a budget was withheld, else PASS."""
    if reasons:
        return Verdict("FAIL", reasons + withheld)
    return Verdict("INCOMPLETE", withheld) if withheld else Verdict("PASS", [])


def runner_warnings(run):
    """What the run's runner verdict (summary `runner`, scenarios/lib/lag.js) says of the runner's
    own waits: they are in its latencies, so the numbers are the runner's as much as the target's."""
    rn, out = run.runner, []
    if rn.get("cpu_bound"):
        lag = rn.get("lag_ms") or {}
        out.append(f"{run.label}: the k6 runner was CPU-bound (its sleeping lag probes woke {lag.get('p95')} ms late "
                   f"at p95, {lag.get('p99')} ms at p99); its latencies include its own wait for CPU")
    if rn.get("cpu_throttled"):
        share = (rn.get("cgroup_cpu") or {}).get("throttled_ratio")
        out.append(f"{run.label}: the k6 runner was CPU-throttled by its cgroup's CPU limit"
                   + (f" in {100 * share:.1f}% of the quota periods" if share is not None else "")
                   + "; its latencies include the time the kernel held it stopped")
    if rn.get("runtime_bound"):
        out.append(f"{run.label}: the k6 runner paused itself (Go scheduling latency or garbage collection above "
                   "their limits); those pauses are in its latencies")
    return out


def comparability_warnings(runs):
    """Reasons the runs (or one run alone) cannot be read at face value."""
    warnings = []
    for run in runs:
        dropped = run.requests.get("dropped_iterations") or 0
        if dropped:
            warnings.append(f"{run.label}: the load generator dropped {dropped:g} iterations; "
                            "the target rate was not held and latencies include generator queueing")
        target, achieved = run.requests.get("rate_target"), run.requests.get("rate_achieved")
        if target and achieved is not None and achieved < RATE_SHORTFALL * target:
            # k6 counts an iteration it could not start as dropped: with none, the runner sent the rate
            # and the requests were lost on their way into the figures
            warnings.append(f"{run.label}: achieved {achieved:g} req/s of the {target:g} req/s target "
                            f"(below {RATE_SHORTFALL:.0%})"
                            + ("" if dropped else ", with no iteration dropped: the target did not get the "
                                                  "load, or samples are missing"))
        for finding in [] if run.path_name else (run.incomplete or {}).get("findings") or []:
            warnings.append(f"{run.label}: incomplete: {finding}")
        if run.total_requests == 0:
            warnings.append(f"{run.label}: no request completed; nothing to compare")
        warnings += runner_warnings(run)
    if len(runs) > 1:
        for key in COMPARABLE_SETTINGS:
            values = {}
            for run in runs:
                value = run.settings.get(key)
                value = SETTING_WHEN_ABSENT.get(key) if value is None else value
                values.setdefault(json.dumps(value), []).append(run.label)
            if len(values) > 1:
                detail = "; ".join(f"{v} in {', '.join(labels)}" for v, labels in values.items())
                warnings.append(f"runs are not comparable: settings.{key} differs ({detail})")
    return warnings
