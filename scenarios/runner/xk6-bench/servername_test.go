package bench

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.k6.io/k6/js/modulestest"
	"go.k6.io/k6/lib"
	"golang.org/x/net/http2"
)

func TestServerNameOf(t *testing.T) {
	cases := []struct{ url, host, want string }{
		{"https://bench-traefik.bench.svc/", "bench.local", "bench.local"},
		{"https://bench-traefik.bench.svc:8443/x", "bench.local:8443", "bench.local"},
		{"https://bench-traefik.bench.svc/", "Bench.Local.", "bench.local"},
		{"https://bench.local/", "bench.local", ""},            // the URL's own name: nothing to change
		{"https://10.0.0.1/", "", ""},                          // no Host header
		{"https://bench-traefik.bench.svc/", "10.1.2.3", ""},   // an address is never a server name
		{"http://bench-traefik.bench.svc/", "bench.local", ""}, // no TLS
	}
	for _, c := range cases {
		req, err := http.NewRequest(http.MethodGet, c.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = c.host
		if got := serverNameOf(req); got != c.want {
			t.Errorf("serverNameOf(%s, Host %q) = %q, want %q", c.url, c.host, got, c.want)
		}
	}
}

// sniServer answers with the TLS server name its handshake carried and the protocol it spoke.
func sniServer(t *testing.T, h2 bool) *httptest.Server {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.TLS.ServerName+" "+r.Proto)
	}))
	s.EnableHTTP2 = h2
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// k6Transport is the VU transport k6 v0.51 builds: TLS options, HTTP/2 configured by x/net.
func k6Transport(t *testing.T) *http.Transport {
	inner := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // test server
	if err := http2.ConfigureTransport(inner); err != nil {
		t.Fatal(err)
	}
	return inner
}

func get(t *testing.T, rt http.RoundTripper, url, host string) string {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET %s (Host %s): %v", url, host, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

func TestRequestsSendTheirHostAsServerName(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		s := sniServer(t, h2)
		// the server's address by a name that is not the Host header's, as a Service name is
		url := strings.Replace(s.URL, "127.0.0.1", "localhost", 1)
		r := &replayCounter{inner: k6Transport(t)}
		proto := map[bool]string{false: "HTTP/1.1", true: "HTTP/2.0"}[h2]
		for _, host := range []string{"bench.local", "h-1.routes.bench.local", "bench.local"} {
			if got, want := get(t, r, url, host), host+" "+proto; got != want {
				t.Errorf("h2=%v Host %s: server saw %q, want %q", h2, host, got, want)
			}
		}
		if got, want := get(t, r, url, ""), "localhost "+proto; got != want {
			t.Errorf("h2=%v without Host: server saw %q, want %q", h2, got, want)
		}
		if n := len(r.names.byName); n != 2 {
			t.Errorf("h2=%v: %d server-name transports, want 2 (one per name)", h2, n)
		}
	}
}

func TestKeepAliveReachesEveryServerNameTransport(t *testing.T) {
	s := sniServer(t, false)
	r := &replayCounter{inner: k6Transport(t)}
	get(t, r, strings.Replace(s.URL, "127.0.0.1", "localhost", 1), "bench.local")
	r.setKeepAlive(false)
	if !r.inner.DisableKeepAlives || !r.names.byName["bench.local"].DisableKeepAlives {
		t.Fatal("keep-alive off did not reach the VU transport and its server-name clone")
	}
}

// streamServerName replaces the VU's TLS config by a copy naming the host (what the WebSocket and
// gRPC modules clone when they connect), leaves the http transport's config alone, and keeps the
// URL's name for an address or no host. Outside a VU it is an error.
func TestStreamServerName(t *testing.T) {
	own := &tls.Config{InsecureSkipVerify: true}
	vu := &modulestest.VU{StateField: &lib.State{TLSConfig: own}}
	m := &instance{vu: vu}
	for _, host := range []string{"", "10.1.2.3", "[::1]:443"} {
		if err := m.streamServerName(host); err != nil || vu.StateField.TLSConfig != own {
			t.Fatalf("streamServerName(%q) changed the config (err %v)", host, err)
		}
	}
	if err := m.streamServerName("Bench.Local:8443"); err != nil {
		t.Fatal(err)
	}
	got := vu.StateField.TLSConfig
	if got == own || got.ServerName != "bench.local" || !got.InsecureSkipVerify || own.ServerName != "" {
		t.Fatalf("got ServerName %q (same config: %v, insecure kept: %v), the transport's now %q",
			got.ServerName, got == own, got.InsecureSkipVerify, own.ServerName)
	}
	if err := (&instance{vu: &modulestest.VU{}}).streamServerName("bench.local"); err == nil {
		t.Fatal("no error outside a VU")
	}
}
