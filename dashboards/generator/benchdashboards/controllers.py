"""Dashboard 2, controller view: what the ingress or Gateway API controller was doing during a run
(reloads, requests, latency and upstream errors as the controller sees them, CPU and memory), one
collapsed row per controller."""
from .panels import (  # the panel vocabulary
    CONTRACT, LOAD, Layout, RUN, classic_quantile, container_resources, dashboard,
    datasource_variable, k6_quantile, k6_rate, labelled, query_variable, stat, sum_increase,
    sum_rate, targets, testid_variable, textbox_variable, timeseries, zero_while_running)

# Each controller's configuration reload (or push) counter, stated once in scenarios/contract.json
# (the report attributes errors to those reloads too): its series say the controller is scraped.
CONTROLLER_PROBES = [(r["name"], r["metric"]) for r in CONTRACT["controllerReloads"]["list"]]


TRAEFIK_ROW = ("Traefik (traefik_*)", [
    timeseries(
        "Traefik: configuration reloads",
        "Dynamic configuration reloads per interval (Traefik applies endpoint changes through a "
        "reload of its dynamic configuration).",
        targets((sum_increase("traefik_config_reloads_total"), "reloads")), "short", bars=True,
        minimum=0),
    timeseries(
        "Traefik: time since last successful reload",
        "Seconds since traefik_config_last_reload_success (Traefik v3 has no reload-failure counter).",
        targets(("time() - max(traefik_config_last_reload_success)", "since last reload")), "s",
        minimum=0),
    timeseries(
        "Traefik: open connections",
        "Open connections by entrypoint and protocol.",
        targets(("sum by (entrypoint, protocol) (traefik_open_connections)", "{{entrypoint}} {{protocol}}")),
        "short", minimum=0),
    timeseries(
        "Traefik: requests by status (entrypoints)",
        "Requests per second as Traefik sees them, by status code.",
        targets((sum_rate("traefik_entrypoint_requests_total", "code"), "{{code}}")), "reqps",
        stack=True, minimum=0),
    timeseries(
        "Traefik: latency (entrypoint histogram)",
        "p50/p99 from Traefik's classic histogram. Its buckets bound the precision: with the "
        "defaults (0.1, 0.3, 1.2, 5 s) every request under 100 ms lands in the first bucket and the "
        "quantile reads as a fraction of 100 ms. Set metrics.prometheus.buckets (e.g. 0.001 ... 5) "
        "for benchmarks; k6's native histogram above has no such limit.",
        targets((classic_quantile("0.5", "traefik_entrypoint_request_duration_seconds"), "p50"),
                (classic_quantile("0.99", "traefik_entrypoint_request_duration_seconds"), "p99")),
        "s", log=True),
    timeseries(
        "Traefik: upstream errors (service 4xx/5xx)",
        "Responses with 4xx/5xx per backend service (502/503/504 = upstream unreachable or gone).",
        targets((sum_rate("traefik_service_requests_total", "service, code", 'code=~"[45].."'),
                 "{{code}} {{service}}")), "reqps", stack=True, minimum=0),
])


