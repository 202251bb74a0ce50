"""Provenance (summary provenance, dashboards/report/benchreport/provenance.py) and `make rerun`:
what each reader makes of the objects helm and kubectl return, the secrets left out, a summary
turned back into values (refused when this checkout's chart or subcharts differ from the run's),
and `results --release` where neither helm nor kubectl can answer: every part null, each reason
named, the summary still valid. The real release, cluster and image digests are read, and a
recorded run is rerun, on the local cluster (ci/test/e2e/test_4_matrix.py).

The objects below are as a real cluster returned them and keep the versions they were recorded with
(Traefik's image, the kubelet's version): they are not copies of the pins (ci/tools/pins.py RECORDED)."""
import copy
import json

import pytest

from conftest import ROOT, output_of, run
from benchreport import provenance

CONTRACT = ROOT / "ci/test/contract.py"
PARTS = ("chart", "values", "runners", "subcharts", "kubernetes", "nodes", "controller")

# the label lines real charts write: name-version, quoted or not, a "v" version, a dashed name
MANIFEST = """\
---
metadata:
  labels:
    helm.sh/chart: bench-0.1.0
    helm.sh/chart: traefik-37.3.0
    helm.sh/chart: "kube-prometheus-stack-79.1.0"
    helm.sh/chart: gateway-helm-v1.6.0
    helm.sh/chart: k6-operator-4.1.1
    app.kubernetes.io/name: helm.sh/chart-lookalike
"""


def node(instance_type, cpu, roles=()):
    labels = {"kubernetes.io/arch": "amd64", **{f"node-role.kubernetes.io/{r}": "" for r in roles}}
    if instance_type:
        labels["node.kubernetes.io/instance-type"] = instance_type
    return {"metadata": {"labels": labels},
            "status": {"capacity": {"cpu": cpu, "memory": "16Gi"},
                       "nodeInfo": {"architecture": "amd64", "kubeletVersion": "v1.34.4", "osImage": "Debian 12"}}}


def pod(namespace, name, image_id):
    return {"metadata": {"namespace": namespace, "name": name},
            "status": {"containerStatuses": [{"name": "proxy", "image": "docker.io/traefik:v3.6.12",
                                              "imageID": image_id}]}}


def test_subcharts_from_the_release_labels():
    assert provenance.subcharts_from_manifest(MANIFEST, "bench") == {
        "gateway-helm": "v1.6.0", "k6-operator": "4.1.1", "kube-prometheus-stack": "79.1.0", "traefik": "37.3.0"}


def test_secrets_left_out_references_kept():
    values = {"grafana": {"adminPassword": "s3cret", "admin": {"existingSecret": "grafana-admin"}},
              "monitoring": {"remoteWrite": {"bearerToken": "t", "passwordSecret": {"name": "rw", "key": "pw"}}},
              "loadtest": {"rate": 100, "routes": {"backends": ["a", "b"]}}}
    kept, removed = provenance.redact(values)
    assert sorted(removed) == ["grafana.adminPassword", "monitoring.remoteWrite.bearerToken"], removed
    assert kept["grafana"]["admin"]["existingSecret"] == "grafana-admin"
    assert kept["monitoring"]["remoteWrite"]["passwordSecret"] == {"name": "rw", "key": "pw"}
    assert kept["loadtest"] == values["loadtest"]


def test_nodes_grouped_by_kind():
    nodes = provenance.node_kinds([node("c6i.4xlarge", "16"), node("c6i.4xlarge", "16"),
                                   node(None, "4", roles=("control-plane",))])
    assert nodes["count"] == 3 and [k["count"] for k in nodes["kinds"]] == [2, 1], nodes
    assert nodes["kinds"][0]["instance_type"] == "c6i.4xlarge" and nodes["kinds"][1]["roles"] == ["control-plane"]


def test_controller_images_by_both_regexes_in_full():
    pods = [pod("traefik", "traefik-7d9c-abc", "docker.io/traefik@sha256:" + "a" * 64),
            pod("bench", "bench-backend-1", "sha256:" + "b" * 64),
            pod("traefik-old", "traefik-1", "sha256:" + "c" * 64)]
    images = provenance.controller_images(pods, "traefik", ".*traefik.*")
    assert [(i["pod"], i["image_id"][-4:]) for i in images] == [("traefik-7d9c-abc", "aaaa")], images


# ---- make rerun: a summary back to its values ----

@pytest.fixture
def recorded():
    return {"testid": "run-1", "provenance": {
        "release": "bench", "namespace": "bench", "revision": 2,
        "chart": {"name": "bench", "version": chart_version(), "app_version": None},
        "subcharts": {"traefik": locked()["traefik"]}, "values": {"controller": "traefik", "loadtest": {"rate": 300}},
        "values_note": "", "redacted": ["grafana.adminPassword"], "kubernetes_version": "v1.34.4",
        "nodes": {"count": 1, "kinds": []}, "controller_images": [], "runners": None, "unreadable": {}}}


