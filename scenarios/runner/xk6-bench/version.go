package bench

import "runtime/debug"

// k6Modules: the module paths k6 has been released under; the one this binary holds is its k6.
var k6Modules = []string{"go.k6.io/k6", "go.k6.io/k6/v2"}

// k6Version: the k6 release this runner binary was built from (e.g. "v1.2.3"), read from the
// module versions Go records in every binary: k6 keeps its own version constant in an internal
// package no extension can import. A run's summary records it (settings.k6_version), so runs made
// on different k6 releases are not compared as if alike. "" when the binary records no k6 module
// (a test binary).
func k6Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return k6VersionOf(info)
}

func k6VersionOf(info *debug.BuildInfo) string {
	for _, dep := range info.Deps {
		for _, path := range k6Modules {
			if dep.Path != path {
				continue
			}
			if dep.Replace != nil && dep.Replace.Version != "" {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	return ""
}
