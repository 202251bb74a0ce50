#!/usr/bin/env python3
"""Writes charts/bench/values.schema.json, and the list of keys in charts/bench/README.md ("Values
reference"), from charts/bench/values.yaml: each key's default and its comments are the one source of
the values surface (`make schema`).

Usage: ci/tools/values_schema.py --write    rewrite values.schema.json and README.md's key list
       ci/tools/values_schema.py --check    exit 1 (printing the differences) when either is stale
The chart part's test_values_schema.py runs the same check.

What a key's schema is made of (the syntax, for contributors, is also at the top of values.yaml):
- `type` from the default: a string, integer, number, boolean, mapping (object) or list (array);
- `description` from the key's `# --` comment (up to the key or to an annotation below it);
- a mapping default with keys: `properties`, one per key, described the same way, and
  `additionalProperties: false` (unknown keys are refused);
- the annotation: JSON Schema keywords in YAML, in the comment block above the key, either on one
  line, `# @schema {minimum: 1, maximum: 100}`, or between two `# @schema` lines. Its keywords replace
  the derived ones; its `properties` are added to the derived ones (keys without a default); a keyword
  set to null is left out (`type: null`: no type, e.g. an enum of strings and booleans); `$ref` alone
  also leaves the type to the definition. One keyword is the generator's own: `children: false`
  describes none of the default's keys (a Kubernetes object such as resources, a subchart's values,
  example entries).
- `<duration>` in a `pattern` stands for a k6 duration: the generator puts the pattern of
  scenarios/contract.json `durations` there (without its anchors), so every duration key of the chart
  accepts exactly what the scenarios and the report accept (ci/test/chart/test_durations.py).
- The root's annotation is the `# @schema` block of the file's first comment block (before the first
  blank line): `$schema`, `title`, `$defs`, `required`, keys without a default such as `global`.
Every annotation must sit above a key the schema describes, and every `required` name must be one of
its properties: the generator stops naming the line otherwise.
"""
import difflib
import json
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
VALUES = ROOT / "charts" / "bench" / "values.yaml"
# The grammar every duration key takes: the contract's pattern, its anchors left to the key's own.
DURATION = json.loads((ROOT / "scenarios" / "contract.json").read_text())["durations"]["pattern"][1:-1]
DURATION_MARK = "<duration>"
SCHEMA = ROOT / "charts" / "bench" / "values.schema.json"
README = ROOT / "charts" / "bench" / "README.md"
KEYS_BLOCK = re.compile(r"(<!-- BEGIN keys:[^\n]*-->\n)(.*?)(<!-- END keys -->)", re.S)
COMMAND = "make schema"
MARK = "@schema"
GENERATED = ("Generated from values.yaml (its defaults, `# --` comments and `# @schema` annotations) by "
             "ci/tools/values_schema.py: edit values.yaml, then run `make schema`.")
TYPES = {"bool": "boolean", "int": "integer", "float": "number", "str": "string", "map": "object", "seq": "array"}


class AnnotationError(ValueError):
    pass


def comment_text(line):
    """The text of a comment line without its indentation, `#` and one space."""
    text = line.strip()[1:]
    return text[1:] if text.startswith(" ") else text


def comment_block(lines, end):
    """The line numbers (0-based) of the comment lines right above line `end`, top first."""
    start = end
    while start > 0 and lines[start - 1].strip().startswith("#"):
        start -= 1
    return list(range(start, end))


def parse_block(lines, numbers):
    """(description or None, annotation dict, annotation line numbers) of one comment block. The
    description runs from `# --` to the block's end or its next annotation."""
    description, annotation, used, fence, in_description = None, {}, [], None, False
    for n in numbers:
        text = comment_text(lines[n])
        if fence is not None:
            used.append(n)
            if text.strip() == MARK:
                annotation.update(load_annotation("\n".join(comment_text(lines[m]) for m in fence[1:]), fence[0]))
                fence = None
            else:
                fence.append(n)
        elif text.strip() == MARK:
            used.append(n)
            fence, in_description = [n], False
        elif text.startswith(MARK + " "):
            used.append(n)
            annotation.update(load_annotation(text[len(MARK):], n))
            in_description = False
        elif text.startswith("--"):
            description, in_description = [text[2:].strip()], True
        elif in_description:
            description.append(text.strip())
    if fence is not None:
        raise AnnotationError(f"values.yaml:{fence[0] + 1}: `# {MARK}` block without its closing `# {MARK}` line")
    return (" ".join(part for part in description if part) if description else None), annotation, used


def load_annotation(text, line):
    try:
        annotation = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise AnnotationError(f"values.yaml:{line + 1}: the annotation is not YAML: {e}") from None
    if not isinstance(annotation, dict):
        raise AnnotationError(f"values.yaml:{line + 1}: an annotation is a mapping of JSON Schema keywords")
    return with_durations(annotation)


def with_durations(node):
    """node with the contract's duration pattern wherever a `pattern` says <duration>, at any depth."""
    if isinstance(node, dict):
        return {k: v.replace(DURATION_MARK, DURATION) if k == "pattern" and isinstance(v, str) else with_durations(v)
                for k, v in node.items()}
    if isinstance(node, list):
        return [with_durations(v) for v in node]
    return node


def type_of(node):
    """The JSON Schema type of a default, from the tag YAML resolved it to (None for null)."""
    return TYPES.get(node.tag.rsplit(":", 1)[-1])


