"""The chart's API scripts (charts/bench/files/loadtest/), run with sh and curl against a stand-in
API server on 127.0.0.1 over TLS: the `helm test` TestRun check (check-testrun.sh, issue 26 finding
8) and the pre-delete hook's steps (delete-and-wait.sh, delete-routes.sh).

Each case runs twice: with Debian's tools, and with BusyBox's applets (sh, grep, sed, tr, cut, sort,
cat, sleep, dirname) and curl alone on PATH, as in the hook's default image, curlimages/curl (Alpine).

The stand-in answers from a table {(method, path): (status, body)} (a list of answers is served in
turn, the last one repeated) and records every request, so a case can say what the script asked
for. api.sh takes BENCH_API_URL and BENCH_SA_DIR (a token and the stand-in's CA) for this.
"""
import json
import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from conftest import ROOT

SCRIPTS = ROOT / "charts" / "bench" / "files" / "loadtest"
NS, TESTRUN = "bench", "bench-loadtest"
TESTRUN_PATH = f"/apis/k6.io/v1alpha1/namespaces/{NS}/testruns/{TESTRUN}"
PODS_PATH = f"/api/v1/namespaces/{NS}/pods"
RUNNER_IMAGE = "registry.example/bench/k6:v1.8.1"
STARTER_IMAGE = "ghcr.io/grafana/k6-operator:starter-v1.5.0"


APPLETS = ("sh", "grep", "sed", "tr", "cut", "sort", "cat", "sleep", "dirname")


class StandIn:
    def __init__(self, workdir, path):
        self.answers, self.requests, self.path = {}, [], path
        key, cert = workdir / "key.pem", workdir / "ca.crt"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", cert], check=True, capture_output=True)
        (workdir / "token").write_text("stand-in-token")
        self.sa_dir = workdir
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                stand_in.requests.append((self.command, self.path, body, self.headers.get("User-Agent")))
                answers = stand_in.answers.get((self.command, urlsplit(self.path).path), [(404, {"kind": "Status"})])
                status, payload = answers[0] if len(answers) == 1 else answers.pop(0)
                data = json.dumps(payload, separators=(",", ":")).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, method, path, *answers):
        self.answers[(method, path)] = list(answers)

    def run(self, script, *args, **env):
        base = {"PATH": self.path, "BENCH_API_URL": self.url, "BENCH_SA_DIR": str(self.sa_dir),
                "BODY": str(self.sa_dir / "body.json")}
        return subprocess.run([shutil.which("sh", path=self.path), SCRIPTS / script, *args], env={**base, **env},
                              capture_output=True, text=True, timeout=60)


@pytest.fixture(params=["debian", "busybox"])
def api(request, tmp_path):
    path = "/usr/bin:/bin"
    if request.param == "busybox":
        busybox = shutil.which("busybox")
        if not busybox:
            pytest.skip("no busybox (Debian package busybox, ci/test/chart/packages.txt)")
        bin_dir = tmp_path / "busybox-bin"
        bin_dir.mkdir()
        for applet in APPLETS:
            (bin_dir / applet).symlink_to(busybox)
        (bin_dir / "curl").symlink_to(shutil.which("curl"))
        path = str(bin_dir)
    stand_in = StandIn(tmp_path, path)
    yield stand_in
    stand_in.server.shutdown()


def a_testrun(stage=None):
    return {"kind": "TestRun", "metadata": {"name": TESTRUN}, "spec": {"parallelism": 1},
            "status": {"stage": stage} if stage else {}}


def pod(name, reason, message, *, init=False):
    key = "initContainerStatuses" if init else "containerStatuses"
    return {"metadata": {"name": name, "generateName": name[:-5]},
            "status": {"phase": "Pending", key: [{"name": "k6", "state": {"waiting": {"reason": reason, "message": message}},
                                                   "image": RUNNER_IMAGE}]}}


def pods(*items):
    return {"kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": list(items)}


def check(api, start_seconds=3, cleanup=""):
    return api.run("check-testrun.sh", TESTRUN_NAMESPACE=NS, TESTRUN_NAME=TESTRUN, START_SECONDS=str(start_seconds),
                   CLEANUP=cleanup, RUNNER_IMAGE=RUNNER_IMAGE, STARTER_IMAGE=STARTER_IMAGE)