INGRESS_NGINX_ROW = ("ingress-nginx (nginx_ingress_controller_*)", [
    timeseries(
        "ingress-nginx: reloads",
        "Successful reload operations per interval. ingress-nginx updates endpoints through Lua "
        "without a reload, so churn should not reload here.",
        targets((sum_increase("nginx_ingress_controller_success"), "reloads")), "short", bars=True,
        minimum=0),
    timeseries(
        "ingress-nginx: last reload successful",
        "1 = the last configuration reload succeeded.",
        targets(("min(nginx_ingress_controller_config_last_reload_successful)", "last reload ok")),
        "bool", steps=True),
    timeseries(
        "ingress-nginx: requests by status",
        "Requests per second by status as the controller logged them.",
        targets((sum_rate("nginx_ingress_controller_requests", "status"), "{{status}}")), "reqps",
        stack=True, minimum=0),
    timeseries(
        "ingress-nginx: latency (request and upstream)",
        "p99 of request time (client side of nginx) and upstream response time, seconds.",
        targets((classic_quantile("0.99", "nginx_ingress_controller_request_duration_seconds"), "request p99"),
                (classic_quantile("0.99", "nginx_ingress_controller_response_duration_seconds"), "upstream p99")),
        "s", log=True),
    timeseries(
        "ingress-nginx: upstream errors (4xx/5xx)",
        "Responses with 4xx/5xx by status (502/503/504 = upstream unreachable or gone).",
        targets((sum_rate("nginx_ingress_controller_requests", "status", 'status=~"[45].."'), "{{status}}")),
        "reqps", stack=True, minimum=0),
    timeseries(
        "ingress-nginx: nginx process CPU and memory",
        "nginx worker processes as the controller measures them.",
        targets((sum_rate("nginx_ingress_controller_nginx_process_cpu_seconds_total"), "cpu (cores)"),
                ("sum(nginx_ingress_controller_nginx_process_resident_memory_bytes)", "rss")),
        "short", minimum=0, axis_label="cores", right=("rss", "bytes")),
])


F5_ROW = ("NGINX Inc / F5 nginx-ingress (nginx_ingress_controller_nginx_*, nginx_ingress_nginx_*)", [
    timeseries(
        "nginx-ingress: reloads by reason",
        "Successful reloads by reason: endpoints (a backend pod came or went) or other.",
        targets((sum_increase("nginx_ingress_controller_nginx_reloads_total", "reason"), "{{reason}}"),
                (sum_increase("nginx_ingress_controller_nginx_reload_errors_total"), "errors")),
        "short", bars=True, stack=True, minimum=0),
    timeseries(
        "nginx-ingress: last reload status and duration",
        "Last reload status (1 = ok) and duration (reported in milliseconds, shown in seconds).",
        targets(("min(nginx_ingress_controller_nginx_last_reload_status)", "status (1 = ok)"),
                ("max(nginx_ingress_controller_nginx_last_reload_milliseconds) / 1000", "duration")),
        "bool", steps=True, minimum=0, right=("duration", "s")),
    timeseries(
        "nginx-ingress: worker processes by generation",
        "Old-generation workers still draining after a reload hold connections and memory.",
        targets(("sum by (generation) (nginx_ingress_controller_nginx_worker_processes_total)", "{{generation}}")),
        "short", stack=True, minimum=0),
    timeseries(
        "nginx-ingress: requests and connections",
        "Requests per second and active connections (NGINX stub_status through the exporter).",
        targets((sum_rate("nginx_ingress_nginx_http_requests_total"), "requests/s"),
                ("sum(nginx_ingress_nginx_connections_active)", "active connections")),
        "reqps", minimum=0, right=("active connections", "short")),
    timeseries(
        "nginx-ingress: upstream latency",
        "p50/p99 of upstream response time (-enable-latency-metrics; reported in ms, shown in s).",
        targets((classic_quantile("0.5", "nginx_ingress_controller_upstream_server_response_latency_ms",
                                  scale=" / 1000"), "p50"),
                (classic_quantile("0.99", "nginx_ingress_controller_upstream_server_response_latency_ms",
                                  scale=" / 1000"), "p99")),
        "s", log=True),
    timeseries(
        "nginx-ingress: upstream errors (NGINX Plus)",
        "Upstream responses with 4xx/5xx by upstream (NGINX Plus API metrics only).",
        targets((sum_rate("nginx_ingress_nginxplus_upstream_server_responses", "upstream, code",
                          'code=~"[45]xx"'), "{{code}} {{upstream}}")),
        "reqps", stack=True, minimum=0),
])


