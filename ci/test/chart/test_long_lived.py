"""long-lived's kinds per preset: charts/bench/README.md's table ("Long-lived streams") states what each
controller preset carries, and the presets (values/*.yaml, loadtest.longLived.kinds, else the chart's
default) must say the same. Values only; the routes each kind gets are the helm-unittest suite's
(charts/bench/tests/stream_test.yaml)."""
import re

import yaml

from conftest import CHART_SRC, ROOT

MARK = "<!-- long-lived kinds:"
ROW = re.compile(r"^\| `([a-z-]+)` \| ([a-z, ]+) \|")


def readme_kinds(text):
    """{preset: [kinds]} from the README table under MARK."""
    section = text[text.index(MARK):]
    section = section[:section.index("\n\n")]
    return {m.group(1): m.group(2).split(", ") for line in section.splitlines() if (m := ROW.match(line))}


def preset_kinds():
    """{preset: the kinds it runs}: its own loadtest.longLived.kinds, its base preset's for an overlay
    (traefik-gateway on traefik), else the chart's default."""
    default = yaml.safe_load((CHART_SRC / "values.yaml").read_text())["loadtest"]["longLived"]["kinds"]
    out = {}
    for path in sorted((ROOT / "values").glob("*.yaml")):
        values = yaml.safe_load(path.read_text())
        if "controller" not in values and path.stem != "traefik-gateway":
            continue  # experiment presets (static, published-30k) pick no controller
        base = yaml.safe_load((ROOT / "values" / "traefik.yaml").read_text()) if path.stem == "traefik-gateway" else {}
        own = (values.get("loadtest") or {}).get("longLived", {}).get("kinds")
        out[path.stem] = own or ((base.get("loadtest") or {}).get("longLived", {}).get("kinds")) or default
    return out


def differences(table, presets):
    return sorted(f"{name}: README says {table.get(name)}, the preset runs {kinds}"
                  for name, kinds in presets.items() if table.get(name) != kinds) + \
        sorted(f"{name}: in README's table, no such preset" for name in table if name not in presets)


def test_readme_states_each_presets_kinds():
    table = readme_kinds((CHART_SRC / "README.md").read_text())
    assert table, "no long-lived kinds table in charts/bench/README.md"
    assert differences(table, preset_kinds()) == []


def test_a_changed_preset_is_named():
    table = readme_kinds((CHART_SRC / "README.md").read_text())
    presets = preset_kinds()
    presets["nginx-inc"] = ["http", "websocket", "grpc"]
    assert differences(table, presets) == [
        "nginx-inc: README says ['http', 'websocket'], the preset runs ['http', 'websocket', 'grpc']"]
