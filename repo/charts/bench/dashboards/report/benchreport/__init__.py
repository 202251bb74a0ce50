"""bench report generator (dashboards/report/report.sh)."""
