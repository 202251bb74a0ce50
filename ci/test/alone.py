"""Runs a random sample of the pytest parts' tests one at a time, each in a pytest process of its own.

A test that passes in the whole part but reads what an earlier test wrote (a report, a file, a
server's state) fails here. The sample is seeded and the seed printed, so a failure is reproduced
with the same seed; a new seed each run covers the suite over time. Closes like a part:
"alone: N passed, N failed".

Usage: python ci/test/alone.py [--seed N] [--count N] [--timeout S] PART...
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def collect(part):
    """The node ids of ci/test/PART/, as pytest collects them (parametrized cases one by one)."""
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-qq", "-p", "no:cacheprovider", part],
                       cwd=HERE, capture_output=True, text=True)
    ids = [line for line in r.stdout.splitlines() if "::" in line and not line.startswith(" ")]
    if r.returncode != 0 or not ids:
        sys.exit(f"alone: cannot collect the tests of {part} (exit {r.returncode}):\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return ids


def draw(ids_by_part, count, rng):
    """COUNT tests, the parts in turn (each part's share the same however many cases it has), no test twice."""
    pools = {part: sorted(ids) for part, ids in ids_by_part.items()}
    picked = []
    while len(picked) < count and any(pools.values()):
        for part in sorted(pools):
            if pools[part] and len(picked) < count:
                picked.append(pools[part].pop(rng.randrange(len(pools[part]))))
    return picked


def run_alone(node_id, timeout):
    """pytest NODE_ID in a process and a temporary folder of its own; returns (passed, seconds, output)."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-alone.") as tmp:
        # a session of its own: on a timeout the servers its fixtures started go with it
        p = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--basetemp",
                              f"{tmp}/pytest", node_id], cwd=HERE, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            out = p.communicate(timeout=timeout)[0]
            passed = p.returncode == 0
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            passed, out = False, f"timed out after {timeout} s\n{p.communicate()[0]}"
    return passed, time.monotonic() - t0, out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("parts", nargs="+", help="folders of ci/test to draw from, e.g. chart report")
    p.add_argument("--seed", type=int, default=int(os.environ.get("BENCH_TEST_ALONE_SEED") or time.time_ns() % 10**9))
    p.add_argument("--count", type=int, default=int(os.environ.get("BENCH_TEST_ALONE_COUNT") or 4))
    p.add_argument("--timeout", type=int, default=600, help="seconds one test may take, its fixtures included")
    args = p.parse_args(argv)
    print(f"alone: seed {args.seed} (BENCH_TEST_ALONE_SEED={args.seed} draws the same tests), {args.count} tests "
          f"from {' '.join(args.parts)}", flush=True)
    picked = draw({part: collect(part) for part in args.parts}, args.count, random.Random(args.seed))
    failed = []
    for node_id in picked:
        passed, seconds, out = run_alone(node_id, args.timeout)
        print(f"{'PASSED' if passed else 'FAILED'} alone in {seconds:.0f} s: {node_id}", flush=True)
        if not passed:
            failed.append(node_id)
            print(out[-6000:], flush=True)
    print(f"alone: {len(picked) - len(failed)} passed, {len(failed)} failed (seed {args.seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
