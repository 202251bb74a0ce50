"""Checks a merged summary's by_path, max_rps and calibrate (benchreport results) against the runners' own.

Usage: python check_parts.py MERGED_SUMMARY RUNNER_SUMMARY...
Each runner judged its own share of every part and step; the merge rebuilds the whole run from
Prometheus with the rate and length the parts' k6 scenario tags name (scenarios/lib/load.js
baseOptions). Prints one line per check, exit 1 if any fails.
"""

import json
import sys

import checklog
from checklog import SCHEMA3_RATIO, check


def near(a, b, rel):
    return a is not None and b is not None and abs(a - b) <= rel * max(abs(b), 1)


def near_budget(p99_ms, budget_ms):
    return p99_ms is not None and budget_ms / SCHEMA3_RATIO <= p99_ms <= budget_ms * SCHEMA3_RATIO


def check_by_path(merged, runners):
    names = sorted(merged["by_path"])
    check("by_path: the runners' parts", names and all(sorted(r["by_path"]) == names for r in runners),
          f"merged {names}, runners {[sorted(r['by_path']) for r in runners]}")
    for name in names:
        m = merged["by_path"][name]["requests"]
        own = [r["by_path"][name]["requests"] for r in runners if name in r["by_path"]]
        total = sum(o["total"] for o in own)
        # the last remote-write push of a runner may be a little late: 1%
        check(f"by_path {name}: requests = sum of the runners'", near(m["total"], total, 0.01),
              f"merged {m['total']}, runners {total}")
        check(f"by_path {name}: rate target = sum of the runners' shares",
              near(m["rate_target"], sum(o["rate_target"] for o in own), 0.001),
              f"merged {m['rate_target']}, runners {[o['rate_target'] for o in own]}")
        check(f"by_path {name}: dropped = sum of the runners'",
              m["dropped_iterations"] == sum(o["dropped_iterations"] for o in own))


def check_max_rps(merged, runners):
    mr = merged.get("max_rps")
    check("max_rps: present", mr is not None)
    if mr is None:
        return
    own_steps = [r["max_rps"]["steps"] for r in runners]
    targets = [s["rate_target"] for s in mr["steps"]]
    check("max_rps: every step, at the whole run's rate",
          all([s["rate_target_run"] for s in steps] == targets for steps in own_steps),
          f"merged {targets}, runners {[[s['rate_target_run'] for s in steps] for steps in own_steps]}")
    check("max_rps: the runners' budget", all(r["max_rps"]["budget"] == mr["budget"] for r in runners),
          f"merged {mr['budget']}")
    for i, step in enumerate(mr["steps"]):
        achieved = sum(steps[i]["rate_achieved"] for steps in own_steps if i < len(steps))
        check(f"max_rps step {step['rate_target']:g}: achieved = sum of the runners'",
              near(step["rate_achieved"], achieved, 0.02), f"merged {step['rate_achieved']}, runners {achieved}")
    # Where every runner held its share (or every runner failed it), the whole step agrees, unless a
    # runner's p99 is within one histogram bucket of the budget: the merged p99 is an estimate from
    # Prometheus' native histograms, exact to a bucket (a busy machine puts p99s there).
    agree = [i for i in range(len(mr["steps"])) if len({steps[i]["ok"] for steps in own_steps}) == 1
             and not any(near_budget(steps[i]["p99_ms"], mr["budget"]["p99_ms"]) for steps in own_steps)]
    check("max_rps: a step is held where every runner held its share, failed where every runner failed",
          all(mr["steps"][i]["ok"] == own_steps[0][i]["ok"] for i in agree),
          f"merged {[s['ok'] for s in mr['steps']]}, runners {[[s['ok'] for s in steps] for steps in own_steps]}; "
          f"merged steps {mr['steps']}")
    held = [s["rate_target"] for s in mr["steps"] if s["ok"]]
    check("max_rps: the knee is the highest held step", mr["knee_rate"] == (max(held) if held else None) and held,
          f"knee {mr['knee_rate']}, held {held}")


