package bench

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The runner's own cgroup CPU accounting: the direct witness of a CPU limit (a pod's
// resources.limits.cpu is a CFS quota) starving the runner. The kernel counts the quota periods in
// which the cgroup ran out of quota and was stopped until the next one (nr_throttled of
// nr_periods); while stopped, no goroutine of k6 runs, so every response in flight waits. A runner
// just under its need is throttled in most periods yet its sleeping lag probes (lag.js) may wake
// on time, so the lag misses it. Read-only: cgroup v2 (<mount>/<path>/cpu.stat, cpu.max) or v1
// (the cpu controller's cpu.stat, cpu.cfs_quota_us, cpu.cfs_period_us), found through
// /proc/self/cgroup and /proc/self/mountinfo, so it works on a host and in a container (where the
// container's own cgroup is mounted at /sys/fs/cgroup).

// cpuCgroup is where this process's CPU accounting lives; version "" = not found.
type cpuCgroup struct {
	version string // "v2" or "v1"
	dir     string
	reason  string // why not found
}

// cgroupSnapshot: cumulative counters at one moment.
type cgroupSnapshot struct {
	at               time.Time
	processCPU       time.Duration // user + system time of this process (getrusage)
	statOK           bool          // the cgroup's cpu.stat had the bandwidth counters
	periods          uint64
	throttledPeriods uint64
	throttled        time.Duration
}

var (
	cgroupOnce     atomic.Pointer[cpuCgroup]
	cgroupBaseline atomic.Pointer[cgroupSnapshot]
)

// thisCPUCgroup finds the cgroup once per process.
func thisCPUCgroup() *cpuCgroup {
	if c := cgroupOnce.Load(); c != nil {
		return c
	}
	c := findCPUCgroup("/proc/self/cgroup", "/proc/self/mountinfo")
	cgroupOnce.CompareAndSwap(nil, c)
	return cgroupOnce.Load()
}

// findCPUCgroup: the cgroup v1 hierarchy with the cpu controller if this process is in one (a
// hybrid host keeps cpu there), else the v2 unified hierarchy.
func findCPUCgroup(cgroupFile, mountinfoFile string) *cpuCgroup {
	lines, err := readLines(cgroupFile)
	if err != nil {
		return &cpuCgroup{reason: "cannot read " + cgroupFile + ": " + err.Error()}
	}
	var v1Path, v2Path string
	haveV1, haveV2 := false, false
	for _, line := range lines {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2Path, haveV2 = parts[2], true
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			if ctl == "cpu" {
				v1Path, haveV1 = parts[2], true
			}
		}
	}
	mounts, _ := readLines(mountinfoFile)
	if haveV1 {
		if dir := cgroupDir(mounts, v1Path, func(fsType, options string) bool {
			if fsType != "cgroup" {
				return false
			}
			for _, o := range strings.Split(options, ",") {
				if o == "cpu" {
					return true
				}
			}
			return false
		}); dir != "" {
			return &cpuCgroup{version: "v1", dir: dir}
		}
	}
	if haveV2 {
		if dir := cgroupDir(mounts, v2Path, func(fsType, _ string) bool { return fsType == "cgroup2" }); dir != "" {
			return &cpuCgroup{version: "v2", dir: dir}
		}
	}
	return &cpuCgroup{reason: "no cgroup cpu.stat found for this process (" + cgroupFile + ", " + mountinfoFile + ")"}
}

// cgroupDir: the directory of cgroup path under the first mount that matches and has a cpu.stat.
// A mountinfo line: id parent major:minor root mountpoint options - fstype source superoptions.
// In a container the mount's root is the container's own cgroup, so path is taken relative to it.
func cgroupDir(mounts []string, path string, match func(fsType, superOptions string) bool) string {
	for _, line := range mounts {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 || !match(g[0], g[2]) {
			continue
		}
		root, mountpoint := f[3], f[4]
		rel := path
		if root != "/" {
			if path != root && !strings.HasPrefix(path, root+"/") {
				rel = "/" // the container's view: its own cgroup is the mount
			} else {
				rel = strings.TrimPrefix(path, root)
			}
		}
		for _, dir := range []string{filepath.Join(mountpoint, rel), mountpoint} {
			if _, err := os.Stat(filepath.Join(dir, "cpu.stat")); err == nil {
				return dir
			}
		}
	}
	return ""
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return lines, s.Err()
}

// readKeyValues: "key value" lines (cpu.stat) as numbers.
func readKeyValues(path string) (map[string]uint64, error) {
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 2 {
			if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				out[f[0]] = v
			}
		}
	}
	return out, nil
}