@pytest.mark.parametrize("stage", ["started", "finished"])
def test_check_testrun_passes_once_the_run_started(api, stage):
    api.answer("GET", TESTRUN_PATH, (200, a_testrun("created")), (200, a_testrun(stage)))
    api.answer("GET", PODS_PATH, (200, pods()))
    result = check(api)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"is {stage}" in result.stdout
    # compact JSON: the API server pretty-prints only for curl's own user agent
    assert {ua for *_, ua in api.requests} == {"bench"}


def test_check_testrun_names_the_runner_image_that_cannot_be_pulled(api):
    api.answer("GET", TESTRUN_PATH, (200, a_testrun("initialization")))
    api.answer("GET", PODS_PATH, (200, pods(pod("bench-loadtest-initializer-x7k2p", "ImagePullBackOff",
                                                 f'Back-off pulling image "{RUNNER_IMAGE}"'))))
    result = check(api, start_seconds=120)
    assert result.returncode == 1, result.stdout
    assert "cannot start (stage initialization)" in result.stdout
    assert (f'bench-loadtest-initializer-x7k2p: ImagePullBackOff: Back-off pulling image "{RUNNER_IMAGE}" '
            "(set loadtest.runner.image (initializer and runners), loadtest.runner.imagePullSecrets)") in result.stdout
    # at once, not after the 120 s
    assert sum(1 for m, p, *_ in api.requests if p == TESTRUN_PATH) == 1


def test_check_testrun_names_a_missing_secret(api):
    api.answer("GET", TESTRUN_PATH, (200, a_testrun("created")))
    api.answer("GET", PODS_PATH, (200, pods(pod("bench-loadtest-1-abcde", "CreateContainerConfigError",
                                                 'secret "remote-write" not found'))))
    result = check(api)
    assert result.returncode == 1
    assert 'CreateContainerConfigError: secret "remote-write" not found' in result.stdout
    assert "loadtest.runner.envFrom" in result.stdout


def test_check_testrun_says_no_operator_when_no_stage_comes(api):
    api.answer("GET", TESTRUN_PATH, (200, a_testrun()))
    api.answer("GET", PODS_PATH, (200, pods()))
    result = check(api, start_seconds=2)
    assert result.returncode == 1
    assert "has no stage after 2 s: no k6-operator handles it" in result.stdout
    assert "loadtest.operator.enabled" in result.stdout


def test_check_testrun_reports_a_slow_pull_when_the_time_is_up(api):
    api.answer("GET", TESTRUN_PATH, (200, a_testrun("initialization")))
    api.answer("GET", PODS_PATH, (200, pods(pod("bench-loadtest-initializer-x7k2p", "ErrImagePull",
                                                 f'pulling image "{RUNNER_IMAGE}": i/o timeout'))))
    result = check(api, start_seconds=2)
    assert result.returncode == 1
    assert "still at stage initialization after 2 s (tests.testRun.startSeconds)" in result.stdout
    assert "ErrImagePull" in result.stdout and "loadtest.runner.image" in result.stdout


def test_check_testrun_stage_error_points_at_the_initializer_log(api):
    api.answer("GET", TESTRUN_PATH, (200, a_testrun("error")))
    result = check(api)
    assert result.returncode == 1
    assert f"kubectl -n {NS} logs job/{TESTRUN}-initializer" in result.stdout


@pytest.mark.parametrize("cleanup, code", [("post", 0), ("", 1)])
def test_check_testrun_absent(api, cleanup, code):
    result = check(api, cleanup=cleanup)
    assert result.returncode == code, result.stdout


def test_delete_and_wait_testrun_deletes_in_the_foreground_and_waits_for_its_pods(api):
    api.answer("DELETE", TESTRUN_PATH, (200, a_testrun("started")))
    api.answer("GET", TESTRUN_PATH, (200, a_testrun("started")), (404, {}))
    api.answer("GET", PODS_PATH, (200, pods(pod("bench-loadtest-1-abcde", "x", "y"))), (200, pods()))
    result = api.run("delete-and-wait.sh", "testrun", TESTRUN_NAMESPACE=NS, TESTRUN_NAME=TESTRUN, WAIT_SECONDS="20")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"TestRun {NS}/{TESTRUN} and its pods are gone" in result.stdout
    (delete,) = [r for r in api.requests if r[0] == "DELETE"]
    assert json.loads(delete[2])["propagationPolicy"] == "Foreground"
    assert any(p == f"{PODS_PATH}?labelSelector=app%3Dk6%2Ck6_cr%3D{TESTRUN}" for _, p, *_ in api.requests)


