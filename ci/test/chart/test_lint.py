"""helm lint --strict of charts/bench with the runner image, alone and with every preset and overlay.

No `helm lint` of the repository root: lint does not render subchart templates, so it passed with
charts/bench's scenarios stripped (and without a runner image); test_root_chart.py renders it.
"""
import pytest

from conftest import output_of, render_cases

CASES = render_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lint(helm, case):
    if case.api_versions():
        pytest.skip(f"{case.name} needs API versions ({' '.join(case.api_versions())}) that helm lint "
                    "cannot take; test_render.py renders it with them")
    result = helm("lint", "--strict", helm.chart, *helm.values_args(case))
    assert result.returncode == 0, output_of(result)
