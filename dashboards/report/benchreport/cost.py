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


def controller_cost(prom, first, last, requests, namespace_regex=".*", pod_regex=None):
    """The summary's controller_cost for the load between unix times first and last."""
    pod_regex = pod_regex or default_pod_regex()
    sel = f'{{namespace=~"{_quote(namespace_regex)}", pod=~"{_quote(pod_regex)}", {CONTAINERS_ONLY}}}'
    window = max(1, int(round(last - first)))
    at = last
    cost = {"namespace_regex": namespace_regex, "pod_regex": pod_regex, "pods": [], "cpu_seconds": None,
            "cpu_seconds_per_1k_requests": None, "memory_peak_bytes": None, "unknown_reason": None}
    try:
        pods = prom.query(f"group by (namespace, pod) (last_over_time({CPU}{sel}[{window}s]))", at)
        cost["pods"] = sorted(f'{p["metric"].get("namespace", "")}/{p["metric"].get("pod", "")}' for p in pods)
        if not cost["pods"]:
            cost["unknown_reason"] = (f"no {CPU} series of pods matching {sel} during the run: is the kubelet's "
                                      "cAdvisor scraped (kube-prometheus-stack does), and do the regexes "
                                      "(make results ARGS=\"--controller-namespace NS --controller-pods REGEX\") "
                                      "match the controller's pods?")
            return cost
        cpu = prom.query(f"sum(increase({CPU}{sel}[{window}s]))", at)
        memory = prom.query(f"max_over_time(sum({MEMORY}{sel})[{window}s:{MEMORY_STEP_S}s])", at)
    except PrometheusError as e:
        cost["unknown_reason"] = f"Prometheus could not answer the cAdvisor queries: {e}"
        return cost
    if cpu:
        cost["cpu_seconds"] = round(float(cpu[0]["value"][1]), 3)
        if requests:
            cost["cpu_seconds_per_1k_requests"] = round(cost["cpu_seconds"] * 1000 / requests, 4)
    if memory:
        cost["memory_peak_bytes"] = round(float(memory[0]["value"][1]))
    if cost["cpu_seconds"] is None or cost["memory_peak_bytes"] is None:
        cost["unknown_reason"] = (f"the controller's pods {', '.join(cost['pods'])} have no "
                                  f"{CPU if cost['cpu_seconds'] is None else MEMORY} samples in the run's window")
    return cost
