#!/usr/bin/env python3
"""scenarios/calibrate/measure.py [--k6-api ...] -- COMMAND ARGS...: benchcalibrate.measure, which runs
one load generator and measures its CPU and memory. The package sits beside this script, so a plain
python3 runs it (standard library only)."""
import sys

from benchcalibrate.measure import main

if __name__ == "__main__":
    sys.exit(main())