HAPROXY_ROW = ("HAProxy Kubernetes Ingress, haproxytech (haproxy_*)", [
    timeseries(
        "haproxy: reloads and restarts",
        "HAProxy reloads and restarts by result; endpoint changes normally go through the runtime "
        "API without either.",
        targets((sum_increase("haproxy_reloads_total", "result"), "reload {{result}}"),
                (sum_increase("haproxy_restarts_total", "result"), "restart {{result}}"),
                (sum_increase("haproxy_runtime_socket_connections_total", "object"), "runtime API {{object}}")),
        "short", bars=True, minimum=0),
    timeseries(
        "haproxy: configuration in sync",
        "1 = a pending configuration is invalid and cannot be applied.",
        targets(("max(haproxy_unable_to_sync_configuration)", "unable to sync")), "bool", steps=True),
    timeseries(
        "haproxy: active servers per backend",
        "Backend servers HAProxy considers active: the endpoints as the controller sees them.",
        targets(("sum by (proxy) (haproxy_backend_active_servers)", "{{proxy}}")), "short", steps=True,
        minimum=0),
    timeseries(
        "haproxy: responses by status class",
        "Frontend HTTP responses per second by class (HAProxy labels codes 1xx..5xx, other).",
        targets((sum_rate("haproxy_frontend_http_responses_total", "code"), "{{code}}")), "reqps",
        stack=True, minimum=0),
    timeseries(
        "haproxy: backend response time",
        "HAProxy exports averages over the last 1024 requests and maxima, not histograms.",
        targets(("max(haproxy_backend_response_time_average_seconds)", "avg (last 1024)"),
                ("max(haproxy_backend_max_response_time_seconds)", "max")),
        "s", log=True),
    timeseries(
        "haproxy: upstream errors",
        "Backend 4xx/5xx responses, connection errors, response errors and retries per second.",
        targets((sum_rate("haproxy_backend_http_responses_total", "code", 'code=~"[45]xx"'), "{{code}}"),
                (sum_rate("haproxy_backend_connection_errors_total"), "connection errors"),
                (sum_rate("haproxy_backend_response_errors_total"), "response errors"),
                (sum_rate("haproxy_backend_retry_warnings_total"), "retries")),
        "reqps", stack=True, minimum=0),
])


# Gateway API controllers: each row has the control plane (configuration sent to the proxies, its
# CPU and memory) and the data plane (requests, upstream latency, its CPU and memory). Metric names
# were read in each controller's source at the pinned version (ci/tools/dashboards/fixtures/metrics.json).
ENVOY_GATEWAY_ROW = ("Envoy Gateway: control plane (xds_*, watchable_*) and Envoy data plane (envoy_*)", [
    timeseries(
        "Envoy Gateway: xDS snapshot updates",
        "Control plane: xDS snapshots pushed to the Envoy fleet per interval (every route or "
        "endpoint change ends in one), and Kubernetes resources it applied for the fleet.",
        targets((sum_increase("xds_snapshot_update_total"), "xDS snapshot updates"),
                (sum_increase("resource_apply_total"), "resources applied")), "short", bars=True, minimum=0),
    timeseries(
        "Envoy Gateway: update handling time (p99 by runner)",
        "Control plane: p99 time a watchable subscriber (provider, gateway-api translator, xds "
        "translator, infrastructure) took to handle an update, by runner.",
        targets((classic_quantile("0.99", "watchable_subscribe_duration_seconds", by="le, runner"), "{{runner}}")),
        "s", log=True),
    container_resources("Envoy Gateway: control plane", "envoy-gateway"),
    timeseries(
        "Envoy: upstream responses by status class",
        "Data plane: responses from the backend clusters per second by class (2xx ... 5xx).",
        targets((sum_rate("envoy_cluster_upstream_rq_xx", "envoy_response_code_class"), "{{envoy_response_code_class}}xx")),
        "reqps", stack=True, minimum=0),
    timeseries(
        "Envoy: upstream latency and healthy endpoints",
        "Data plane: p50/p99 upstream request time (Envoy's classic histogram in milliseconds, shown "
        "in seconds) and the endpoints Envoy holds healthy (right axis): the backend as the data "
        "plane sees it.",
        targets((classic_quantile("0.5", "envoy_cluster_upstream_rq_time", scale=" / 1000"), "p50"),
                (classic_quantile("0.99", "envoy_cluster_upstream_rq_time", scale=" / 1000"), "p99"),
                ("sum(envoy_cluster_membership_healthy)", "healthy endpoints")),
        "s", log=True, right=("healthy endpoints", "short")),
    container_resources("Envoy Gateway: data plane", "envoy"),
])

