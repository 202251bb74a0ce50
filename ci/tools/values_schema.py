#!/usr/bin/env python3
"""Writes charts/bench/values.schema.json from charts/bench/values.yaml: each key's default and its
comments are the one source of the values surface (`make schema`).

Usage: ci/tools/values_schema.py --write    rewrite values.schema.json
       ci/tools/values_schema.py --check    exit 1 (printing the difference) when it is stale
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
- The root's annotation is the `# @schema` block of the file's first comment block (before the first
  blank line): `$schema`, `title`, `$defs`, `required`, keys without a default such as `global`.
Every annotation must sit above a key the schema describes, and every `required` name must be one of
its properties: the generator stops naming the line otherwise.
"""
import difflib
import json
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
VALUES = ROOT / "charts" / "bench" / "values.yaml"
SCHEMA = ROOT / "charts" / "bench" / "values.schema.json"
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
    return annotation


def type_of(node):
    """The JSON Schema type of a default, from the tag YAML resolved it to (None for null)."""
    return TYPES.get(node.tag.rsplit(":", 1)[-1])


class Generator:
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
            schema = {**{k: v for k, v in schema.items() if k != "additionalProperties"}, "properties": properties,
                      **({"additionalProperties": schema["additionalProperties"]} if "additionalProperties" in schema else {})}
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


def drift(values_text, schema_text):
    """'' when schema_text is what values_text generates; else a message naming the command and the first
    differing lines."""
    wanted = generate(values_text)
    if wanted == schema_text:
        return ""
    diff = list(difflib.unified_diff(schema_text.splitlines(), wanted.splitlines(), "values.schema.json (committed)",
                                     "values.schema.json (generated)", lineterm="", n=1))
    return (f"charts/bench/values.schema.json differs from what charts/bench/values.yaml generates: run `{COMMAND}`\n"
            + "\n".join(diff[:40]))


def main(argv):
    if argv not in (["--write"], ["--check"]):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        if argv == ["--write"]:
            SCHEMA.write_text(generate(VALUES.read_text()))
            return 0
        message = drift(VALUES.read_text(), SCHEMA.read_text())
    except AnnotationError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if message:
        print(message)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