# Prometheus' lag histogram (schema 3) places a quantile within a bucket 2^(1/8) wide, and a 1 s
# step gives a runner only about 40 lag samples: k6's p99 interpolates between the two highest
# (0.61 of the way up), Prometheus' lies in the highest one's bucket, so it may read up to
# 1.09 / 0.61 (about 1.8) times k6's. A runner whose own lag lies that close to a limit may be
# judged either way by the merge.
BUCKET = 2 ** (1 / 8)
P99_FEW_SAMPLES = 2


def near_lag_limit(step, calibrate):
    for key, limit, below in (("lag_p95_ms", calibrate["lag_limit_ms"], BUCKET),
                              ("lag_p99_ms", calibrate["lag_limit_p99_ms"], P99_FEW_SAMPLES)):
        v = step.get(key)
        if v is not None and limit / below <= v <= limit * BUCKET:
            return True
    return False


def check_calibrate(merged, runners):
    c = merged.get("calibrate")
    check("calibrate: present", c is not None)
    if c is None:
        return
    own = [r["calibrate"] for r in runners]
    targets = [s["rate_target"] for s in c["steps"]]
    check("calibrate: every step, at the whole run's rate",
          all([s["rate_target_run"] for s in o["steps"]] == targets for o in own),
          f"merged {targets}, runners {[[s['rate_target_run'] for s in o['steps']] for o in own]}")
    for i, step in enumerate(c["steps"]):
        achieved = sum(o["steps"][i]["rate_achieved"] for o in own if i < len(o["steps"]))
        check(f"calibrate step {step['rate_target']:g}: achieved = sum of the runners'",
              near(step["rate_achieved"], achieved, 0.02), f"merged {step['rate_achieved']}, runners {achieved}")
        dropped = sum(o["steps"][i]["dropped_iterations"] for o in own if i < len(o["steps"]))
        check(f"calibrate step {step['rate_target']:g}: dropped = sum of the runners'",
              step["dropped_iterations"] == dropped, f"merged {step['dropped_iterations']}, runners {dropped}")
    # Where every runner held its share (or every runner failed it) the whole step agrees, unless a
    # runner's lag is within one histogram bucket of a limit.
    agree = [i for i in range(len(c["steps"])) if len({o["steps"][i]["ok"] for o in own}) == 1
             and not any(near_lag_limit(o["steps"][i], o) for o in own)]
    check(f"calibrate: a step is held where every runner held its share, failed where every runner failed ({len(agree)} steps)",
          agree and all(c["steps"][i]["ok"] == own[0]["steps"][i]["ok"] for i in agree),
          f"merged {[s['ok'] for s in c['steps']]}, runners {[[s['ok'] for s in o['steps']] for o in own]}")
    held = [s["rate_target"] for s in c["steps"] if s["ok"]]
    check("calibrate: the ceiling is the highest held step, and its share per runner",
          held and c["ceiling_rate"] == max(held) and c["runners"] == len(runners)
          and near(c["ceiling_rate_per_runner"], c["ceiling_rate"] / len(runners), 0.001),
          f"ceiling {c['ceiling_rate']} ({c.get('ceiling_rate_per_runner')} per runner of {c.get('runners')}), held {held}")


def main(merged_path, runner_paths):
    merged = json.load(open(merged_path))
    runners = [json.load(open(p)) for p in runner_paths]
    if any(r.get("max_rps") for r in runners):
        check_max_rps(merged, runners)
    if any(r.get("calibrate") for r in runners):
        check_calibrate(merged, runners)
    if any(r.get("by_path") for r in runners):
        check_by_path(merged, runners)
    if not any(r.get("max_rps") or r.get("calibrate") or r.get("by_path") for r in runners):
        check("the runners have parts or steps", False)
    return 1 if checklog.failures else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
