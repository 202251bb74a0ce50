"""The helm-unittest suites (charts/bench/tests/*_test.yaml), run once; each `it` is a case here.

helm-unittest runs every suite in one process and writes JUnit; each case below looks up its own
result there, so a test that went missing from the run fails instead of passing quietly.
"""
import os
import xml.etree.ElementTree as ET

import pytest
import yaml

from conftest import CHART_SRC, TOOLS, output_of, run


def unittest_cases():
    cases = []
    for path in sorted((CHART_SRC / "tests").glob("*_test.yaml")):
        suite = yaml.safe_load(path.read_text())
        for test in suite["tests"]:
            cases.append(pytest.param(suite["suite"], test["it"], id=f"{path.stem}: {test['it']}"))
    assert cases, f"no helm-unittest suites in {CHART_SRC / 'tests'}"
    return cases


@pytest.fixture(scope="session")
def unittest_results(chart, work):
    """{(suite, it): None when it passed, else the failure text} from one helm-unittest run."""
    junit = work / "helm-unittest.xml"
    result = run(["helm", "unittest", "--color=false", "--output-type", "JUnit", "--output-file", junit, chart],
                 env={**os.environ, "HELM_PLUGINS": str(TOOLS / "helm-plugins")})
    assert junit.exists(), f"helm unittest wrote no JUnit:\n{output_of(result)}"
    results = {}
    for suite in ET.parse(junit).getroot().iter("testsuite"):
        for case in suite.iter("testcase"):
            problems = [p for p in case if p.tag in ("failure", "error")]
            text = "\n".join(filter(None, ((p.get("message") or "") + "\n" + (p.text or "") for p in problems)))
            results[(suite.get("name"), case.get("name"))] = (text.strip() or "failed") if problems else None
    # a failure outside any test (a suite that does not load) fails every case, not none
    assert result.returncode == 0 or any(results.values()), f"helm unittest failed:\n{output_of(result)}"
    return results


@pytest.mark.parametrize("suite, it", unittest_cases())
def test_unittest(unittest_results, suite, it):
    assert (suite, it) in unittest_results, f"helm-unittest did not run '{suite}' / '{it}'"
    failure = unittest_results[(suite, it)]
    assert failure is None, failure