class Generator:
    """One values.yaml text: the schema of its root and every key, and the annotation lines it used (an
    annotation it did not use is an error, never silently dropped)."""

    def __init__(self, text):
        self.lines = text.splitlines()
        self.used = set()

    def key_schema(self, key_node, value_node, path):
        """The schema of one key: derived from its default, its comment block and annotation."""
        description, annotation, used = parse_block(self.lines, comment_block(self.lines, key_node.start_mark.line))
        self.used.update(used)
        return self.build(value_node, description, annotation, path)

    def build(self, node, description, annotation, path):
        annotation = dict(annotation)
        describe_children = annotation.pop("children", True)
        derived = {}
        if "$ref" not in annotation and type_of(node):
            derived["type"] = type_of(node)
        if description:
            derived["description"] = description
        properties = {}
        if isinstance(node, yaml.MappingNode) and node.value and describe_children is not False:
            for key_node, value_node in node.value:
                properties[key_node.value] = self.key_schema(key_node, value_node, f"{path}.{key_node.value}")
            derived["additionalProperties"] = False
        for name, schema in annotation.pop("properties", {}).items():
            if name in properties:
                raise AnnotationError(f"{path}: the annotation describes {name!r}, which has a default: annotate it there")
            properties[name] = schema
        schema = {k: v for k, v in {**derived, **annotation}.items() if v is not None}
        if properties:
            # the keys first, then what happens to any other key: the order a reader asks in
            closed = schema.pop("additionalProperties", None)
            schema["properties"] = properties
            if closed is not None:
                schema["additionalProperties"] = closed
        missing = [name for name in schema.get("required", []) if name not in properties]
        if missing:
            raise AnnotationError(f"{path}: required names {missing}, which are not among its keys")
        return schema

    def root(self):
        node = yaml.compose("\n".join(self.lines))
        first_blank = next((n for n, line in enumerate(self.lines) if not line.strip()), len(self.lines))
        header = [n for n in range(first_blank) if self.lines[n].strip().startswith("#")]
        _, annotation, used = parse_block(self.lines, header)
        self.used.update(used)
        schema = self.build(node, None, annotation, "values.yaml")
        stray = [n + 1 for n, line in enumerate(self.lines)
                 if comment_text(line).startswith(MARK) and line.strip().startswith("#") and n not in self.used]
        if stray:
            raise AnnotationError(f"values.yaml lines {stray}: an annotation not above a key the schema describes "
                                  "(inside a `children: false` mapping, or separated from its key by a blank line)")
        first = {k: schema.pop(k) for k in ("$schema", "$comment", "title") if k in schema}
        return {**first, "$comment": GENERATED, **schema}


def generate(values_text):
    """values.schema.json's text for a values.yaml text."""
    return json.dumps(Generator(values_text).root(), indent=2, ensure_ascii=False) + "\n"


def key_path(name, schema):
    """`name`, `name.child` or `name.{a, b.{c, d}}`: a key and the keys its schema describes below it."""
    children = [key_path(child, sub) for child, sub in schema.get("properties", {}).items()]
    if not children:
        return name
    return f"{name}.{children[0]}" if len(children) == 1 else f"{name}.{{{', '.join(children)}}}"


def wrapped(items, head="-", width=110):
    """A list item of comma-separated code spans, broken between spans (never inside one)."""
    lines, line = [], head
    for n, item in enumerate(items):
        text = f" `{item}`" + ("," if n < len(items) - 1 else "")
        if len(line) + len(text) > width and line != head:
            lines.append(line)
            line = " "
        line += text
    return "\n".join(lines + [line])


def key_list(schema):
    """README.md's list: a mapping with several keys per item (`backend`: its keys), runs of other keys
    together, in values.yaml's order."""
    items, run = [], []
    for name, sub in schema["properties"].items():
        children = sub.get("properties", {})
        if len(children) > 1:
            if run:
                items.append(wrapped(run))
                run = []
            items.append(wrapped([key_path(child, s) for child, s in children.items()], f"- `{name}`:"))
        else:
            run.append(key_path(name, sub))
    if run:
        items.append(wrapped(run))
    return "\n".join(items) + "\n"


def readme(values_text, readme_text):
    """README.md's text with its key list as values_text generates it."""
    if not KEYS_BLOCK.search(readme_text):
        raise AnnotationError("charts/bench/README.md: no `<!-- BEGIN keys: ... -->` ... `<!-- END keys -->` block")
    keys = key_list(json.loads(generate(values_text)))
    return KEYS_BLOCK.sub(lambda m: m.group(1) + keys + m.group(3), readme_text, count=1)


def differences(name, committed, wanted):
    diff = difflib.unified_diff(committed.splitlines(), wanted.splitlines(), f"{name} (committed)", f"{name} (generated)",
                                lineterm="", n=1)
    return list(diff)[:40]


def drift(values_text, schema_text, readme_text=None):
    """'' when schema_text (and readme_text's key list, when given) are what values_text generates; else
    a message naming the command and the first differing lines."""
    stale = [("values.schema.json", schema_text, generate(values_text))]
    if readme_text is not None:
        stale.append(("README.md", readme_text, readme(values_text, readme_text)))
    stale = [(name, committed, wanted) for name, committed, wanted in stale if committed != wanted]
    if not stale:
        return ""
    names = " and ".join(f"charts/bench/{name}" for name, _, _ in stale)
    lines = [f"{names} differ{'s' if len(stale) == 1 else ''} from what charts/bench/values.yaml generates: run `{COMMAND}`"]
    for name, committed, wanted in stale:
        lines += differences(name, committed, wanted)
    return "\n".join(lines)


def main(argv):
    if argv not in (["--write"], ["--check"]):
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    values = VALUES.read_text()
    try:
        if argv == ["--write"]:
            SCHEMA.write_text(generate(values))
            README.write_text(readme(values, README.read_text()))
            return 0
        message = drift(values, SCHEMA.read_text(), README.read_text())
    except AnnotationError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if message:
        print(message)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
