"""bench report: summary.json files (+ Prometheus) -> report.html, report.md, report.json, charts/.
`results`: one run id + Prometheus -> the merged summary.json of all runners, then its report.
`rerun`: a merged summary -> the values file that runs it again. The command lines are cli.py's."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
