package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The layouts a runner meets: a k6-operator pod on cgroup v2 (the container's own cgroup mounted
// at /sys/fs/cgroup, with or without a cgroup namespace), a hybrid v1 host like the test machine,
// and a host where nothing can be read. The files are written as the kernel shows them.

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const v2Stat = "usage_usec 5000000\nuser_usec 4000000\nsystem_usec 1000000\nnr_periods 400\nnr_throttled 300\nthrottled_usec 2500000\n"

// podV2 lays out a runner pod's view: the container's cgroup (cpu.stat v2Stat, cpu.max as given)
// mounted read-only, /proc/self/cgroup naming cgroupPath, the mount's root mountRoot; returns what
// findCPUCgroup finds and the mount point.
func podV2(t *testing.T, cgroupPath, mountRoot, cpuMax string) (*cpuCgroup, string) {
	tmp := t.TempDir()
	mnt := filepath.Join(tmp, "sys-fs-cgroup")
	write(t, filepath.Join(mnt, "cpu.stat"), v2Stat)
	write(t, filepath.Join(mnt, "cpu.max"), cpuMax)
	write(t, filepath.Join(tmp, "cgroup"), "0::"+cgroupPath+"\n")
	write(t, filepath.Join(tmp, "mountinfo"), "1290 1280 0:30 "+mountRoot+" "+mnt+" ro,nosuid,nodev - cgroup2 cgroup rw\n")
	return findCPUCgroup(filepath.Join(tmp, "cgroup"), filepath.Join(tmp, "mountinfo")), mnt
}

// A pod with a cgroup namespace sees its cgroup as "/"; without one, the host's path, which is also
// the mount's root. Either way the mount point is the cgroup.
func TestPodV2(t *testing.T) {
	for _, tc := range []struct {
		name, path, cpuMax string
		quota              float64
	}{
		{"cgroup namespace, CPU limit", "/", "25000 100000\n", 0.25},
		{"no cgroup namespace, no CPU limit", "/kubepods.slice/pod1/cri-abc", "max 100000\n", 0},
	} {
		c, mnt := podV2(t, tc.path, tc.path, tc.cpuMax)
		if c.version != "v2" || c.dir != mnt {
			t.Fatalf("%s: got %+v, want v2 %s", tc.name, c, mnt)
		}
		if q := c.quotaCores(); q != tc.quota {
			t.Fatalf("%s: quota %v, want %v", tc.name, q, tc.quota)
		}
		s := c.snapshot()
		if !s.statOK || s.periods != 400 || s.throttledPeriods != 300 || s.throttled != 2500*time.Millisecond {
			t.Fatalf("%s: snapshot %+v", tc.name, s)
		}
	}
}

func TestHybridHostV1(t *testing.T) {
	tmp := t.TempDir()
	cpu := filepath.Join(tmp, "cpu")
	dir := filepath.Join(cpu, "bench-scenarios-1")
	write(t, filepath.Join(dir, "cpu.stat"), "nr_periods 65\nnr_throttled 58\nthrottled_time 2328400000\nnr_bursts 0\nburst_time 0\n")
	write(t, filepath.Join(dir, "cpu.cfs_quota_us"), "25000\n")
	write(t, filepath.Join(dir, "cpu.cfs_period_us"), "100000\n")
	write(t, filepath.Join(tmp, "unified", "cpu.stat"), "usage_usec 1\n")
	write(t, filepath.Join(tmp, "cgroup"), "9:name=systemd:/\n4:memory:/x\n1:cpu:/bench-scenarios-1\n0::/\n")
	write(t, filepath.Join(tmp, "mountinfo"), "32 31 0:29 / "+cpu+" rw,relatime - cgroup cgroup rw,cpu\n"+
		"40 31 0:37 / "+filepath.Join(tmp, "unified")+" rw,relatime - cgroup2 cgroup2 rw\n")
	c := findCPUCgroup(filepath.Join(tmp, "cgroup"), filepath.Join(tmp, "mountinfo"))
	if c.version != "v1" || c.dir != dir {
		t.Fatalf("got %+v, want v1 %s", c, dir)
	}
	s := c.snapshot()
	if q := c.quotaCores(); q != 0.25 || s.periods != 65 || s.throttledPeriods != 58 {
		t.Fatalf("quota %v snapshot %+v", q, s)
	}
}

func TestNothingReadable(t *testing.T) {
	tmp := t.TempDir()
	write(t, filepath.Join(tmp, "cgroup"), "0::/\n")
	write(t, filepath.Join(tmp, "mountinfo"), "")
	c := findCPUCgroup(filepath.Join(tmp, "cgroup"), filepath.Join(tmp, "mountinfo"))
	if c.version != "" || c.reason == "" {
		t.Fatalf("got %+v, want not found with a reason", c)
	}
	if c = findCPUCgroup(filepath.Join(tmp, "absent"), filepath.Join(tmp, "mountinfo")); c.version != "" || c.reason == "" {
		t.Fatalf("got %+v, want not found with a reason", c)
	}
}

// A read before any load measured nothing: unknown, never ok.
func TestFirstReadBeforeLoadIsUnknown(t *testing.T) {
	m := &instance{}
	if got := m.cpuThrottling(); got["cgroup"] != nil || got["unknown_reason"] != "no load ran before this read: nothing measured" {
		t.Fatalf("first read %v", got)
	}
	if got := m.cpuThrottling(); got["unknown_reason"] == "no load ran before this read: nothing measured" {
		t.Fatalf("second read %v", got)
	}
}
