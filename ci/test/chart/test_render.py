"""Every preset and CI overlay rendered by helm v3 and v4, then kubeconform strict with local
schemas (Kubernetes 1.34, the TestRun, ServiceMonitor and PodMonitor CRDs, Gateway API v1.4.0)."""
import json
import re

import pytest

from conftest import Case, kubeconform_command, load_docs, render_cases, run

CASES = render_cases()
by_id = dict(ids=lambda c: c.name)


@pytest.mark.parametrize("case", CASES, **by_id)
def test_template(helm, case):
    result = helm.render(case)
    assert result.returncode == 0, result.stderr
    assert load_docs(result.stdout), "rendered no object"


@pytest.fixture(scope="session")
def kubeconform_results(helms):
    """{render file: kubeconform's verdict per object}: every successful render of both majors
    through one kubeconform process (it loads each schema once)."""
    renders = [helm.render(case) for helm in helms.values() for case in CASES]
    paths = [r.path for r in renders if r.returncode == 0]
    result = run(kubeconform_command(*paths, json_output=True))
    verdicts = {}
    for resource in json.loads(result.stdout)["resources"]:
        verdicts.setdefault(resource["filename"], []).append(resource)
    return verdicts


@pytest.mark.parametrize("case", CASES, **by_id)
def test_kubeconform(helm, kubeconform_results, case):
    verdicts = kubeconform_results.get(str(helm.rendered(case).path))
    assert verdicts, "kubeconform checked no object of this render"
    bad = [f"{v['kind']} {v['name']}: {v['status']} {v['msg']}" for v in verdicts if v["status"] != "statusValid"]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("case", [c for c in CASES if c.loadtest_enabled()], **by_id)
def test_renders_testrun_hook(helm, case):
    runs = [d for d in load_docs(helm.rendered(case).stdout) if d["kind"] == "TestRun"]
    assert len(runs) == 1, f"{len(runs)} TestRuns"
    assert runs[0]["apiVersion"] == "k6.io/v1alpha1"
    assert "post-install" in runs[0]["metadata"]["annotations"]["helm.sh/hook"]


def test_one_configmap_per_dashboard(helm, chart):
    want = sorted(f"bench-dashboard-{p.stem.lower().replace('_', '-')}" for p in (chart / "dashboards").glob("*.json"))
    got = sorted(d["metadata"]["name"] for d in load_docs(helm.rendered(Case("defaults")).stdout)
                 if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("bench-dashboard-"))
    assert want and got == want


# The schemas are strict: a misspelled field must be refused, or the validations above prove nothing.

def test_kubeconform_refuses_a_misspelled_testrun_field(helms, kubeconform, work):
    render = helms[3].rendered(Case("defaults")).stdout
    assert re.search(r"(?m)^  parallelism:", render), "no spec.parallelism in the TestRun"
    bad = work / "bad-testrun.yaml"
    bad.write_text(re.sub(r"(?m)^  parallelism:", "  paralelism:", render))
    assert kubeconform(bad).returncode != 0, "kubeconform accepted spec.paralelism"


def test_kubeconform_refuses_a_misspelled_httproute_field(helms, kubeconform, work):
    case = Case("values/traefik+traefik-gateway", ("values/traefik.yaml", "values/traefik-gateway.yaml"))
    render = helms[3].rendered(case).stdout
    assert re.search(r"(?m)^kind: HTTPRoute$", render) and re.search(r"(?m)^      sectionName: https$", render), \
        "no HTTPRoute with a sectionName"
    bad = work / "bad-httproute.yaml"
    bad.write_text(re.sub(r"(?m)^      sectionName: https$", "      sektionName: https", render))
    assert kubeconform(bad).returncode != 0, "kubeconform accepted parentRefs[0].sektionName"
