// CoreDNS for the local cluster with only the plugins its Corefile (ci/cluster/coredns.yaml) names.
// The stock build compiles every plugin (cloud DNS providers, etcd, dnstap, ...); this one skips
// them and cuts the cold build. CoreDNS documents this way of choosing plugins outside its tree.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

// The order CoreDNS runs them in, as in its own plugin.cfg (a directive's place there is its
// place in every server block); a Corefile naming a plugin missing here fails at start.
func init() {
	dnsserver.Directives = []string{"reload", "ready", "health", "errors", "loadbalance", "cache", "kubernetes"}
}

func main() { coremain.Run() }
