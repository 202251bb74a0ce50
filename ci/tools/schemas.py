#!/usr/bin/env python3
"""Writes local JSON schemas for kubeconform (no network at test time).

- Kubernetes built-ins: the strict schemas shipped by PyPI kubernetes-validate refer to a shared
  /api/_definitions.json that kubeconform cannot follow; every top-level kind is written with its
  references inlined, as <out>/kubernetes/v<version>-standalone-strict/<kind>[-<group>]-<version>.json
  (kubeconform's default file naming).
- CRDs: each version's openAPIV3Schema becomes <out>/crds/<group>/<kind>_<version>.json, made strict
  (objects with properties reject unknown fields unless the CRD preserves unknown fields).
"""
import argparse
import copy
import json
import os
import sys

import kubernetes_validate
import yaml


def inline(node, defs, stack):
    """Returns node with every $ref replaced by its definition (recursive types stop at {})."""
    if isinstance(node, list):
        return [inline(item, defs, stack) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("$ref"), str):
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in stack:
            return {}
        resolved = inline(defs[name], defs, stack | {name})
        extra = {k: v for k, v in node.items() if k not in ("$ref", "description")}
        return {**resolved, **extra}
    return {key: inline(value, defs, stack) for key, value in node.items()}


def write_kubernetes(out, version):
    src = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema",
                       f"v{version}-local-strict")
    if not os.path.isdir(src):
        sys.exit(f"error: kubernetes-validate has no schemas for Kubernetes {version} ({src})")
    with open(os.path.join(src, "_definitions.json")) as f:
        defs = json.load(f)["$defs"]
    dst = os.path.join(out, "kubernetes", f"v{version}-standalone-strict")
    os.makedirs(dst, exist_ok=True)
    count = 0
    for name in sorted(os.listdir(src)):
        if name.startswith("_") or name == "all.json":
            continue
        with open(os.path.join(src, name)) as f:
            schema = json.load(f)
        kind = schema.get("properties", {}).get("kind", {})
        if "enum" not in kind:  # only top-level resources carry apiVersion/kind enums
            continue
        with open(os.path.join(dst, name), "w") as f:
            json.dump(inline(schema, defs, frozenset()), f)
        count += 1
    return count


def strict(node):
    """Rejects unknown fields where the CRD lists properties and does not preserve unknown ones.
    Walks schema keywords only, so a field named like a keyword is left alone."""
    if not isinstance(node, dict):
        return node
    node = dict(node)
    if isinstance(node.get("properties"), dict):
        node["properties"] = {name: strict(sub) for name, sub in node["properties"].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(node.get(key), dict):
            node[key] = strict(node[key])
    for key in ("allOf", "anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            node[key] = [strict(sub) for sub in node[key]]
    if node.pop("x-kubernetes-int-or-string", False):
        node.pop("type", None)
        node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.pop("nullable", False) and isinstance(node.get("type"), str):
        node["type"] = [node["type"], "null"]
    if ("properties" in node and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")):
        node["additionalProperties"] = False
    return node


def write_crd(out, path):
    with open(path) as f:
        crd = yaml.safe_load(f)
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    dst = os.path.join(out, "crds", group)
    os.makedirs(dst, exist_ok=True)
    written = []
    for version in crd["spec"]["versions"]:
        schema = strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))
        props = schema.setdefault("properties", {})
        props["apiVersion"] = {"type": "string", "enum": [f"{group}/{version['name']}"]}
        props["kind"] = {"type": "string", "enum": [kind]}
        props["metadata"] = {"type": "object"}
        name = f"{kind.lower()}_{version['name']}.json"
        with open(os.path.join(dst, name), "w") as f:
            json.dump(schema, f)
        written.append(f"{group}/{name}")
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--kube-version", required=True, help="e.g. 1.34.0")
    parser.add_argument("--crd", action="append", default=[], help="CRD YAML file (repeatable)")
    args = parser.parse_args()
    count = write_kubernetes(args.out, args.kube_version)
    crds = [name for path in args.crd for name in write_crd(args.out, path)]
    print(f"schemas: {count} Kubernetes kinds (v{args.kube_version}), CRDs: {', '.join(crds)}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
