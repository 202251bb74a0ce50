"""Short real runs of the load scenarios against nginx: static, dropped iterations, keep-alive,
TLS handshakes, throughput, paths. Counts are compared with nginx's access log."""
import json
import re

import pytest


def k6_requests(run):
    return sum(1 for r in run.access if r.from_k6)


# ---- static ----

def test_static_exit_0(static_run):
    assert static_run.rc == 0, static_run.stderr[-3000:]


def test_static_summary_is_bench_summary_v1_with_run_tags(static_run):
    s = static_run.summary
    assert (s["schema"], s["scenario"], s["testid"], s["controller"]) == ("bench.summary/v1", "static", "t-static", "none")
    assert s["settings"]["rate"] == 200 and s["settings"]["tls"] is False
    assert len(s["latency_ms"]) == 10 and s["by_path"] == {}


def test_static_stdout_json_between_markers_equals_summary_json(static_run):
    m = re.search(r"^BENCH_SUMMARY_JSON_BEGIN\n(.*?)\nBENCH_SUMMARY_JSON_END$", static_run.stdout, re.S | re.M)
    assert m, "no BENCH_SUMMARY_JSON markers on stdout"
    assert json.loads(m[1]) == static_run.summary


def test_static_summary_count_equals_what_nginx_served(static_run):
    assert static_run.summary["requests"]["total"] == k6_requests(static_run)


def test_static_rate_held_no_drops(static_run):
    r = static_run.summary["requests"]
    assert r["dropped_iterations"] == 0 and 588 <= r["total"] <= 612, r


def test_static_no_errors(static_run):
    assert sum(static_run.summary["errors"].values()) == 0, static_run.summary["errors"]


def test_static_nginx_saw_only_200s(static_run):
    assert [r for r in static_run.access if r.status != 200] == []


def test_static_percentiles_ordered(static_run):
    l = static_run.summary["latency_ms"]
    order = [l[k] for k in ("min", "p50", "p90", "p99", "p99.9", "p99.9999", "max")]
    assert order == sorted(order), l


def test_static_one_setup_check_not_counted(static_run):
    assert sum(1 for r in static_run.access if r.agent == "bench-setup") == 1


def test_static_text_table_printed_and_written(static_run):
    assert "p99.9999" in static_run.table


def test_static_keep_alive_reused_connections(static_run):
    assert sum(1 for r in static_run.access if r.connection_requests > 1) > 500


# ---- dropped: one VU cannot send 20 000 req/s; k6 drops iterations, the summary counts them (k6
# tags dropped_iterations with `scenario` only, not the load scenarios' role tag), the run fails ----

@pytest.fixture(scope="module")
def dropped(k6, servers):
    return k6("dropped", "static.js", dict(BENCH_TARGET_URL=servers.http, BENCH_RATE=20000, BENCH_DURATION="2s",
                                           BENCH_CONNECTIONS=1))


def test_dropped_exit_99_threshold_on_dropped_iterations(dropped):
    assert dropped.rc == 99


def test_dropped_summary_counts_them(dropped):
    r = dropped.summary["requests"]
    assert r["dropped_iterations"] > 10000 and r["total"] > 0, r


def test_dropped_sent_plus_dropped_is_the_40000_scheduled(dropped):
    r = dropped.summary["requests"]
    assert abs(r["total"] + r["dropped_iterations"] - 40000) <= 40000 * 0.02, r


def test_dropped_the_table_shouts_it(dropped):
    assert "k6 DROPPED" in dropped.table


# ---- keepalive.js ----

@pytest.fixture(scope="module")
def keepalive(k6, servers):
    return k6("keepalive", "keepalive.js", dict(BENCH_TARGET_URL=servers.http, BENCH_RATE=100, BENCH_DURATION="2s",
                                                BENCH_CONNECTIONS=10, BENCH_TIMEOUT="500ms"))


def test_keepalive_exit_0_both_variants_in_by_path(keepalive):
    assert keepalive.rc == 0, keepalive.stderr[-3000:]
    s = keepalive.summary
    assert sorted(s["by_path"]) == ["close", "keep-alive"] and s["settings"]["keepalive"] is None


