"""Runs one load generator and measures what it cost: CPU seconds and memory, split into start-up
(k6: script compilation and VU initialisation) and load.

    measure.py [--k6-api 127.0.0.1:PORT [--resume-at UNIX_TIME]] [--timeout S] -- COMMAND ARGS...

With --k6-api the command must be a `k6 run --paused --address 127.0.0.1:PORT ...`: once k6 reports
its VUs initialised (REST API status 4, vus-max reached), the CPU used so far is recorded as
start-up, the resident memory as init RSS, and the test is resumed (at --resume-at if given: two
generators started together then load the same core over the same seconds, a paired comparison). Total CPU and peak RSS come
from the kernel's rusage of the child (every thread) when it exits. Prints one JSON object:
{rc, cpu_total_s, cpu_init_s, cpu_load_s, rss_init_kb, rss_max_kb, wall_load_s}.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request

TICKS = os.sysconf('SC_CLK_TCK')


def proc_cpu_s(pid):
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    # utime and stime are fields 14 and 15 of stat(5); after the ')' they are at index 11 and 12.
    return (int(fields[11]) + int(fields[12])) / TICKS


def proc_rss_kb(pid):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return 0


def k6_status(api):
    try:
        with urllib.request.urlopen(f'http://{api}/v1/status', timeout=1) as r:
            return json.load(r)['data']['attributes']
    except OSError:
        return None


def k6_resume(api):
    body = json.dumps({'data': {'type': 'status', 'id': 'default', 'attributes': {'paused': False}}}).encode()
    req = urllib.request.Request(f'http://{api}/v1/status', data=body, method='PATCH',
                                 headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=5) as r:
        r.read()


def wait_initialised(proc, api, deadline):
    """Waits until k6 paused with every pre-allocated VU initialised; False if k6 exited first."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        st = k6_status(api)
        # status 4 = ExecutionStatus "paused before run": VUs initialised, nothing sent yet.
        if st and st.get('status', 0) >= 4 and st.get('paused'):
            return True
        time.sleep(0.1)
    raise SystemExit(f'measure.py: k6 at {api} did not reach "paused, VUs initialised" in time')


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--k6-api', help='k6 REST API address of a `k6 run --paused` command')
    ap.add_argument('--resume-at', type=float, help='unix time at which to resume the paused k6')
    ap.add_argument('--timeout', type=float, default=600, help='seconds to wait for start-up')
    ap.add_argument('command', nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ['--'] else args.command
    if not cmd:
        ap.error('no command given after --')
    proc = subprocess.Popen(cmd)
    cpu_init = 0.0
    rss_init = 0
    if args.k6_api and wait_initialised(proc, args.k6_api, time.monotonic() + args.timeout):
        if args.resume_at:
            time.sleep(max(0.0, args.resume_at - time.time()))
        cpu_init = proc_cpu_s(proc.pid)
        rss_init = proc_rss_kb(proc.pid)
        k6_resume(args.k6_api)
    t0 = time.monotonic()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    total = ru.ru_utime + ru.ru_stime
    print(json.dumps({
        'rc': proc.returncode,
        'cpu_total_s': round(total, 3),
        'cpu_init_s': round(cpu_init, 3),
        'cpu_load_s': round(total - cpu_init, 3),
        'rss_init_kb': rss_init,
        'rss_max_kb': ru.ru_maxrss,
        'wall_load_s': round(wall, 3),
    }))
    return 0


if __name__ == '__main__':
    sys.exit(main())