// quotaCores: the CFS quota in cores (quota / period), 0 when there is none.
func (c *cpuCgroup) quotaCores() float64 {
	if c.version == "v2" {
		data, err := os.ReadFile(filepath.Join(c.dir, "cpu.max"))
		if err != nil {
			return 0 // the root cgroup, or the cpu controller not enabled here: no quota of its own
		}
		f := strings.Fields(string(data))
		if len(f) != 2 || f[0] == "max" {
			return 0
		}
		quota, err1 := strconv.ParseFloat(f[0], 64)
		period, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || period <= 0 {
			return 0
		}
		return quota / period
	}
	quota, err1 := readInt(filepath.Join(c.dir, "cpu.cfs_quota_us"))
	period, err2 := readInt(filepath.Join(c.dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil || quota <= 0 || period <= 0 {
		return 0
	}
	return float64(quota) / float64(period)
}

func readInt(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}

// snapshot reads the counters now.
func (c *cpuCgroup) snapshot() *cgroupSnapshot {
	s := &cgroupSnapshot{at: time.Now(), processCPU: processCPU()}
	if c.version == "" {
		return s
	}
	kv, err := readKeyValues(filepath.Join(c.dir, "cpu.stat"))
	if err != nil {
		return s
	}
	periods, ok1 := kv["nr_periods"]
	throttled, ok2 := kv["nr_throttled"]
	if !ok1 || !ok2 {
		return s // v2 without the cpu controller here: usage only, no bandwidth accounting
	}
	s.statOK, s.periods, s.throttledPeriods = true, periods, throttled
	if us, ok := kv["throttled_usec"]; ok { // v2
		s.throttled = time.Duration(us) * time.Microsecond
	} else if ns, ok := kv["throttled_time"]; ok { // v1
		s.throttled = time.Duration(ns)
	}
	return s
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// markCgroupLoadStart keeps the counters when the load began (with the runtime's baseline); true
// when this call took them.
func markCgroupLoadStart() bool {
	return cgroupBaseline.CompareAndSwap(nil, thisCPUCgroup().snapshot())
}

// cpuThrottling() -> {cgroup, quota_cores, periods, throttled_periods, throttled_ratio,
// throttled_ms, cpu_cores_used, used_of_quota, seconds, unknown_reason}, since the load began (since
// the first call if it has not). cgroup is null (and the counters too) when this process's cgroup
// CPU accounting cannot be read, or on the first call before any load: the verdict is then unknown,
// not ok. Without a quota there is nothing to be throttled by: periods 0, throttled_ratio 0.
func (m *instance) cpuThrottling() map[string]interface{} {
	c := thisCPUCgroup()
	first := markCgroupLoadStart()
	base, now := cgroupBaseline.Load(), c.snapshot()
	wall := now.at.Sub(base.at).Seconds()
	out := map[string]interface{}{
		"cgroup": nil, "quota_cores": nil, "periods": nil, "throttled_periods": nil, "throttled_ratio": nil,
		"throttled_ms": nil, "cpu_cores_used": nil, "used_of_quota": nil, "seconds": wall, "unknown_reason": nil,
	}
	var used float64
	if wall > 0 {
		used = (now.processCPU - base.processCPU).Seconds() / wall
		out["cpu_cores_used"] = used
	}
	if first || c.version == "" || !now.statOK && c.quotaCores() > 0 {
		reason := c.reason
		if first {
			reason = "no load ran before this read: nothing measured"
		} else if reason == "" {
			reason = filepath.Join(c.dir, "cpu.stat") + " has no nr_periods/nr_throttled"
		}
		out["unknown_reason"] = reason
		return out
	}
	out["cgroup"] = c.version + " " + c.dir
	quota := c.quotaCores()
	if quota > 0 {
		out["quota_cores"] = quota
		if wall > 0 {
			out["used_of_quota"] = used / quota
		}
	}
	periods, throttled := uint64(0), uint64(0)
	var throttledTime time.Duration
	if now.statOK && base.statOK {
		periods, throttled = now.periods-base.periods, now.throttledPeriods-base.throttledPeriods
		throttledTime = now.throttled - base.throttled
	}
	out["periods"], out["throttled_periods"] = periods, throttled
	out["throttled_ms"] = float64(throttledTime) / float64(time.Millisecond)
	ratio := 0.0
	if periods > 0 {
		ratio = float64(throttled) / float64(periods)
	}
	out["throttled_ratio"] = ratio
	return out
}
