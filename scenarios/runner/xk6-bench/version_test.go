package bench

import (
	"runtime/debug"
	"testing"
)

func TestK6VersionIsTheK6ModulesVersion(t *testing.T) {
	info := &debug.BuildInfo{Deps: []*debug.Module{
		{Path: "go.k6.io/k6-extra", Version: "v9.9.9"},
		{Path: "go.k6.io/k6", Version: "v1.2.3"},
	}}
	if got := k6VersionOf(info); got != "v1.2.3" {
		t.Fatalf("k6VersionOf = %q, want v1.2.3", got)
	}
	v2 := &debug.BuildInfo{Deps: []*debug.Module{{Path: "go.k6.io/k6/v2", Version: "v2.2.0"}}}
	if got := k6VersionOf(v2); got != "v2.2.0" {
		t.Fatalf("k6VersionOf(v2) = %q, want v2.2.0", got)
	}
	if got := k6VersionOf(&debug.BuildInfo{}); got != "" {
		t.Fatalf("k6VersionOf(no k6) = %q, want empty", got)
	}
}
