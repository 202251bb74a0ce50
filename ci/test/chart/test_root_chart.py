"""The repository root is a chart whose only dependency is charts/bench: rendering it (lint does not
render subchart templates) gives the same objects as charts/bench with the same values nested under
`bench:`. The root .helmignore anchors its patterns: an unanchored scenarios/ would also strip
charts/bench/scenarios."""
import copy
import re

import yaml

from conftest import RUNNER_VALUES, Case, kinds_and_names

TRAEFIK = Case("values/traefik", ("values/traefik.yaml",))


def merge(into, values):
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value
    return into


def test_root_renders_like_charts_bench(helm, offline_copy, work):
    values = merge(copy.deepcopy(RUNNER_VALUES), yaml.safe_load((offline_copy / "values" / "traefik.yaml").read_text()))
    nested = work / "root-values.yaml"
    nested.write_text(yaml.safe_dump({"bench": values}))
    root = helm.template("-f", nested, chart=offline_copy)
    assert root.returncode == 0, root.stderr
    assert re.search(r"(?m)^kind: TestRun$", root.stdout), "no TestRun from the root"
    assert kinds_and_names(root.stdout) == kinds_and_names(helm.rendered(TRAEFIK).stdout)
