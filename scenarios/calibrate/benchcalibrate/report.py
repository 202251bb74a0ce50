"""Records and summarises the calibration runs of scenarios/calibrate/run.sh.

    report.py record --round N --tool T --mode M --kind K --offered R --duration S --connections C
                     --measure JSON --result FILE --format wrk|k6-export|bench|vegeta|vegeta-csv --load L
        prints one JSON line: what the generator achieved and what it cost
    report.py line            (a JSON line on stdin) prints it as one human line
    report.py summary FILE [--machine TEXT]
        the report: medians and spread over rounds, ratios within each round, sizing table
"""
import argparse
import csv
import datetime
import json
import math
import re
import statistics
import sys
from pathlib import Path

# A rate was held when nothing was dropped and this share of it was achieved (the rule every verdict
# shares, scenarios/contract.json verdicts.rateHeldShare).
RATE_HELD_SHARE = json.loads((Path(__file__).resolve().parents[2] / 'contract.json').read_text())['verdicts']['rateHeldShare']


def parse_wrk(path):
    text = open(path).read()
    m = re.search(r'(\d+) requests in ([\d.]+)(m?s)', text)
    if not m:
        raise SystemExit(f'report.py: no "N requests in" line in wrk output {path}:\n{text}')
    requests = int(m.group(1))
    errors = re.search(r'Non-2xx or 3xx responses: (\d+)', text)
    sock = re.search(r'Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)', text)
    failed = (int(errors.group(1)) if errors else 0) + (sum(map(int, sock.groups())) if sock else 0)
    return {'requests': requests, 'dropped': 0, 'failed': failed, 'latency_ms': None}


def parse_k6_export(path):
    m = json.load(open(path))['metrics']
    d = m['http_req_duration']
    return {
        'requests': int(m['http_reqs']['count']),
        'dropped': int(m.get('dropped_iterations', {}).get('count', 0)),
        'failed': int(round(m['http_req_failed']['value'] * m['http_reqs']['count'])) if 'http_req_failed' in m else 0,
        'latency_ms': {'p50': d['med'], 'p90': d['p(90)'], 'p99': d['p(99)'], 'max': d['max']},
    }


def parse_bench(path):
    s = json.load(open(path))
    lat = s['latency_ms']
    rn = s.get('runner') or {}
    return {
        'requests': s['requests']['total'],
        'dropped': s['requests']['dropped_iterations'],
        'failed': sum(s['errors'].values()),
        'latency_ms': {k: lat[k] for k in ('p50', 'p90', 'p99', 'p99.9', 'max')},
        'runner_lag_p95_ms': rn.get('lag_ms', {}).get('p95'),
        'runner_sched_p99_ms': (rn.get('sched_latency_ms') or {}).get('p99'),
        'runner_gc_cpu_fraction': rn.get('gc_cpu_fraction'),
        'runner_gc_cycles': rn.get('gc_cycles'),
        'runner_cpu_throttled': rn.get('cpu_throttled'),
        # any of the runner verdict's witnesses (lag, Go runtime, cgroup throttling)
        'runner_warned': bool(rn.get('cpu_bound') or rn.get('runtime_bound') or rn.get('cpu_throttled')),
    }


def parse_vegeta(path):
    v = json.load(open(path))
    lat = v['latencies']
    ms = lambda ns: round(ns / 1e6, 3)  # noqa: E731 (tiny unit conversion)
    return {
        'requests': int(v['requests']),
        'dropped': 0,
        'failed': int(round(v['requests'] * (1 - v['success']))),
        'latency_ms': {'p50': ms(lat['50th']), 'p90': ms(lat['90th']), 'p99': ms(lat['99th']), 'max': ms(lat['max'])},
    }