def test_delete_and_wait_gateway_gives_up_naming_the_key(api):
    path = f"/apis/gateway.networking.k8s.io/v1/namespaces/{NS}/gateways/bench"
    api.answer("DELETE", path, (200, {}))
    api.answer("GET", path, (200, {}))
    result = api.run("delete-and-wait.sh", "gateway", GATEWAY_NAMESPACE=NS, GATEWAY_NAME="bench",
                     DATA_PLANE_SELECTOR="gateway.networking.k8s.io%2Fgateway-name%3Dbench", WAIT_SECONDS="2")
    assert result.returncode == 1
    assert "still there after 2 s (loadtest.cleanupHook.waitSeconds)" in result.stdout


def test_delete_and_wait_refuses_an_unknown_step(api):
    assert api.run("delete-and-wait.sh", "namespace").returncode == 2
    assert api.requests == []


def test_delete_routes_lists_only_this_runs_routes(api):
    """The selector carries this run's id, so another release's routes (another run id) are never
    listed; the stand-in lists what the selector asked for."""
    routes = f"/apis/gateway.networking.k8s.io/v1/namespaces/{NS}/httproutes"
    ingresses = f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses"
    api.answer("GET", routes, (200, {"items": [{"metadata": {"name": "bench-route-h-1"}}]}))
    api.answer("GET", ingresses, (200, {"items": []}))
    api.answer("DELETE", f"{routes}/bench-route-h-1", (200, {}))
    result = api.run("delete-routes.sh", ROUTES_NAMESPACE=NS, ROUTES_SELECTOR="bench%2Froute-run%3Dbench-r1-x")
    assert result.returncode == 0, result.stdout + result.stderr
    lists = [p for m, p, *_ in api.requests if m == "GET"]
    assert lists == [f"{routes}?labelSelector=bench%2Froute-run%3Dbench-r1-x",
                     f"{ingresses}?labelSelector=bench%2Froute-run%3Dbench-r1-x"]
    assert [p for m, p, *_ in api.requests if m == "DELETE"] == [f"{routes}/bench-route-h-1"]


def test_delete_routes_deletes_long_lived_reload_route_and_only_names_of_the_runners_shape(api):
    """long-lived's reload route (bench-route-i-reload) is deleted like a route experiment's; a
    listed name of another shape is never used in a call."""
    routes = f"/apis/gateway.networking.k8s.io/v1/namespaces/{NS}/httproutes"
    ingresses = f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses"
    api.answer("GET", routes, (200, {"items": []}))
    api.answer("GET", ingresses, (200, {"items": [{"metadata": {"name": "bench-route-i-reload"}},
                                                  {"metadata": {"name": "bench-route-i-reloaded"}},
                                                  {"metadata": {"name": "bench-backend"}}]}))
    api.answer("DELETE", f"{ingresses}/bench-route-i-reload", (200, {}))
    result = api.run("delete-routes.sh", ROUTES_NAMESPACE=NS, ROUTES_SELECTOR="bench%2Froute-run%3Dbench-r1-x")
    assert result.returncode == 0, result.stdout + result.stderr
    assert [p for m, p, *_ in api.requests if m == "DELETE"] == [f"{ingresses}/bench-route-i-reload"]


def test_delete_leftovers_counts_the_absent_as_done_and_stops_on_a_refusal(api, tmp_path):
    listing = tmp_path / "leftovers.txt"
    listing.write_text(f"{PODS_PATH} bench-test-clusterip\n/api/v1/namespaces/{NS}/secrets gone\n"
                       f"/api/v1/namespaces/{NS}/secrets forbidden\n/api/v1/namespaces/{NS}/secrets never")
    api.answer("DELETE", f"{PODS_PATH}/bench-test-clusterip", (200, {}))
    api.answer("DELETE", f"/api/v1/namespaces/{NS}/secrets/forbidden", (403, {"reason": "Forbidden"}))
    result = api.run("delete-leftovers.sh", LEFTOVERS=str(listing))
    assert result.returncode == 1
    assert "deleting /api/v1/namespaces/bench/secrets/forbidden: HTTP 403" in result.stdout
    assert [p for _, p, *_ in api.requests][-1].endswith("/forbidden"), "went on after a refusal"


def test_delete_leftovers_refuses_a_malformed_line_before_calling_anything(api, tmp_path):
    listing = tmp_path / "leftovers.txt"
    listing.write_text(f"{PODS_PATH} x;id\n")
    result = api.run("delete-leftovers.sh", LEFTOVERS=str(listing))
    assert result.returncode == 1 and "refusing a malformed line" in result.stdout
    assert api.requests == []
