"""Checks a merged summary's by_path and max_rps (benchreport results) against the runners' own.

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


def main(merged_path, runner_paths):
    merged = json.load(open(merged_path))
    runners = [json.load(open(p)) for p in runner_paths]
    if any(r.get("max_rps") for r in runners):
        check_max_rps(merged, runners)
    if any(r.get("by_path") for r in runners):
        check_by_path(merged, runners)
    if not any(r.get("max_rps") or r.get("by_path") for r in runners):
        check("the runners have parts or steps", False)
    return 1 if checklog.failures else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
