"""What a run needs to be run again (the summary's provenance), read with the user's own `helm` and
`kubectl` from the release that ran it (make results RELEASE=..., the matrix runner):
  chart        the bench chart's name, version and app version, and the release revision (helm get metadata)
  subcharts    every chart whose objects the release holds, by its helm.sh/chart label (helm get manifest):
               the controller's, kube-prometheus-stack, k6-operator, as installed
  values       the values the user gave (helm get values): what differs from the chart's defaults,
               with secrets left out (REDACT) and the run id dropped (a rerun gets a new one)
  kubernetes   the API server's version; the nodes: count and kinds (instance type, arch, CPU,
               memory, kubelet, roles) grouped
  controller   the controller's pods (the cost's pod and namespace regexes) with each container's
               image and the digest the node resolved (status.containerStatuses[].imageID)
  runners      parallelism, image and resources of the k6 runners (helm get values --all)
A part the user's rights cannot read is null, with the reason in `unreadable`: the rest is kept.
`rerun` (rerun_values) turns a summary back into a values file for the same chart version."""

import json
import re
import subprocess
import sys

SCHEMA_NOTE = "helm get values: the values given at install, i.e. what differs from the chart's defaults"
# Keys whose values are secrets: left out of the summary (which users publish) and of a rerun.
REDACT = re.compile(r"(password|passwd|token|api[-_]?key|private[-_]?key|credentials?|client[-_]?secret)$", re.I)
CHART_LABEL = re.compile(r"^\s*helm\.sh/chart:\s*['\"]?([A-Za-z0-9._-]+?)-(v?[0-9][0-9A-Za-z.+_-]*)['\"]?\s*$")
NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
COMMAND_TIMEOUT_S = 60


class ProvenanceError(ValueError):
    """A summary that cannot be rerun here; the message names what differs and what to do."""


def _run_json(cmd):
    """(parsed JSON stdout, None) or (None, reason) of a helm/kubectl command (no shell)."""
    text, reason = _run(cmd)
    if reason:
        return None, reason
    try:
        return json.loads(text or "null"), None
    except json.JSONDecodeError as e:
        return None, f"{' '.join(cmd[:3])}: not JSON ({e.msg})"


def _run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except FileNotFoundError:
        return None, f"{cmd[0]} not found on PATH"
    except subprocess.TimeoutExpired:
        return None, f"{' '.join(cmd[:3])}: no answer within {COMMAND_TIMEOUT_S} s"
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[-1]
        return None, f"{' '.join(cmd[:3])}: {last}"
    return p.stdout, None


def redact(values, path=""):
    """(values with every secret-named key's value removed, the dotted paths removed)."""
    if not isinstance(values, dict):
        return values, []
    kept, removed = {}, []
    for key, value in values.items():
        where = f"{path}.{key}" if path else str(key)
        if REDACT.search(str(key)) and not isinstance(value, (dict, list)):
            removed.append(where)
            continue
        kept[key], inner = redact(value, where)
        removed += inner
    return kept, removed


def subcharts_from_manifest(manifest, chart_name):
    """{chart name: version} of every helm.sh/chart label in a release manifest but the chart's own."""
    found = {}
    for line in (manifest or "").splitlines():
        m = CHART_LABEL.match(line)
        if m and m.group(1) != chart_name:
            found[m.group(1)] = m.group(2)
    return dict(sorted(found.items()))


def node_kinds(nodes):
    """{count, kinds: [{count, instance_type, arch, cpu, memory, kubelet, os_image, roles}]}."""
    kinds = {}
    for node in nodes:
        labels = node.get("metadata", {}).get("labels", {})
        status = node.get("status", {})
        info = status.get("nodeInfo", {})
        roles = sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/"))
        kind = {"instance_type": labels.get("node.kubernetes.io/instance-type"),
                "arch": info.get("architecture"), "cpu": status.get("capacity", {}).get("cpu"),
                "memory": status.get("capacity", {}).get("memory"), "kubelet": info.get("kubeletVersion"),
                "os_image": info.get("osImage"), "roles": roles}
        key = json.dumps(kind, sort_keys=True)
        kinds.setdefault(key, dict(kind, count=0))["count"] += 1
    return {"count": len(nodes), "kinds": sorted(kinds.values(), key=lambda k: -k["count"])}


def controller_images(pods, namespace_regex, pod_regex):
    """[{namespace, pod, container, image, image_id}] of the pods both regexes match in full."""
    ns_re, pod_re = re.compile(namespace_regex), re.compile(pod_regex)
    images = []
    for pod in pods:
        meta = pod.get("metadata", {})
        if not (ns_re.fullmatch(meta.get("namespace", "")) and pod_re.fullmatch(meta.get("name", ""))):
            continue
        for c in pod.get("status", {}).get("containerStatuses") or []:
            images.append({"namespace": meta["namespace"], "pod": meta["name"], "container": c.get("name"),
                           "image": c.get("image"), "image_id": c.get("imageID") or None})
    return sorted(images, key=lambda i: (i["namespace"], i["pod"], i["container"] or ""))


