#!/usr/bin/env python3
"""Writes or checks charts/bench/Chart.lock without downloading the dependencies.

`helm dependency update` cannot run here (no chart repositories reachable), so the lock is computed
the way helm does it: the digest is sha256 over the JSON of [Chart.yaml dependencies, lock entries]
(helm's internal/resolver.HashReq, field order of chart.Dependency, empty fields omitted). The
chart test confirms it with helm itself: `helm dependency build` passes the digest check and only
then fails on the unreachable repositories.
Usage: chart-lock.py CHART_DIR [--check]
"""
import datetime
import hashlib
import json
import os
import sys

import yaml

FIELDS = ["name", "version", "repository", "condition", "tags", "enabled", "import-values", "alias"]


def go_json(deps):
    """Serializes dependencies like Go's encoding/json for chart.Dependency."""
    out = []
    for dep in deps:
        item = {}
        for field in FIELDS:
            value = dep.get(field)
            if field in ("name", "repository"):
                item[field] = value or ""
            elif value:
                item[field] = value
        out.append(item)
    return out


def digest(req, lock):
    data = json.dumps([go_json(req), go_json(lock)], separators=(",", ":"), ensure_ascii=False)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return "sha256:" + hashlib.sha256(data.encode()).hexdigest()


def main():
    chart_dir = sys.argv[1]
    check = "--check" in sys.argv[2:]
    with open(os.path.join(chart_dir, "Chart.yaml")) as f:
        req = yaml.safe_load(f).get("dependencies") or []
    lock_deps = [{"name": d["name"], "repository": d["repository"], "version": d["version"]} for d in req]
    want = digest(req, lock_deps)
    path = os.path.join(chart_dir, "Chart.lock")
    if check:
        with open(path) as f:
            lock = yaml.safe_load(f)
        if lock.get("dependencies") != lock_deps:
            sys.exit(f"error: {path} dependencies differ from Chart.yaml: run ci/tools/chart-lock.py {chart_dir}")
        if lock.get("digest") != want:
            sys.exit(f"error: {path} digest {lock.get('digest')} != {want}: run ci/tools/chart-lock.py {chart_dir}")
        print(f"{path}: {len(lock_deps)} dependencies, digest {want}")
        return
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    with open(path, "w") as f:
        yaml.safe_dump({"dependencies": lock_deps, "digest": want, "generated": generated}, f, sort_keys=False)
    print(f"wrote {path} ({want})")


if __name__ == "__main__":
    main()