NGF_ROW = ("NGINX Gateway Fabric: control plane (nginx_gateway_fabric_*) and NGINX data plane (nginx_http_*)", [
    timeseries(
        "NGINX Gateway Fabric: configuration batches",
        "Control plane: event batches processed per interval (each turns route and endpoint changes "
        "into NGINX configuration for the data plane's agent).",
        targets((sum_increase("nginx_gateway_fabric_event_batch_processing_milliseconds_count"), "batches")),
        "short", bars=True, minimum=0),
    timeseries(
        "NGINX Gateway Fabric: batch processing time",
        "Control plane: p50/p99 of event batch processing. Its buckets are 500 ms, 1, 5, 10 and 30 s, "
        "so every fast batch reads as a fraction of 500 ms.",
        targets((classic_quantile("0.5", "nginx_gateway_fabric_event_batch_processing_milliseconds", scale=" / 1000"), "p50"),
                (classic_quantile("0.99", "nginx_gateway_fabric_event_batch_processing_milliseconds", scale=" / 1000"), "p99")),
        "s", log=True),
    container_resources("NGINX Gateway Fabric: control plane", "nginx-gateway"),
    timeseries(
        "NGINX: client requests",
        "Data plane: client requests per second (the NGINX agent's nginx receiver, from stub_status).",
        targets((sum_rate("nginx_http_requests_total"), "requests/s")), "reqps", minimum=0),
    timeseries(
        "NGINX: connections by outcome",
        "Data plane: client connections accepted, handled and dropped per second.",
        targets((sum_rate("nginx_http_connections_total", "nginx_connections_outcome"), "{{nginx_connections_outcome}}")),
        "short", minimum=0),
    container_resources("NGINX Gateway Fabric: data plane", "nginx"),
])

ISTIO_ROW = ("Istio: control plane (pilot_*) and gateway Envoy data plane (istio_*)", [
    timeseries(
        "istiod: xDS pushes by type",
        "Control plane: configuration pushes to the gateway's Envoy per interval, by xDS type "
        "(cds, eds, lds, rds; *_senderr: failed sends).",
        targets((sum_increase("pilot_xds_pushes", "type"), "{{type}}")), "short", bars=True, minimum=0),
    timeseries(
        "istiod: proxy convergence time",
        "Control plane: p50/p99 delay from a configuration change to the proxy holding it.",
        targets((classic_quantile("0.5", "pilot_proxy_convergence_time"), "p50"),
                (classic_quantile("0.99", "pilot_proxy_convergence_time"), "p99")),
        "s", log=True),
    container_resources("istiod: control plane", "discovery"),
    timeseries(
        "Istio gateway: requests by response code",
        "Data plane: requests per second through the gateway's Envoy, by response code.",
        targets((sum_rate("istio_requests_total", "response_code"), "{{response_code}}")), "reqps",
        stack=True, minimum=0),
    timeseries(
        "Istio gateway: request duration",
        "Data plane: p50/p99 of istio_request_duration_milliseconds (classic histogram, shown in seconds).",
        targets((classic_quantile("0.5", "istio_request_duration_milliseconds", scale=" / 1000"), "p50"),
                (classic_quantile("0.99", "istio_request_duration_milliseconds", scale=" / 1000"), "p99")),
        "s", log=True),
    container_resources("Istio gateway: data plane", "istio-proxy"),
])