def parse_vegeta_csv(path):
    """vegeta encode --to csv: one row per request (timestamp, code, latency ns, ...)."""
    latencies, failed = [], 0
    with open(path, newline='') as f:
        for row in csv.reader(f):
            latencies.append(int(row[2]) / 1e6)
            failed += not (200 <= int(row[1]) < 400)
    latencies.sort()

    def pct(q):
        return round(latencies[min(len(latencies) - 1, max(0, math.ceil(q * len(latencies)) - 1))], 3) if latencies else None
    return {
        'requests': len(latencies),
        'dropped': 0,
        'failed': failed,
        'latency_ms': {'p50': pct(0.5), 'p90': pct(0.9), 'p99': pct(0.99), 'p99.9': pct(0.999),
                       'max': latencies[-1] if latencies else None},
    }


PARSERS = {'wrk': parse_wrk, 'k6-export': parse_k6_export, 'bench': parse_bench, 'vegeta': parse_vegeta,
           'vegeta-csv': parse_vegeta_csv}


def cmd_record(a):
    measure = json.loads(a.measure)
    r = PARSERS[a.format](a.result)
    rec = {'round': a.round, 'tool': a.tool, 'mode': a.mode, 'kind': a.kind, 'offered': a.offered,
           'duration_s': a.duration, 'connections': a.connections, 'load1': a.load, **r,
           'achieved': round(r['requests'] / a.duration, 1), 'measure': measure}
    cpu = measure['cpu_load_s']
    rec['req_per_cpu_s'] = round(r['requests'] / cpu, 1) if cpu > 0 else None
    rec['cpu_ms_per_1000'] = round(1e6 * cpu / r['requests'], 1) if r['requests'] else None
    print(json.dumps(rec))


def cmd_line(_):
    r = json.loads(sys.stdin.read().strip().splitlines()[-1])
    lat = r.get('latency_ms') or {}
    print(f"  {r['tool']:<8} {r['mode']:<9} {r['kind']:<7} achieved {r['achieved']:>8.1f}/s  dropped {r['dropped']:>7}"
          f"  CPU {r['measure']['cpu_load_s']:>5.2f}s ({r['cpu_ms_per_1000']} ms/1000 req)"
          f"  p99 {lat.get('p99', '-')} ms  rc {r['measure']['rc']}  load {r['load1']}")


