"""Every preset: what the uninstall hook deletes is what charts/bench/README.md "Uninstall" says.

The README's table "the pre-delete hook deletes" is the one statement of what bench removes beyond
the release's own objects (certificate Secrets the subcharts' Jobs wrote, hook objects without a
delete policy, `helm test` pods, the kubelet Service, the Gateway deleted while its controller
runs). Each preset is rendered offline (helm v3 and v4) and the pre-delete hook's Roles, its list
of leftovers and its Gateway step are held against the table rows for that preset, in both
directions: a name the README promises must be deletable, and the hook may delete nothing the
README does not list. The second table ("stays after `helm uninstall`") must name every preset too.
"""
import re

import pytest
import yaml

from conftest import NAMESPACE, RELEASE, ROOT, load_docs, render_cases

README = ROOT / "charts" / "bench" / "README.md"
HOOK = f"{RELEASE}-loadtest-cleanup"
PRESETS = sorted(p.stem for p in (ROOT / "values").glob("*.yaml"))
CASES = [c for c in render_cases() if c.name.startswith("values/")]
# `kube-system: services/name` or `secrets/name` in a table cell
ENTRY = re.compile(r"`(?:([a-z0-9-]+): )?([a-z]+)/([a-z0-9<>.-]+)`")


def uninstall_section():
    text = README.read_text()
    start = text.index("\n### Uninstall\n")
    end = text.index("\n### ", start + 1)
    return text[start:end]


def table(header_start):
    """Rows (lists of cells) of the table in the Uninstall section whose header begins with
    header_start; cells split on unescaped pipes."""
    lines = [l.strip() for l in uninstall_section().splitlines()]
    starts = [i for i, l in enumerate(lines) if l.startswith(header_start)]
    assert len(starts) == 1, f"README Uninstall: {len(starts)} tables start with {header_start!r}"
    rows = []
    for line in lines[starts[0] + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))])
    assert rows, f"README Uninstall: the table {header_start!r} has no rows"
    return rows


def presets_of(cell):
    """The presets a row's first cell names: a comma-separated list, or "every preset" (all)."""
    if cell.startswith("every preset"):
        return set(PRESETS)
    return {p.strip() for p in cell.split(",")}


def target_of(case):
    target = "clusterip"  # values.yaml's loadtest.target
    for f in case.files:
        target = ((yaml.safe_load((ROOT / f).read_text()) or {}).get("loadtest") or {}).get("target", target)
    return target


def promised(case):
    """{(namespace, resource, name)} the README says the hook deletes for this case's presets."""
    presets = {f.rsplit("/", 1)[-1].removesuffix(".yaml") for f in case.files}
    out = set()
    for row in table("| preset | the pre-delete hook deletes"):
        if presets & presets_of(row[0]):
            for ns, resource, name in ENTRY.findall(row[1]):
                out.add((ns or NAMESPACE, resource, name.replace("<target>", target_of(case))))
    return out


def hook_docs(docs):
    return [d for d in docs if (d["metadata"].get("annotations") or {}).get("helm.sh/hook") == "pre-delete"]


def granted(docs):
    """{(namespace, resource, name)} the hook's Roles allow deleting by name."""
    out = set()
    for d in hook_docs(docs):
        if d["kind"] != "Role":
            continue
        for rule in d["rules"]:
            if "delete" in rule["verbs"]:
                for resource in rule["resources"]:
                    out |= {(d["metadata"]["namespace"], resource, n) for n in rule.get("resourceNames") or []}
    return out


def scripted(docs):
    """{(namespace, resource, name)} the hook's Job will delete by name: leftovers.txt and the Gateway."""
    out = set()
    for d in hook_docs(docs):
        if d["kind"] == "ConfigMap":
            for line in (d["data"].get("leftovers.txt") or "").splitlines():
                path, name = line.split()
                ns, resource = re.fullmatch(r"/apis?/.*/namespaces/([^/]+)/([^/]+)", path).groups()
                out.add((ns, resource, name))
        if d["kind"] == "Job":
            env = {e["name"]: e.get("value") for e in d["spec"]["template"]["spec"]["containers"][0]["env"]}
            if env.get("GATEWAY_NAME"):
                out.add((env["GATEWAY_NAMESPACE"], "gateways", env["GATEWAY_NAME"]))
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_hook_deletes_what_the_readme_lists(helm, case):
    docs = load_docs(helm.rendered(case).stdout)
    readme, roles, job = promised(case), granted(docs), scripted(docs)
    assert readme, f"{case.name}: the README promises nothing for it (every preset has the helm test pod)"
    assert readme <= roles, f"{case.name}: the README lists, the hook's Roles cannot delete: {sorted(readme - roles)}"
    assert roles <= readme, f"{case.name}: the hook's Roles may delete, the README does not list: {sorted(roles - readme)}"
    assert job == readme, f"{case.name}: the hook's Job deletes {sorted(job)}, the README lists {sorted(readme)}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_hook_has_no_cluster_rights_and_deletes_only_by_name(helm, case):
    docs = hook_docs(load_docs(helm.rendered(case).stdout))
    assert not [d for d in docs if d["kind"] in ("ClusterRole", "ClusterRoleBinding")], case.name
    for d in docs:
        if d["kind"] == "Role":
            for rule in d["rules"]:
                if "delete" in rule["verbs"] and set(rule["resources"]) - {"testruns", "httproutes", "ingresses"}:
                    assert rule.get("resourceNames"), f"{case.name}: delete without resourceNames: {rule}"


@pytest.mark.parametrize("header", ["| preset | the pre-delete hook deletes", "| preset | stays after `helm uninstall`"])
def test_every_preset_has_a_row(header):
    named = set()
    for row in table(header):
        if not row[0].startswith("every preset"):
            named |= presets_of(row[0])
    assert named <= set(PRESETS), f"README rows name presets that do not exist: {sorted(named - set(PRESETS))}"
    assert set(PRESETS) <= named, f"presets without a row of their own in {header!r}: {sorted(set(PRESETS) - named)}"


def test_the_readme_no_longer_says_uninstall_removes_istios_crds():
    stays = " ".join(" ".join(r) for r in table("| preset | stays after `helm uninstall`") if "istio" in presets_of(r[0]))
    assert "*.istio.io" in stays and "resource-policy: keep" in stays
    assert "removes them with every Istio object" not in uninstall_section()
