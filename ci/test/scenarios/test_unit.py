"""scenarios/tests/unit.js, the lib unit tests k6 itself runs: one case per UNIT line it printed."""


def test_unit_case(unit, unit_case):
    why = unit["cases"][unit_case]
    assert why is None, f"UNIT FAIL {unit_case}: {why}"


def test_unit_tests_ran_and_k6_exit_status_agrees(unit):
    failed = [n for n, why in unit["cases"].items() if why is not None]
    assert len(unit["cases"]) - len(failed) > 50, f"fewer than 50 unit cases passed:\n{unit['output'][-3000:]}"
    assert (not failed and unit["rc"] == 0) or (failed and unit["rc"] != 0), f"{len(failed)} failed, k6 exit {unit['rc']}"
