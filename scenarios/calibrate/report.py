#!/usr/bin/env python3
"""scenarios/calibrate/report.py record|line|summary ...: benchcalibrate.report, which records and
summarises the calibration runs of run.sh. The package sits beside this script, so a plain python3
runs it (standard library only)."""
import sys

from benchcalibrate.report import main

if __name__ == "__main__":
    sys.exit(main())