def test_keepalive_each_variant_held_its_rate(keepalive):
    totals = {k: v["requests"]["total"] for k, v in keepalive.summary["by_path"].items()}
    assert all(196 <= t <= 204 for t in totals.values()), totals


def test_keepalive_close_opened_one_connection_per_request(keepalive):
    close = keepalive.summary["by_path"]["close"]["requests"]["total"]
    new = sum(1 for r in keepalive.access if r.from_k6 and r.connection_requests == 1)
    assert close <= new <= close + 10, f"{new} new connections for {close} close requests"


def test_keepalive_summary_count_equals_what_nginx_served(keepalive):
    assert keepalive.summary["requests"]["total"] == k6_requests(keepalive)


# ---- tls-handshakes.js ----

@pytest.fixture(scope="module")
def tls(k6, servers):
    return k6("tls", "tls-handshakes.js", dict(BENCH_TARGET_URL=servers.url("https", "https"), BENCH_RATE=50,
                                               BENCH_DURATION="2s", BENCH_CONNECTIONS=10))


def test_tls_exit_0_no_errors_https_and_no_keepalive_in_settings(tls):
    assert tls.rc == 0, tls.stderr[-3000:]
    s = tls.summary
    assert s["requests"]["total"] >= 98 and sum(s["errors"].values()) == 0
    assert s["settings"]["tls"] and s["settings"]["keepalive"] is False and s["settings"]["path"] == "/bytes/0"


def test_tls_every_request_did_a_tls_handshake(tls):
    assert tls.summary["tls_handshake_ms"]["min"] > 0


def test_tls_nginx_saw_one_request_per_connection_no_session_reuse(tls):
    fresh = sum(1 for r in tls.access if r.from_k6 and r.connection_requests == 1 and r.ssl_reused == ".")
    assert fresh == tls.summary["requests"]["total"]


# ---- throughput.js ----

@pytest.fixture(scope="module")
def throughput(k6, servers):
    return k6("throughput", "throughput.js", dict(BENCH_TARGET_URL=servers.http, BENCH_RATE=20, BENCH_DURATION="2s",
                                                  BENCH_CONNECTIONS=10))


def test_throughput_exit_0_and_1_mib_bodies_received(throughput):
    assert throughput.rc == 0, throughput.stderr[-3000:]
    s = throughput.summary
    assert s["settings"]["path"] == "/bytes/1m" and s["requests"]["total"] >= 39
    assert s["throughput"]["bytes_received"] >= s["requests"]["total"] * 1048576


def test_throughput_nginx_sent_as_many_1_mib_bodies_as_k6_counted(throughput):
    sent = sum(1 for r in throughput.access if r.from_k6 and r.bytes == 1048576)
    assert sent == throughput.summary["requests"]["total"]


# ---- paths.js ----

@pytest.fixture(scope="module")
def paths(k6, servers):
    return k6("paths", "paths.js", dict(BENCH_URL_CLUSTERIP=servers.http, BENCH_URL_POD=servers.url("http2"),
                                        BENCH_RATE=50, BENCH_DURATION="1s", BENCH_CONNECTIONS=10, BENCH_TIMEOUT="500ms"))


def test_paths_exit_0_four_parts_in_order(paths):
    assert paths.rc == 0, paths.stderr[-3000:]
    assert list(paths.summary["by_path"]) == ["clusterip-4k", "clusterip-100k", "pod-4k", "pod-100k"]


def test_paths_every_parts_count_equals_what_nginx_served_on_that_port_and_body(paths, servers):
    seen, want = {}, {}
    for part in ("clusterip-4k", "clusterip-100k", "pod-4k", "pod-100k"):
        port = servers.ports["http" if part.startswith("clusterip") else "http2"]
        uri = "/bytes/" + part.split("-")[1]
        want[part] = paths.summary["by_path"][part]["requests"]["total"]
        seen[part] = sum(1 for r in paths.access if r.port == port and r.uri == uri and r.from_k6)
    assert want == seen and min(want.values()) >= 49, f"summary {want}, nginx {seen}"
