"""bench's Grafana dashboards as code: panels.py (the panel builders and conventions), one module per
dashboard (run_overview.py, controllers.py, comparison.py), generate.py (writes dashboards/*.json),
queries.py (a dashboard's queries outside Grafana, through benchreport's Prometheus client) and
render.py (a dashboard drawn as SVG from those queries)."""
