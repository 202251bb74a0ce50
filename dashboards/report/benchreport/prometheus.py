"""Time series of one run from Prometheus (k6 remote write, scenarios/interfaces.md metric names)."""

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from .summary import CONTRACT

# How far back to look for a run's samples when locating it in time.
DEFAULT_LOOKBACK_S = 24 * 3600
# Points per chart: enough to see a 10 s scale step in a few-minute run, few enough to stay small.
TARGET_POINTS = 300
# The warm-up's k6 scenario and role (scenarios/contract.json "warmup"): its samples are in no figure.
WARMUP = CONTRACT["warmup"]


def query_step(start, end):
    """The range queries' step of a run from start to end (seconds): TARGET_POINTS points, at least 1 s."""
    return max(1.0, round((end - start) / TARGET_POINTS))


class PrometheusError(RuntimeError):
    """Prometheus unreachable or answering with an error; the message names the URL and query."""


@dataclass
class TimeSeries:
    """Everything the report draws over time for one testid; times are seconds since the run start."""
    testid: str
    start: float = 0.0
    end: float = 0.0
    step: float = 0.0
    latency_ms: dict = field(default_factory=dict)      # quantile label -> [(t, ms)]
    request_rate: list = field(default_factory=list)    # [(t, req/s)]
    error_rate: dict = field(default_factory=dict)      # class -> [(t, errors/s)]
    error_totals: dict = field(default_factory=dict)    # class -> [(t, errors so far)] (load only)
    replicas: dict = field(default_factory=dict)        # desired|ready -> [(t, n)]
    scale_events: list = field(default_factory=list)    # [(t, action, count)]
    attribution: dict = field(default_factory=dict)     # benchreport.timeline's section of the run
    notes: list = field(default_factory=list)


def selector(testid, load_only=False, role=None, measured=False):
    """The run's series; load_only keeps the load scenarios' requests (role="load", as summary.json
    counts them), without the churn VU's convergence probes or the warm-up's requests; role picks
    another role (lag, warmup); measured leaves out the warm-up's series (scenario="warmup"), for
    the series that carry no role (dropped_iterations)."""
    sel = 'testid="%s"' % testid.replace("\\", "\\\\").replace('"', '\\"')
    role = "load" if load_only else role
    if role:
        sel += f', role="{role}"'
    if measured:
        sel += f', scenario!="{WARMUP["scenario"]}"'
    return "{%s}" % sel