def chart_version():
    return provenance.chart_version(ROOT / "charts/bench")


def locked():
    return provenance.read_locked(ROOT / "charts/bench")


def rerun(report, tmp_path, summary):
    (tmp_path / "s.json").write_text(json.dumps(summary))
    return report("rerun", "--summary", str(tmp_path / "s.json"), "--chart", str(ROOT / "charts/bench"),
                  "--out", str(tmp_path / "values.yaml"))


def test_chart_lock_read():
    pins = locked()
    assert pins.get("traefik") and pins.get("kube-prometheus-stack") and pins.get("k6-operator"), pins


def test_rerun_writes_the_recorded_values(report, tmp_path, recorded):
    r = rerun(report, tmp_path, recorded)
    assert r.returncode == 0 and r.stdout.split() == ["bench", "bench"], output_of(r)
    assert json.loads((tmp_path / "values.yaml").read_text()) == recorded["provenance"]["values"]
    assert "grafana.adminPassword" in r.stderr and "Kubernetes v1.34.4" in r.stderr, r.stderr


REFUSED = {
    "another chart version": (lambda p: p["chart"].update(version="0.0.9"),
                              ["ran chart version 0.0.9", "check out the bench release with chart 0.0.9"]),
    "another subchart version": (lambda p: p["subcharts"].update(traefik="1.0.0"),
                                 ["ran subcharts traefik 1.0.0 (Chart.lock here: "]),
    "no values recorded": (lambda p: p.update(values=None), ["has no recorded values", "RELEASE"]),
}


@pytest.mark.parametrize("case", REFUSED)
def test_rerun_refused(report, tmp_path, recorded, case):
    change, wants = REFUSED[case]
    summary = copy.deepcopy(recorded)
    change(summary["provenance"])
    r = rerun(report, tmp_path, summary)
    assert r.returncode == 2 and all(w in r.stderr for w in wants), output_of(r)
    assert not (tmp_path / "values.yaml").exists()


def test_results_without_helm_or_kubectl_names_every_part(report, prometheus, merged, work, tmp_path):
    """Nothing on PATH answers: every part is null or empty and `unreadable` says why; the summary is
    still written, valid, and the notes name each part."""
    out = work / "out/merged-provenance"
    r = run([report.python, "-m", "benchreport", "results", "--testid", "report-merge", "--prometheus",
             prometheus.url, "--out", str(out), "--release", "bench", "--namespace", "bench"],
            env={**report.env(), "PATH": str(tmp_path)})
    assert r.returncode == 0, output_of(r)
    p = json.loads((out / "summary.json").read_text())["provenance"]
    assert (p["release"], p["namespace"]) == ("bench", "bench"), p
    assert sorted(p["unreadable"]) == sorted(PARTS), p["unreadable"]
    assert all("not found on PATH" in why for why in p["unreadable"].values()), p["unreadable"]
    assert p["chart"] is None and p["values"] is None and p["nodes"] is None and p["controller_images"] is None
    assert all(f"note: provenance: {part} not recorded" in r.stdout for part in PARTS), r.stdout
    v = report.script(CONTRACT, "valid", out / "summary.json")
    assert v.returncode == 0, output_of(v)


def test_bad_release_name_refused(report, work):
    r = report("results", "--testid", "x", "--prometheus", "http://127.0.0.1:9", "--out", str(work / "x"),
               "--release", "Bench_1")
    assert r.returncode == 2 and "--release 'Bench_1' is not a release name" in r.stderr, output_of(r)


def test_report_shows_the_provenance(report, tmp_path, recorded):
    """The settings table gains provenance rows: chart and release revision, subcharts, Kubernetes,
    nodes, the controller's image digests, runners."""
    summary = json.loads((ROOT / "ci/test/report/testdata/traefik.json").read_text())
    summary["provenance"] = dict(recorded["provenance"], nodes={"count": 1, "kinds": [dict(
        count=1, instance_type=None, arch="amd64", cpu="2", memory="24Gi", kubelet="v1.34.4", os_image="Debian 12",
        roles=[])]}, controller_images=[{"namespace": "t", "pod": "traefik-1", "container": "traefik",
                                         "image": "traefik:v3.6.12", "image_id": "sha256:" + "f" * 64}])
    (tmp_path / "s.json").write_text(json.dumps(summary))
    v = report.script(CONTRACT, "valid", tmp_path / "s.json")
    assert v.returncode == 0, output_of(v)
    r = report("--out", str(tmp_path / "out"), str(tmp_path / "s.json"))
    assert r.returncode == 0, output_of(r)
    md = (tmp_path / "out" / "report.md").read_text()
    for row in (f"| provenance.chart | bench {chart_version()} (release bench revision 2) |",
                f"| provenance.subcharts | traefik {locked()['traefik']} |", "| provenance.kubernetes | v1.34.4 |",
                "| provenance.nodes | 1: 1 x untyped amd64 2 CPU 24Gi |", "| provenance.controller_images | sha256:fff"):
        assert row in md, f"{row!r} not in the report:\n{md}"