def spread(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {'median': statistics.median(v), 'min': min(v), 'max': max(v), 'n': len(v)}


def fmt_spread(s, digits=0):
    if not s:
        return '-'
    f = f'{{:.{digits}f}}'
    if s['n'] == 1:
        return f.format(s['median'])
    return f'{f.format(s["median"])} ({f.format(s["min"])}-{f.format(s["max"])})'


def table(header, rows):
    rows = [[str(c) for c in r] for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in rows)) if rows else len(str(h)) for i, h in enumerate(header)]
    out = ['  '.join(str(h).ljust(widths[i]) if i == 0 else str(h).rjust(widths[i]) for i, h in enumerate(header))]
    for r in rows:
        out.append('  '.join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
    return '\n'.join(out)


# The generator may add at most this to p99 at the rate runners are sized for (README "sizing").
ADDED_P99_BUDGET_MS = 1.0


MODE_NAMES = {'keepalive': 'keep-alive', 'close': 'Connection: close', 'tls': 'TLS, a handshake per request'}


# run.sh records the probe (bare k6 offered 50,000 req/s once per mode) as round 0.
PROBE_ROUND = 0


def added_latency(by, rounds):
    """In each mode swept: bench static minus vegeta at each swept rate (median over rounds) and the
    sized rate (the highest with added p99 within ADDED_P99_BUDGET_MS); then Go's default collector
    at the fixed rate."""
    out = []
    for mode, mode_name in MODE_NAMES.items():
        out.extend(added_latency_in(by, rounds, mode, mode_name))
    gc = list(by.get(('static', 'keepalive', 'fixed-gogc100'), {}).values())
    shipped = list(by.get(('static', 'keepalive', 'fixed'), {}).values())
    if gc and shipped:
        out.append(f"bench static at {gc[0]['offered']} req/s, p99 / p99.9 ms: shipped settings "
                   f"{fmt_spread(spread([r['latency_ms']['p99'] for r in shipped]), 2)} / "
                   f"{fmt_spread(spread([r['latency_ms']['p99.9'] for r in shipped]), 2)}, Go's default GC (GOGC=100) "
                   f"{fmt_spread(spread([r['latency_ms']['p99'] for r in gc]), 2)} / "
                   f"{fmt_spread(spread([r['latency_ms']['p99.9'] for r in gc]), 2)} "
                   f"(runner warned: {'yes' if any(r.get('runner_warned') for r in gc) else 'no'})")
        out.append('')
    return out


def added_latency_in(by, rounds, mode, mode_name):
    rates = sorted({int(k[2].split('-', 1)[1]) for k in by if k[1] == mode and k[2].startswith('sweep-')})
    if not rates:
        return []
    rows, sized = [], None
    for rate in rates:
        kind = f'sweep-{rate}'
        d99, d999, held, warned = [], [], [], []
        for rd in rounds:
            v = by.get(('vegeta', mode, kind), {}).get(rd)
            b = by.get(('static', mode, kind), {}).get(rd)
            if not (v and b and v.get('latency_ms') and b.get('latency_ms')):
                continue
            d99.append(b['latency_ms']['p99'] - v['latency_ms']['p99'])
            d999.append(b['latency_ms']['p99.9'] - v['latency_ms']['p99.9'])
            held.append(b['dropped'] == 0 and b['achieved'] >= RATE_HELD_SHARE * rate)
            warned.append(b.get('runner_warned'))
        if not d99:
            continue
        ok = all(held) and statistics.median(d99) <= ADDED_P99_BUDGET_MS
        if ok:
            sized = rate
        rows.append([str(rate), fmt_spread(spread(d99), 2), fmt_spread(spread(d999), 2),
                     'yes' if all(held) else 'NO', 'yes' if any(warned) else 'no', 'yes' if ok else 'no'])
    return [f'Generator-added latency, {mode_name}: bench static minus vegeta at the same rate (shipped GOGC/GOMEMLIMIT), ms',
            table(['rate', 'added p99', 'added p99.9', 'rate held', 'runner warned', f'added p99 <= {ADDED_P99_BUDGET_MS:g}'],
                  rows),
            f'sized rate per runner core, {mode_name} (highest with added p99 <= {ADDED_P99_BUDGET_MS:g} ms): '
            + (f'{sized} req/s' if sized else 'none of the swept rates'), '']


def memory_lines(mem):
    """The memory-per-VU table (memory_per_vus in run.sh); empty without measurements."""
    if not mem:
        return []
    out = ['Memory per 1,000 VUs (RSS after VU initialisation, k6 paused; difference between two VU counts):']
    mrows = []
    for tool in sorted({m['tool'] for m in mem}):
        ms = sorted((m for m in mem if m['tool'] == tool), key=lambda m: m['vus'])
        if len(ms) >= 2:
            lo, hi = ms[0], ms[-1]
            per = (hi['measure']['rss_init_kb'] - lo['measure']['rss_init_kb']) / 1024 / ((hi['vus'] - lo['vus']) / 1000)
            mrows.append([tool, f"{lo['measure']['rss_init_kb'] / 1024:.0f} MB @ {lo['vus']}",
                          f"{hi['measure']['rss_init_kb'] / 1024:.0f} MB @ {hi['vus']}", f'{per:.0f} MB',
                          f"{hi['measure']['cpu_init_s']:.1f} s"])
    out.append(table(['script', 'RSS', 'RSS', 'per 1,000 VUs', 'start-up CPU (more VUs)'], mrows))
    return out


def cmd_summary(a):
    recs = [json.loads(line) for line in open(a.file) if line.strip()]
    runs = [r for r in recs if r.get('kind') in ('probe', 'ceiling', 'fixed', 'fixed-gogc100', 'soak')
            or str(r.get('kind', '')).startswith(('pair-', 'sweep-'))]
    mem = [r for r in recs if r.get('kind') == 'memory']
    if not runs:  # run.sh --memory-only
        print('\n'.join([f'bench memory per VU, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC',
                          f'machine: {a.machine}', ''] + memory_lines(mem)))
        return
    rounds = sorted({r['round'] for r in runs})
    by = {}
    for r in runs:
        by.setdefault((r['tool'], r['mode'], r['kind']), {})[r['round']] = r
    out = summary_header(a.machine, runs, rounds)
    out += runs_table(by) + ratios_table(by, rounds) + fixed_rate_lines(by, rounds)
    out.extend(added_latency(by, rounds))
    out += soak_lines(by)
    out.extend(memory_lines(mem))
    print('\n'.join(out))


def measured_rounds(rounds):
    """How many rounds run.sh made (--rounds): the probe is recorded as round 0, not a round."""
    return len([r for r in rounds if r != PROBE_ROUND])


def summary_header(machine, runs, rounds):
    """The summary's first lines: when, where, how measured, and any run that failed."""
    bad = [r for r in runs if r['measure']['rc'] not in (0, 99)]
    loads = [r['load1'] for r in runs]
    first = runs[0] if runs else {}
    out = [f'bench load-generator calibration, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC',
           f'machine: {machine}',
           f'nginx 1 worker on one core, generator pinned to the other; body and connections as below; '
           f'{first.get("duration_s")} s per measurement, {measured_rounds(rounds)} rounds; load average during runs '
           f'{min(loads, default=0):.2f}-{max(loads, default=0):.2f}',
           f'connections {first.get("connections")}; probe = bare k6 offered 50000 req/s once; ceiling = '
           f'achieved with 1.25 x the probe offered (k6 drops the rest); values are median (min-max) over rounds', '']
    if bad:
        out.append('!! runs that failed (exit status not 0 or 99): '
                   + ', '.join(f"{r['tool']}/{r['mode']}/{r['kind']} round {r['round']} rc {r['measure']['rc']}" for r in bad))
        out.append('')
    return out


def runs_table(by):
    """One row per generator, mode and kind: throughput, drops, CPU, p99, start-up and memory."""
    out = []
    rows = []
    for (tool, mode, kind), per in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
        rs = list(per.values())
        lat = spread([(r.get('latency_ms') or {}).get('p99') for r in rs])
        rows.append([f'{tool} {mode} {kind}', fmt_spread(spread([r['achieved'] for r in rs])),
                     fmt_spread(spread([r['dropped'] for r in rs])),
                     fmt_spread(spread([r['req_per_cpu_s'] for r in rs])),
                     fmt_spread(spread([r['cpu_ms_per_1000'] for r in rs])),
                     fmt_spread(lat, 2),
                     fmt_spread(spread([r['measure']['cpu_init_s'] for r in rs]), 1),
                     fmt_spread(spread([r['measure']['rss_max_kb'] / 1024 for r in rs]))])
    out.append(table(['run', 'achieved req/s', 'dropped', 'req per CPU-s', 'CPU ms/1000 req', 'p99 ms',
                      'start-up CPU s', 'peak RSS MB'], rows))
    out.append('')
    return out


def ratios_table(by, rounds):
    """Generator against generator within each round (the overhead figures)."""
    out = []
    def ratio(num, den, field='achieved'):
        vals = []
        for rd in rounds:
            n = by.get(num, {}).get(rd)
            d = by.get(den, {}).get(rd)
            if n and d and d[field]:
                vals.append(n[field] / d[field])
        return spread(vals)

    ratio_rows = []
    for mode in ('keepalive', 'close', 'tls'):
        for num, den, what in (('static', 'bare', 'bench static / bare k6'), ('dynamic', 'bare', 'bench dynamic / bare k6'),
                               ('bare', 'wrk', 'bare k6 / wrk')):
            s = ratio((num, mode, 'ceiling'), (den, mode, 'ceiling'))
            if s:
                ratio_rows.append([f'{what} ({mode})', fmt_spread(s, 3),
                                   fmt_spread(ratio((num, mode, 'ceiling'), (den, mode, 'ceiling'), 'req_per_cpu_s'), 3)])
    for tool in ('static', 'dynamic'):
        kind = f'pair-{tool}'
        s = ratio((tool, 'keepalive', kind), ('bare', 'keepalive', kind), 'req_per_cpu_s')
        if s:
            ratio_rows.insert(0, [f'bench {tool} / bare k6, PAIRED on one core (keepalive)', '-', fmt_spread(s, 3)])
    s = ratio(('static', 'keepalive', 'fixed'), ('bare', 'keepalive', 'fixed'), 'cpu_ms_per_1000')
    if s:
        ratio_rows.append([f'bench static / bare k6 CPU per request at the fixed rate', fmt_spread(s, 3), '-'])
    out.append('Ratios within each round, median (min-max). PAIRED = both generators at once on the same core '
               '(same seconds, same noise): the overhead figure; the others compare runs made one after the other:')
    out.append(table(['ratio', 'ceiling throughput', 'req per CPU-s'], ratio_rows))
    out.append('')
    return out


def fixed_rate_lines(by, rounds):
    """Latency and CPU of vegeta, bare k6 and bench at the same fixed rate."""
    out = []
    lat_rows = []
    for tool in ('vegeta', 'bare', 'static'):
        rs = list(by.get((tool, 'keepalive', 'fixed'), {}).values())
        if rs:
            lat_rows.append([tool, fmt_spread(spread([r['achieved'] for r in rs]), 1)]
                            + [fmt_spread(spread([(r.get('latency_ms') or {}).get(p) for r in rs]), 2)
                               for p in ('p50', 'p90', 'p99')]
                            + [fmt_spread(spread([r['cpu_ms_per_1000'] for r in rs]))])
    if lat_rows:
        offered = next(iter(by[('vegeta', 'keepalive', 'fixed')].values()))['offered'] if ('vegeta', 'keepalive', 'fixed') in by else '?'
        out.append(f'Same fixed rate ({offered} req/s, keep-alive): latency (ms) and CPU')
        out.append(table(['generator', 'achieved/s', 'p50', 'p90', 'p99', 'CPU ms/1000 req'], lat_rows))
        diff = []
        for rd in rounds:
            v = by.get(('vegeta', 'keepalive', 'fixed'), {}).get(rd)
            k = by.get(('bare', 'keepalive', 'fixed'), {}).get(rd)
            if v and k:
                diff.append(k['latency_ms']['p99'] - v['latency_ms']['p99'])
        if diff:
            out.append(f'k6 p99 minus vegeta p99 at the same rate: {fmt_spread(spread(diff), 2)} ms')
        out.append('')
    return out


def soak_lines(by):
    out = []
    for r in by.get(('static', 'keepalive', 'soak'), {}).values():
        lat = r.get('latency_ms') or {}
        out += [f"Soak: bench static at {r['offered']} req/s for {r['duration_s']} s with the shipped settings: achieved "
                f"{r['achieved']:.1f} req/s, dropped {r['dropped']}, p99 {lat.get('p99')} ms, p99.9 {lat.get('p99.9')} ms, "
                f"peak RSS {r['measure']['rss_max_kb'] / 1024:.0f} MB, GC cycles {r.get('runner_gc_cycles')}, "
                f"runner warned: {'yes' if r.get('runner_warned') else 'no'}", '']
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('record')
    for name, typ in (('round', int), ('tool', str), ('mode', str), ('kind', str), ('offered', int),
                      ('duration', float), ('connections', int), ('measure', str), ('result', str),
                      ('load', float)):
        r.add_argument(f'--{name}', type=typ, required=True)
    r.add_argument('--format', choices=sorted(PARSERS), required=True)
    sub.add_parser('line')
    s = sub.add_parser('summary')
    s.add_argument('file')
    s.add_argument('--machine', default='unknown')
    a = ap.parse_args(argv)
    {'record': cmd_record, 'line': cmd_line, 'summary': cmd_summary}[a.cmd](a)


if __name__ == '__main__':
    main()
