"""charts/bench/values.schema.json and the key list of charts/bench/README.md ("Values reference") are
generated from charts/bench/values.yaml (ci/tools/values_schema.py, `make schema`): the committed copies
are what values.yaml generates, and the check fails naming the command on an edited annotation, comment,
default, schema or list; the generator's rules on a small file of its own; its refusals (an annotation
it would otherwise ignore, a required name that is no key)."""
import json
import shutil
import subprocess
import sys

import jsonschema
import pytest

import values_schema
from conftest import CHART_SRC, ROOT

VALUES = (CHART_SRC / "values.yaml").read_text()
SCHEMA = (CHART_SRC / "values.schema.json").read_text()
README = (CHART_SRC / "README.md").read_text()


def test_committed_schema_is_what_values_yaml_generates():
    message = values_schema.drift(VALUES, SCHEMA, README)
    assert message == "", message


def test_generated_schema_is_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA))


# Each edit of values.yaml changes the schema: the check must then name the command that regenerates it.
EDITS = {
    "annotation": ("# @schema {minimum: 1, maximum: 1000}\n  # -- Backend pods", "# @schema {minimum: 1, maximum: 999}\n  # -- Backend pods"),
    "description": ("# -- Backend pods (the published", "# -- Backend replicas (the published"),
    "default's type": ("  replicas: 5\n", "  replicas: \"5\"\n"),
    "new key": ("  replicas: 5\n", "  replicas: 5\n  # -- A key added without regenerating.\n  surge: 1\n"),
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_check_fails_naming_the_command_on_an_edited_values_yaml(edit):
    old, new = EDITS[edit]
    assert VALUES.count(old) == 1, old
    message = values_schema.drift(VALUES.replace(old, new), SCHEMA, README)
    assert message.startswith("charts/bench/values.schema.json") and "run `make schema`" in message, message


def test_check_fails_on_a_hand_edited_schema():
    edited = SCHEMA.replace('"minimum": 1,\n          "maximum": 1000\n', '"minimum": 1,\n          "maximum": 2000\n', 1)
    assert edited != SCHEMA  # backend.replicas' maximum, edited by hand
    message = values_schema.drift(VALUES, edited, README)
    assert "run `make schema`" in message and '"maximum": 2000' in message, message


def test_check_fails_on_a_hand_edited_key_list():
    assert README.count("`preStopSleepSeconds`, ") == 1
    message = values_schema.drift(VALUES, SCHEMA, README.replace("`preStopSleepSeconds`, ", ""))
    assert message.startswith("charts/bench/README.md differs") and "run `make schema`" in message, message


def test_new_key_reaches_the_key_list():
    message = values_schema.drift(VALUES.replace(*EDITS["new key"]), SCHEMA, README)
    assert message.startswith("charts/bench/values.schema.json and charts/bench/README.md differ"), message
    assert "`surge`" in message, message


def test_the_command_line_check_and_write(tmp_path):
    """--check exits 1 naming `make schema` on a stale copy, --write regenerates it, --check passes."""
    for name in ("ci/tools/values_schema.py", "charts/bench/values.yaml", "charts/bench/values.schema.json",
                 "charts/bench/README.md", "scenarios/contract.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    values = tmp_path / "charts/bench/values.yaml"
    values.write_text(values.read_text().replace(*EDITS["annotation"]))
    script = [sys.executable, tmp_path / "ci/tools/values_schema.py"]
    stale = subprocess.run([*script, "--check"], capture_output=True, text=True)
    assert stale.returncode == 1 and "run `make schema`" in stale.stdout, stale.stdout + stale.stderr
    assert subprocess.run([*script, "--write"]).returncode == 0
    assert json.loads((tmp_path / "charts/bench/values.schema.json").read_text())["properties"]["backend"]["properties"][
        "replicas"]["maximum"] == 999
    assert subprocess.run([*script, "--check"]).returncode == 0


# ---- the rules, on a small values file ----

SMALL = """\
# A header.
# @schema {title: small, properties: {global: {type: object}}, required: [flag]}

# -- Keep it: true, false or empty;
# empty = the scenario's.
# @schema {type: null, enum: [true, false, '']}
flag: ""
# @schema {required: [count]}
group:
  # -- How many.
  # @schema {minimum: 1}
  count: 2
  # Not a description: no `# --`.
  name: x
  labels: {}
# @schema {children: false}
resources:
  requests: {cpu: 1}
"""


def test_rules_on_a_small_file():
    assert json.loads(values_schema.generate(SMALL)) == {
        "title": "small", "$comment": values_schema.GENERATED, "type": "object",
        "properties": {
            "flag": {"description": "Keep it: true, false or empty; empty = the scenario's.", "enum": [True, False, ""]},
            "group": {"type": "object", "required": ["count"], "properties": {
                "count": {"type": "integer", "description": "How many.", "minimum": 1},
                "name": {"type": "string"},
                "labels": {"type": "object"}}, "additionalProperties": False},
            "resources": {"type": "object"},
            "global": {"type": "object"}},
        "additionalProperties": False, "required": ["flag"]}


def test_duration_mark_becomes_the_contracts_pattern_at_any_depth():
    text = ("# @schema {pattern: '^(<duration>)?$'}\nwait: ''\n"
            "# @schema {items: {properties: {hold: {pattern: '^[0-9]+:<duration>$'}}}}\nsteps: []\n")
    term = json.loads((ROOT / "scenarios/contract.json").read_text())["durations"]["pattern"][1:-1]
    properties = json.loads(values_schema.generate(text))["properties"]
    assert properties["wait"]["pattern"] == f"^({term})?$"
    assert properties["steps"]["items"]["properties"]["hold"]["pattern"] == f"^[0-9]+:{term}$"


REFUSED = {
    "annotation away from its key": (SMALL.replace("# @schema {children: false}\n", "# @schema {children: false}\n\n"),
                                     "values.yaml lines [16]: an annotation not above a key"),
    "annotation inside an undescribed mapping": (SMALL.replace("  requests:", "  # @schema {minimum: 1}\n  requests:"),
                                                 "values.yaml lines [18]: an annotation not above a key"),
    "required name that is no key": (SMALL.replace("required: [count]", "required: [cuont]"),
                                     "values.yaml.group: required names ['cuont'], which are not among its keys"),
    "unclosed block": (SMALL.replace("# @schema {minimum: 1}", "# @schema\n  # minimum: 1"),
                       "values.yaml:11: `# @schema` block without its closing"),
    "properties for a key with a default": (SMALL.replace("{required: [count]}", "{required: [count], properties: {name: {}}}"),
                                            "values.yaml.group: the annotation describes 'name', which has a default"),
}


@pytest.mark.parametrize("case", REFUSED, ids=list(REFUSED))
def test_generator_refuses_an_annotation_it_cannot_place(case):
    text, message = REFUSED[case]
    with pytest.raises(values_schema.AnnotationError) as refused:
        values_schema.generate(text)
    assert message in str(refused.value)
