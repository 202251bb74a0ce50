package bench

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/net/http2"
)

// The TLS server name (SNI) of a request is the name in its Host header, not its URL's host.
//
// Go's transport takes SNI from the URL. bench's URLs name a controller's Service
// (https://<release>-traefik.<ns>.svc) and its Host header names the route (bench.local), so SNI
// asked for the Service: NGINX Ingress Controller without a default certificate, NGINX Gateway
// Fabric, and Envoy Gateway's and Istio's listeners with a hostname choose the certificate by SNI
// and refuse that handshake; NGINX Gateway Fabric answers 421 when SNI and Host differ. A user's
// client reaches the route by its own DNS name and sends that name in both.
//
// Each such name gets a clone of the VU's transport whose TLS config names it: the clone keeps
// k6's dialer (hosts, blocked addresses), TLS options and keep-alive setting, and its own
// connection pools (HTTP/1.1 and HTTP/2), so no connection opened for one name carries a request
// for another. A request whose Host is its URL's host, an IP address, or not over TLS keeps the
// VU's own transport.

type serverNames struct {
	mu     sync.Mutex // http.batch sends from several goroutines of one VU
	byName map[string]*http.Transport
}

// serverNameOf(req): the name the request's TLS handshake must carry, "" to keep the URL's.
func serverNameOf(req *http.Request) string {
	if req.URL == nil || req.URL.Scheme != "https" || req.Host == "" {
		return ""
	}
	name := req.Host
	if h, _, err := net.SplitHostPort(name); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if name == "" || name == strings.ToLower(req.URL.Hostname()) || net.ParseIP(name) != nil {
		return ""
	}
	return name
}

// transportFor(req): the VU's transport, or the clone for the request's server name.
func (r *replayCounter) transportFor(req *http.Request) *http.Transport {
	name := serverNameOf(req)
	if name == "" {
		return r.inner
	}
	r.names.mu.Lock()
	defer r.names.mu.Unlock()
	if t, ok := r.names.byName[name]; ok {
		return t
	}
	t := cloneForServerName(r.inner, name)
	if r.names.byName == nil {
		r.names.byName = make(map[string]*http.Transport)
	}
	r.names.byName[name] = t
	return t
}

// cloneForServerName(inner, name): inner's settings with SNI name and HTTP/2 pools of its own
// (http.Transport.Clone copies the HTTP/2 upgrade bound to inner's pools, keyed by URL host).
func cloneForServerName(inner *http.Transport, name string) *http.Transport {
	t := inner.Clone()
	t.TLSClientConfig.ServerName = name
	if _, h2 := inner.TLSNextProto["h2"]; h2 {
		t.TLSNextProto = nil
		if err := http2.ConfigureTransport(t); err != nil {
			// It fails only when h2 is set up already, which was just undone; should it ever
			// fail, an empty map keeps the clone on HTTP/1.1, still with the right name.
			t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
	}
	return t
}

// setKeepAlive(keepAlive) on the VU's transport and every clone (a clone made later copies the
// VU's), closing idle connections when it changes. Called for every request: the usual case is one
// field read.
func (r *replayCounter) setKeepAlive(keepAlive bool) {
	disable := !keepAlive
	if r.inner.DisableKeepAlives == disable {
		return
	}
	r.names.mu.Lock()
	defer r.names.mu.Unlock()
	r.inner.DisableKeepAlives = disable
	r.inner.CloseIdleConnections()
	for _, t := range r.names.byName {
		t.DisableKeepAlives = disable
		t.CloseIdleConnections()
	}
}

// streamServerName(host): this VU's WebSocket (k6/websockets) and gRPC (k6/net/grpc)
// connections send host's name as TLS SNI: both clone the VU's TLS config when they connect, and
// neither can be told a server name. The VU's TLS config is replaced by a copy naming it; k6's http
// transport keeps the config it was built with (its requests name hosts through transportFor).
// Long-lived's stream VUs call it with the Host they send; an empty host or an address keeps the
// URL's name.
func (m *instance) streamServerName(host string) error {
	state := m.vu.State()
	if state == nil {
		return errors.New("bench.streamServerName must be called from a VU, not the init context")
	}
	name := host
	if h, _, err := net.SplitHostPort(name); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if state.TLSConfig == nil || name == "" || net.ParseIP(name) != nil || state.TLSConfig.ServerName == name {
		return nil
	}
	cfg := state.TLSConfig.Clone()
	cfg.ServerName = name
	state.TLSConfig = cfg
	return nil
}
