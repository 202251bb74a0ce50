"""What the controller spent on a run: its CPU-seconds over the load window and per 1,000
requests, and its peak working-set memory, from the kubelet's cAdvisor series that
kube-prometheus-stack (and the e2e Prometheus) scrape. The controller's pods are chosen
as in the controller dashboard: a namespace regex and a pod regex (scenarios/contract.json
controllerPods, the one default). A run whose Prometheus has no such series says so."""

import json
import os

from .prometheus import PrometheusError

CONTRACT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "scenarios", "contract.json")
CPU = "container_cpu_usage_seconds_total"
MEMORY = "container_memory_working_set_bytes"
# cAdvisor also writes a row per pod cgroup (container="") and per pause container ("POD"): summing
# those with the containers would count the same CPU twice.
CONTAINERS_ONLY = 'container!="", container!="POD"'
MEMORY_STEP_S = 15  # subquery resolution of the memory peak: the default scrape interval


def default_pod_regex():
    with open(CONTRACT, encoding="utf-8") as f:
        return json.load(f)["controllerPods"]["podRegex"]


def _quote(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _cpu_seconds(series, first, last):
    """CPU-seconds of the load window from raw counter samples: per series, the increase from the
    last sample at or before `first` to the first at or after `last` (resets counted), as a rate over
    the time those samples span, times the window. A scrape interval longer than a short run's
    window still gives a figure, averaged over the samples around it. None without two samples."""
    total, seen = 0.0, False
    for s in series:
        pts = sorted((float(t), float(v)) for t, v in s.get("values") or [])
        if len(pts) < 2:
            continue
        i0 = max([i for i, (t, _) in enumerate(pts) if t <= first] or [0])
        i1 = min([i for i, (t, _) in enumerate(pts) if t >= last] or [len(pts) - 1])
        if i1 <= i0:
            continue
        increase = sum(b - a if b >= a else b for (_, a), (_, b) in zip(pts[i0:i1], pts[i0 + 1:i1 + 1]))
        total += increase / (pts[i1][0] - pts[i0][0]) * (last - first)
        seen = True
    return total if seen else None


def controller_cost(prom, first, last, requests, namespace_regex=".*", pod_regex=None, routes=None):
    """The summary's controller_cost for the load between unix times first and last; with ROUTES (the
    route experiments' route count) also per route, as gateway-api-bench normalises it."""
    pod_regex = pod_regex or default_pod_regex()
    sel = f'{{namespace=~"{_quote(namespace_regex)}", pod=~"{_quote(pod_regex)}", {CONTAINERS_ONLY}}}'
    window = max(1, int(round(last - first)))
    # Raw samples from a margin before the load to a margin after it: cAdvisor is scraped every
    # 15 to 60 s, often less often than a short run lasts.
    margin = 2 * 60
    cost = {"namespace_regex": namespace_regex, "pod_regex": pod_regex, "pods": [], "cpu_seconds": None,
            "cpu_seconds_per_1k_requests": None, "memory_peak_bytes": None, "unknown_reason": None,
            "routes": routes or None, "cpu_seconds_per_route": None, "memory_peak_bytes_per_route": None}
    try:
        pods = prom.query(f"group by (namespace, pod) (last_over_time({CPU}{sel}[{window + margin}s]))", last)
        cost["pods"] = sorted(f'{p["metric"].get("namespace", "")}/{p["metric"].get("pod", "")}' for p in pods)
        if not cost["pods"]:
            cost["unknown_reason"] = (f"no {CPU} series of pods matching {sel} during the run: is the kubelet's "
                                      "cAdvisor scraped (kube-prometheus-stack does), and do the regexes "
                                      "(make results ARGS=\"--controller-namespace NS --controller-pods REGEX\") "
                                      "match the controller's pods?")
            return cost
        samples = prom.query(f"{CPU}{sel}[{window + 2 * margin}s]", last + margin)
        memory = prom.query(f"max_over_time(sum({MEMORY}{sel})[{max(window, MEMORY_STEP_S)}s:{MEMORY_STEP_S}s])", last)
    except PrometheusError as e:
        cost["unknown_reason"] = f"Prometheus could not answer the cAdvisor queries: {e}"
        return cost
    cpu = _cpu_seconds(samples, first, last)
    if cpu is not None:
        # 4 significant digits: an idle controller spends milliseconds, a busy one minutes
        cost["cpu_seconds"] = float(f"{cpu:.4g}")
        if requests:
            cost["cpu_seconds_per_1k_requests"] = float(f"{cpu * 1000 / requests:.4g}")
        if routes:
            cost["cpu_seconds_per_route"] = float(f"{cpu / routes:.4g}")
    if memory:
        cost["memory_peak_bytes"] = round(float(memory[0]["value"][1]))
        if routes:
            cost["memory_peak_bytes_per_route"] = round(cost["memory_peak_bytes"] / routes)
    if cost["cpu_seconds"] is None or cost["memory_peak_bytes"] is None:
        cost["unknown_reason"] = (f"the controller's pods {', '.join(cost['pods'])} have too few "
                                  f"{CPU if cost['cpu_seconds'] is None else MEMORY} samples around the run "
                                  "(two are needed, one at each end)")
    return cost
