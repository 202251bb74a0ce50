"""Every preset: the TLS server name each client sends is one the listener or Ingress accepts.

Controllers that choose the certificate by server name (NGINX Ingress Controller without a default
certificate, NGINX Gateway Fabric, Envoy Gateway and Istio listeners with a hostname) refuse any
other name at the handshake, so a run whose runners ask for the controller's Service name sends no
load. The runners send the Host header's name as SNI (k6/x/bench servername.go, tested in the
scenarios part); `helm test` asks curl for https://<host>/ and --connect-to's the Service. Here each
rendered client is held against the hostnames of the Ingress TLS sections and HTTPS listeners of
the same render."""
import ipaddress
from urllib.parse import urlsplit

import pytest

from conftest import load_docs, render_cases

CASES = [c for c in render_cases() if c.loadtest_enabled()]
RUNNER_URLS = ("BENCH_TARGET_URL", "BENCH_URL_INGRESS", "BENCH_URL_GATEWAY")


def server_name(url, host):
    """What a client of URL with Host header HOST sends as SNI (None without TLS): the Host's name
    unless it is empty, an address or the URL's own host (servername.go's serverNameOf)."""
    u = urlsplit(url)
    if u.scheme != "https":
        return None
    name = (host or "").split(":")[0].rstrip(".").lower()
    try:
        ipaddress.ip_address(name)
        name = ""
    except ValueError:
        pass
    return name or u.hostname


def accepts(pattern, name):
    pattern = pattern.lower()
    if pattern.startswith("*."):
        return name.endswith(pattern[1:]) and "." not in name[: -len(pattern) + 1]
    return pattern == name


def accepted_names(docs):
    """The hostnames this render's Ingress TLS sections and HTTPS listeners serve a certificate for."""
    names = set()
    for d in docs:
        if d["kind"] == "Ingress":
            names |= {h for tls in d["spec"].get("tls") or [] for h in tls.get("hosts") or []}
        elif d["kind"] == "Gateway":
            names |= {l["hostname"] for l in d["spec"]["listeners"] if l["protocol"] == "HTTPS" and l.get("hostname")}
    return names


def clients(docs):
    """(who, url, server name) of every TLS client the render makes: the runners per URL they use,
    and the `helm test` pod."""
    out = []
    for d in docs:
        if d["kind"] == "TestRun":
            env = {e["name"]: e.get("value", "") for e in d["spec"]["runner"]["env"]}
            for key in RUNNER_URLS:
                if env.get(key):
                    out.append((f"runner {key}", env[key], server_name(env[key], env.get("BENCH_TARGET_HOST"))))
        elif d["kind"] == "Pod" and (d["metadata"].get("annotations") or {}).get("helm.sh/hook") == "test":
            env = {e["name"]: e.get("value", "") for e in d["spec"]["containers"][0]["env"]}
            if "URL" not in env:
                continue  # the TestRun check (bench-test-testrun) talks to the API server only
            url = env["URL"]
            if env.get("CONNECT_TO"):
                host, port, service, service_port = env["CONNECT_TO"].split(":")
                assert (urlsplit(url).hostname, str(urlsplit(url).port or 443)) == (host, port), (url, env["CONNECT_TO"])
            out.append(("helm test", url, server_name(url, urlsplit(url).hostname)))
    return [c for c in out if c[2] is not None]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_tls_client_names_a_host_its_listener_accepts(helms, case):
    docs = load_docs(helms[3].rendered(case).stdout)
    names = accepted_names(docs)
    tls_clients = clients(docs)
    refused = [(who, url, sni) for who, url, sni in tls_clients if not any(accepts(n, sni) for n in names)]
    assert not refused, f"{case.name}: server names no listener or Ingress TLS section accepts ({sorted(names)}): {refused}"


def test_the_tls_presets_have_tls_clients_to_check(helms):
    """Guards the check above against passing vacuously: the presets that send load over TLS."""
    with_tls = [c.name for c in CASES if clients(load_docs(helms[3].rendered(c).stdout))]
    for preset in ("values/traefik", "values/ingress-nginx", "values/nginx-inc", "values/haproxy",
                   "values/envoy-gateway", "values/nginx-gateway-fabric", "values/istio"):
        assert preset in with_tls, f"{preset} renders no TLS client: {with_tls}"


def test_a_runner_on_the_service_name_would_be_refused():
    """The check itself: the Service name (what Go sent before servername.go) is refused."""
    url = "https://bench-traefik.bench.svc"
    assert server_name(url, "bench.local") == "bench.local"
    assert server_name(url, "") == "bench-traefik.bench.svc"
    assert not accepts("bench.local", server_name(url, ""))
    assert accepts("*.routes.bench.local", "h-1.routes.bench.local")
    assert not accepts("*.routes.bench.local", "a.h-1.routes.bench.local")
