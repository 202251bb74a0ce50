"""The calibration's analysis (scenarios/calibrate/run.sh runs it): measure.py runs one load generator
and measures its CPU and memory; report.py records each run and summarises them into the sizing table."""
