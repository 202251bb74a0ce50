#!/usr/bin/env python3
"""Reads the plan `k6 inspect --execution-requirements` prints, for scenarios/check.sh:
  describe PLAN                      one line: the scenarios (executor, start), VU ceiling, duration
  warmup PLAN CONTRACT               the warm-up scenario first, the measured load after it
  memory PLAN CONTRACT VALUES        the live heap at the VU ceiling against the default runner's GOMEMLIMIT
Prints one line; exits 1 when the check does not hold. Standard library, plus PyYAML for VALUES."""
import json
import re
import sys

UNITS = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "K": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12}


def read_plan(path):
    text = open(path, encoding="utf-8").read()
    return json.loads(text[text.index("{"):])


def describe(plan):
    parts = [f"{name} ({s.get('executor')}, from {s.get('startTime') or '0s'})"
             for name, s in sorted((plan.get("scenarios") or {}).items())]
    return f"{', '.join(parts) or 'no scenarios'}; at most {plan.get('maxVUs')} VUs; {plan.get('totalDuration')} in all"


def warmup(plan, contract):
    """The warm-up scenario (contract warmup.scenario) runs first, from 0 s, and every measured
    scenario starts when it ends, so the warm-up's requests stay out of every figure. The runner's
    lag sampler (tag role=lag) runs from the start by design."""
    spec = contract["warmup"]
    scenarios = plan.get("scenarios") or {}
    warm = scenarios.get(spec["scenario"])
    if warm is None:
        return False, f"BENCH_WARMUP=2s planned no '{spec['scenario']}' scenario and did not refuse the setting"
    if (warm.get("startTime") or "0s") != "0s":
        return False, f"the warm-up starts at {warm.get('startTime')}, not at 0s"
    measured = {n: s for n, s in scenarios.items() if n != spec["scenario"] and (s.get("tags") or {}).get("role") != "lag"}
    early = sorted(n for n, s in measured.items() if (s.get("startTime") or "0s") == "0s")
    if early:
        return False, f"scenarios start with the warm-up, not after it: {', '.join(early)}"
    after = ", ".join(f"{name} from {s['startTime']}" for name, s in sorted(measured.items()))
    return True, f"'{spec['scenario']}' from 0s, then {after}"


def quantity_bytes(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]i?)?", str(text))
    if not m:
        raise ValueError(f"not a memory quantity: {text!r}")
    return float(m[1]) * UNITS.get(m[2] or "", 1)


def memory(plan, contract, values_path):
    """The live heap the chart's sizing gives a runner at the plan's VU ceiling (baseMB + perVuMB x VUs,
    the heaviest shipped scenario's figure), against the default runner's GOMEMLIMIT."""
    import yaml  # the chart's values; only this check reads them

    sizing = contract["runnerMemory"]
    vus = int(plan.get("maxVUs") or 0)
    need_mb = sizing["baseMB"] + sizing["perVuMB"] * vus
    runner = yaml.safe_load(open(values_path, encoding="utf-8"))["loadtest"]["runner"]
    limit = quantity_bytes(runner["resources"]["limits"]["memory"])
    allowed_mb = limit * runner["gc"]["memoryLimitPercent"] / 100 / 1e6
    said = (f"about {need_mb:.0f} MB of live heap at {vus} VUs ({sizing['baseMB']} MB + {sizing['perVuMB']} MB a VU); "
            f"the default runner's GOMEMLIMIT is {allowed_mb:.0f} MB")
    if need_mb > allowed_mb:
        return False, (said + ": raise loadtest.runner.resources.limits.memory or split the run over more runners "
                       "(loadtest.parallelism), or lower the VU ceiling (loadtest.maxConnections)")
    return True, said


def main(argv):
    what, plan = argv[1], read_plan(argv[2])
    if what == "describe":
        print(describe(plan))
        return 0
    contract = json.load(open(argv[3], encoding="utf-8"))
    ok, said = warmup(plan, contract) if what == "warmup" else memory(plan, contract, argv[4])
    print(said)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
