"""The mutants table (ci/tools/mutants.yaml) is well-formed and current, without running a mutant:
each original text still occurs exactly once in its file (a change to the code fails here, not
silently in `make mutants`), and ci/README's score was measured on this table's mutants."""
import copy
import json

import mutants  # ci/tools/mutants.py (pytest.ini's pythonpath)

from conftest import ROOT

TABLE = mutants.load()


def test_every_original_text_occurs_once_and_every_command_is_known():
    assert mutants.check(TABLE) == []


def test_a_rotten_or_ambiguous_original_is_named():
    """The check above can fail: an original the code no longer has, one it has twice, a Go mutant
    tested by a command that would rebuild k6, a kept mutant without its reason."""
    table = copy.deepcopy(TABLE)
    first, go = table["mutants"][0], next(m for m in table["mutants"] if m["edits"][0]["file"].endswith(".go"))
    first["edits"][0]["original"] += " and text the file does not have"
    go["tests"] = ["unit-js"]
    table["mutants"][1]["edits"][0]["original"] = "("
    table["mutants"][2]["kept"] = " "
    problems = "\n".join(mutants.check(table))
    assert f"mutant {first['id']}: its original text occurs 0 times" in problems, problems
    assert f"mutant {table['mutants'][1]['id']}: its original text occurs" in problems, problems
    assert f"mutant {go['id']}: a Go file is tested by go commands only" in problems, problems
    assert f"mutant {table['mutants'][2]['id']}: kept needs the reason" in problems, problems


def test_the_recorded_score_is_of_this_table():
    record = json.loads((ROOT / "ci" / "tools" / "mutants-record.json").read_text())
    ids = sorted(m["id"] for m in TABLE["mutants"])
    assert record["ids"] == ids, "the table's mutants changed since the recorded run: run `make mutants` and `make docs`"
    assert record["score_pct"] >= TABLE["minimum_score"], record