CONTROLLER_ROWS = [TRAEFIK_ROW, INGRESS_NGINX_ROW, F5_ROW, HAPROXY_ROW, ENVOY_GATEWAY_ROW, NGF_ROW, ISTIO_ROW]


def controllers():
    lay = Layout()
    pods = 'namespace=~"$controller_namespace", pod=~"$controller_pod", container!="", container!="POD"'
    lay.row("Which controller, and the run on the same axis")
    probe = " or ".join(labelled(f"count({metric})", "controller", name) for name, metric in CONTROLLER_PROBES)
    lay.add(stat(
        "Controllers with metrics",
        "Series count per controller whose metrics this Prometheus scrapes: open that controller's "
        "row below (Grafana cannot hide a row by data, so the rows start collapsed).",
        targets((probe, "{{controller}}"), instant=True), "short", decimals=0), 6, 7)
    lay.add(timeseries(
        "Run: request rate and errors (k6)",
        "The selected run as k6 saw it, for lining up with the controller's view.",
        targets((k6_rate("k6_http_reqs_total"), "requests/s"),
                (zero_while_running(k6_rate("k6_bench_errors_total")), "errors/s")),
        "reqps", minimum=0), 9, 7)
    lay.add(timeseries(
        "Run: p99 latency (k6) and ready backends",
        "p99 from k6's native histogram; ready replicas on the right axis.",
        targets((k6_quantile("0.99"), "p99"), ('max(k6_bench_replicas_ready{%s})' % RUN, "ready replicas")),
        "s", log=True, right=("ready replicas", "short")), 9, 7)
    lay.add(timeseries(
        "Controller CPU (cAdvisor)",
        "CPU cores used by the controller pods (container_cpu_usage_seconds_total from the kubelet's "
        "cAdvisor; pods chosen by the namespace and pod-regex variables).",
        targets((f"sum by (pod) (rate(container_cpu_usage_seconds_total{{{pods}}}[$__rate_interval]))", "{{pod}}")),
        "short", minimum=0, axis_label="cores"), 9, 7)
    lay.add(timeseries(
        "Controller memory (cAdvisor working set)",
        "Working-set bytes of the controller pods (what the OOM killer looks at).",
        targets((f"sum by (pod) (container_memory_working_set_bytes{{{pods}}})", "{{pod}}")),
        "bytes", minimum=0), 9, 7)
    lay.add(stat(
        "Controller CPU-seconds per 1,000 requests (cAdvisor)",
        "The controller pods' CPU-seconds over the time range divided by the selected run's requests, "
        "times 1,000: its cost per request (make results writes the same per run, summary "
        "controller_cost). Choose a time range that covers the run alone.",
        targets((f"1000 * sum(increase(container_cpu_usage_seconds_total{{{pods}}}[$__range])) "
                 f"/ sum(increase(k6_http_reqs_total{{{LOAD}}}[$__range]))", "CPU-s per 1k requests"),
                instant=True), "s", decimals=3), 6, 7)
    for title, panels in CONTROLLER_ROWS:
        lay.row(title, collapsed=True)
        for p in panels:
            lay.add(p, 8, 8)
    variables = [
        datasource_variable(), testid_variable(multi=False),
        query_variable("controller_namespace", "Controller namespace",
                       "label_values(container_cpu_usage_seconds_total, namespace)",
                       multi=True, include_all=True, all_value=".*"),
        textbox_variable("controller_pod", "Controller pod regex", CONTRACT["controllerPods"]["podRegex"],
                         "Regex on the pod name of the controller pods (cAdvisor panels)."),
    ]
    return dashboard(
        "bench-controllers", "bench / controller view",
        "What the ingress or Gateway API controller was doing during a run: reloads and configuration "
        "pushes, requests, "
        "latency and upstream errors as the controller sees them, CPU and memory.",
        lay, variables)
