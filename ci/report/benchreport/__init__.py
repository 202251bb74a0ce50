"""bench report generator (ci/report/report.sh)."""