class Prometheus:
    def __init__(self, url, timeout_s=10.0):
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"--prometheus {url!r}: expected an http(s) URL like http://127.0.0.1:9090")
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s

    def _get(self, api, params):
        query = urllib.parse.urlencode(params)
        req = f"{self.url}/api/v1/{api}?{query}"
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                body = json.load(resp)
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:300]
            raise PrometheusError(f"{self.url}: {api} {params.get('query')!r} failed: HTTP {e.code} {detail}") from e
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise PrometheusError(f"cannot query Prometheus at {self.url}: {e}") from e
        if body.get("status") != "success":
            raise PrometheusError(f"{self.url}: {params.get('query')!r}: {body.get('error')}")
        return body["data"]["result"]

    def api(self, path, params, method="GET"):
        """The JSON answer of /api/v1/PATH as it is, a query's error included (status "error" with
        Prometheus' message, which it sends with HTTP 400 or 422); raises PrometheusError only when
        Prometheus cannot be reached or does not answer JSON."""
        body = urllib.parse.urlencode(params, doseq=True)
        url = f"{self.url}/api/v1/{path}"
        req = (urllib.request.Request(f"{url}?{body}", method="GET") if method == "GET"
               else urllib.request.Request(url, data=body.encode(), method="POST"))
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as e:
            try:
                return json.load(e)
            except ValueError:
                return {"status": "error", "error": f"HTTP {e.code}"}
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise PrometheusError(f"Prometheus at {self.url} is not reachable: {e}") from e

    def query(self, query, at):
        """Instant query at time `at` (seconds since the epoch): the API's result list."""
        return self._get("query", {"query": query, "time": f"{at:.3f}"})

    def query_range(self, query, start, end, step):
        return self._get("query_range", {"query": query, "start": f"{start:.3f}",
                                          "end": f"{end:.3f}", "step": f"{step:g}"})

    def locate_run(self, testid, lookback_s=DEFAULT_LOOKBACK_S, now=None):
        """(first, last) sample times of the run's request counter, or None if Prometheus has none.
        A coarse pass over the lookback finds the run, a fine pass (about 1 s) finds its edges."""
        now = now or time.time()
        query = f"max(timestamp(k6_http_reqs_total{selector(testid)}))"
        span = (now - lookback_s, now)
        for step in (max(15.0, lookback_s / 5000), None):
            if step is None:
                step = max(1.0, (span[1] - span[0]) / 10000)
            result = self.query_range(query, span[0], span[1], step)
            if not result:
                return None
            # Each point holds the newest sample at or before its time: the first sample lies
            # within one step before the first point, the last one is the largest value.
            times = [float(t) for t, _ in result[0]["values"]]
            stamps = [float(v) for _, v in result[0]["values"]]
            span = (min(times) - step, max(stamps) + step)
        return min(stamps), max(stamps)

    def testids(self, lookback_s=DEFAULT_LOOKBACK_S, now=None):
        """The run ids (testid label values) with k6 request series within the lookback, sorted."""
        now = now or time.time()
        result = self.query(f"count by (testid) (last_over_time(k6_http_reqs_total[{int(lookback_s)}s]))", now)
        return sorted(r["metric"].get("testid", "") for r in result)

    def series(self, testid, lookback_s=DEFAULT_LOOKBACK_S):
        span = self.locate_run(testid, lookback_s)
        ts = TimeSeries(testid)
        if span is None:
            ts.notes.append(f"Prometheus at {self.url} has no k6_http_reqs_total series with "
                            f"testid={testid} in the last {lookback_s / 3600:g} h")
            return ts
        start, end = span
        step = query_step(start, end)
        # k6 remote-writes every 5 s by default: a rate needs a few samples in its window.
        window = f"{int(max(15, 3 * step))}s"
        sel = selector(testid, measured=True)  # without the warm-up's series, as every figure
        load = selector(testid, load_only=True)
        ts.start, ts.end, ts.step = start, end, step

        def rng(query):
            return self.query_range(query, start, end, step)

        def points(values, scale=1.0):
            out = []
            for t, v in values:
                f = float(v)
                if f == f:  # NaN: no data in that window
                    out.append((float(t) - start, f * scale))
            return out

        for q in ("0.5", "0.99", "0.999"):
            res = rng(f"histogram_quantile({q}, sum(rate(k6_http_req_duration_seconds{load}[{window}])))")
            if res:
                ts.latency_ms[f"p{float(q) * 100:g}"] = points(res[0]["values"], 1000.0)
        if not ts.latency_ms:
            ts.notes.append("no native-histogram latency series (k6_http_req_duration_seconds); set "
                            "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true and run Prometheus with "
                            "--enable-feature=native-histograms")
        res = rng(f"sum(rate(k6_http_reqs_total{load}[{window}]))")
        if res:
            ts.request_rate = points(res[0]["values"])
        for r in rng(f"sum by (class) (rate(k6_bench_errors_total{sel}[{window}]))"):
            ts.error_rate[r["metric"].get("class", "unknown")] = points(r["values"])
        # The counters themselves (every class starts at 0 in setup): what happened between two
        # events is a difference of two samples, not a smoothed rate. One step past the end, so the
        # last point holds the final count (the steps need not land on the end).
        for r in self.query_range(f"sum by (class) (k6_bench_errors_total{load})", start, end + step, step):
            ts.error_totals[r["metric"].get("class", "unknown")] = points(r["values"])
        for name in ("desired", "ready"):
            res = rng(f"max(k6_bench_replicas_{name}{sel})")
            if res:
                ts.replicas[name] = points(res[0]["values"])
        # A mark counts every event since the sample before it (two events in one step make one mark
        # of 2); one step past the end, as the error totals, so an event in the last step is kept.
        for r in self.query_range(f"sum by (action) (k6_bench_scale_events_total{sel})", start, end + step, step):
            action = r["metric"].get("action", "unknown")
            previous = 0.0
            for t, v in points(r["values"]):
                if v > previous:
                    ts.scale_events.append((t, action, v - previous))
                previous = v
        ts.scale_events.sort()
        return ts

    def value(self, query, at=None):
        """The first sample's value of an instant query at `at` (now when None) as text, or None."""
        result = self.query(query, time.time() if at is None else at)
        return result[0]["value"][1] if result else None

    def settled(self, testid, timeout_s=30.0):
        """Waits until the run's request count is there and reads the same on two polls a second
        apart (its runners' last remote-write push has landed) and returns that instant; raises
        PrometheusError after timeout_s."""
        query = f"sum(last_over_time(k6_http_reqs_total{selector(testid)}[30m]))"
        last, deadline = None, time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            now = self.value(query)
            if now is not None and now == last:
                return time.time()
            last = now
            time.sleep(1)
        raise PrometheusError(f"{self.url}: the request count of run {testid} did not settle within "
                              f"{timeout_s:g} s (last: {last or 'no data'})")


def text_sum(text, name, matchers=()):
    """Sum of the samples named `name` in Prometheus text exposition `text` (a /metrics page) whose
    labels satisfy every matcher: "key=value" (equal) or "key=~regex" (whole value matches)."""
    import re
    from prometheus_client.parser import text_string_to_metric_families
    tests = []
    for m in matchers:
        key, sep, want = m.partition("=")
        if not sep or not key:
            raise ValueError(f"matcher {m!r}: expected key=value or key=~regex")
        if want.startswith("~"):
            pattern = re.compile(want[1:])
            tests.append(lambda labels, k=key, p=pattern: p.fullmatch(labels.get(k, "")) is not None)
        else:
            tests.append(lambda labels, k=key, w=want: labels.get(k, "") == w)
    return sum(s.value for family in text_string_to_metric_families(text) for s in family.samples
               if s.name == name and all(t(s.labels) for t in tests))


if __name__ == "__main__":  # python -m benchreport.prometheus: its command line is cli.py's
    from .cli import prometheus_main
    raise SystemExit(prometheus_main())
