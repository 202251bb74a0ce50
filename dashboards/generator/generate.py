#!/usr/bin/env python3
"""dashboards/generator/generate.py [--check]: benchdashboards.generate, which writes dashboards/*.json.
The package sits beside this script, so a plain python3 runs it (standard library only)."""
import sys

from benchdashboards.generate import main

if __name__ == "__main__":
    sys.exit(main())