def collect(release, namespace, namespace_regex, pod_regex):
    """The summary's provenance of RELEASE in NAMESPACE (see the module text)."""
    unreadable = {}
    helm = ["helm", "-n", namespace]

    def read(part, cmd, as_json=True):
        value, reason = (_run_json if as_json else _run)(cmd)
        if reason:
            unreadable[part] = reason
        return value

    meta = read("chart", helm + ["get", "metadata", release, "-o", "json"]) or {}
    given = read("values", helm + ["get", "values", release, "-o", "json"])
    merged = read("runners", helm + ["get", "values", release, "--all", "-o", "json"]) or {}
    manifest = read("subcharts", helm + ["get", "manifest", release], as_json=False)
    version = read("kubernetes", ["kubectl", "version", "-o", "json"]) or {}
    nodes = read("nodes", ["kubectl", "get", "nodes", "-o", "json"])
    # one namespace when the regex names one (a namespaced user may list only there), else all
    scope = ["-n", namespace_regex] if NAMESPACE.fullmatch(namespace_regex) else ["--all-namespaces"]
    pods = read("controller", ["kubectl", "get", "pods", *scope, "-o", "json"])

    values, redacted = redact(given) if isinstance(given, dict) else (None, [])
    if isinstance(values, dict) and isinstance(values.get("loadtest"), dict):
        values["loadtest"] = {k: v for k, v in values["loadtest"].items() if k != "runId"}
    loadtest = merged.get("loadtest") or {}
    runner = loadtest.get("runner") or {}
    image = runner.get("image") or {}
    return {
        "release": release, "namespace": namespace, "revision": meta.get("revision"),
        "chart": ({"name": meta.get("chart"), "version": meta.get("version"), "app_version": meta.get("appVersion")}
                  if meta else None),
        "subcharts": subcharts_from_manifest(manifest, meta.get("chart")) if manifest is not None else None,
        "values": values, "values_note": SCHEMA_NOTE, "redacted": redacted,
        "kubernetes_version": (version.get("serverVersion") or {}).get("gitVersion"),
        "nodes": node_kinds(nodes.get("items", [])) if nodes else None,
        "controller_images": (controller_images(pods.get("items", []), namespace_regex, pod_regex)
                              if pods else None),
        "runners": ({"count": loadtest.get("parallelism"),
                     "image": ":".join(x for x in (image.get("repository"), str(image.get("tag") or "")) if x) or None,
                     "resources": runner.get("resources")} if merged else None),
        "unreadable": unreadable,
    }


def rerun_values(summary, chart_version, locked):
    """(values for `helm upgrade -f`, notes) to run SUMMARY's run again with the chart at CHART_VERSION
    whose Chart.lock pins LOCKED ({name: version}); ProvenanceError when that would be another run."""
    p = summary.get("provenance")
    where = f"run {summary.get('testid')}"
    if not isinstance(p, dict) or not isinstance(p.get("values"), dict):
        raise ProvenanceError(f"{where} has no recorded values (provenance.values): it was merged without "
                              f"the release (make results RELEASE=...); run it again by hand")
    recorded = (p.get("chart") or {}).get("version")
    if recorded != chart_version:
        raise ProvenanceError(f"{where} ran chart version {recorded}, this checkout's chart is {chart_version}: "
                              f"check out the bench release with chart {recorded} to rerun it")
    differ = {n: (v, locked.get(n)) for n, v in (p.get("subcharts") or {}).items()
              if n in locked and locked[n] != v}
    if differ:
        raise ProvenanceError(f"{where} ran subcharts " + ", ".join(f"{n} {a} (Chart.lock here: {b})"
                                                                    for n, (a, b) in differ.items()))
    notes = [f"left out of the recorded values as secrets (give them with -f): {', '.join(p['redacted'])}"] \
        if p.get("redacted") else []
    if p.get("kubernetes_version"):
        notes.append(f"the run had Kubernetes {p['kubernetes_version']} and "
                     f"{(p.get('nodes') or {}).get('count', '?')} node(s): compare with this cluster")
    return p["values"], notes


def read_locked(chart_dir):
    """{name: version} of the dependencies the chart's Chart.lock pins (none for a chart without one)."""
    try:
        with open(f"{chart_dir}/Chart.lock", encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    # Chart.lock is YAML of a fixed shape: "- name: X" followed by "  version: Y" lines
    return dict(re.findall(r"^- name: (\S+)\n(?:  .*\n)*?  version: (\S+)$", text, re.M))


def chart_version(chart_dir):
    with open(f"{chart_dir}/Chart.yaml", encoding="utf-8") as f:
        m = re.search(r"^version:\s*['\"]?([^'\"\s]+)", f.read(), re.M)
    return m.group(1) if m else None


def write_rerun_values(summary_path, chart_dir, out_path):
    """`rerun`: the summary at summary_path -> the values file out_path that runs it again with the
    chart at chart_dir; prints its release and namespace on stdout. Returns the exit status."""
    try:
        with open(summary_path, encoding="utf-8") as f:
            summary = json.load(f)
        values, notes = rerun_values(summary, chart_version(chart_dir), read_locked(chart_dir))
    except (OSError, json.JSONDecodeError) as e:
        print(f"error: --summary {summary_path}: {e}", file=sys.stderr)
        return 2
    except ProvenanceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(values, f, indent=2)
        f.write("\n")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(summary["provenance"]["release"], summary["provenance"]["namespace"])
    return 0
