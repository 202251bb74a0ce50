"""The end-to-end harness on the project's local cluster, in one language: stand up what the chart's
subcharts would bring (stack.py), install the chart from its offline copy (chart.py), follow a
TestRun and keep its evidence (testrun.py), and the commands `make demo`, the e2e test part and the
matrix runner use (__main__.py). The cluster itself and the images are built by their own tools
(ci/cluster, ci/images), run here as programs."""
