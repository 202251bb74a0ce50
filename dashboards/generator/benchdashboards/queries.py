"""A dashboard's queries outside Grafana: its panels, the values Grafana gives its variables, the
substitution, and the Prometheus that runs them (the report's client). The picture renderer
(render.py) and the test harness' checker (ci/tools/dashboards/check.py) both run queries through
this module, so a picture shows exactly what the checks ran."""
import datetime
import re

from benchreport.duration import DurationError, parse_duration as parse_duration_in  # the one parser
from benchreport.prometheus import Prometheus as PrometheusClient, PrometheusError  # the one client

TESTID_RE = re.compile(r"^[A-Za-z0-9_.:-]+$")


class UsageError(Exception):
    pass


def walk_panels(dash):
    """Yields (panel, row_title or None) for every panel, including those inside collapsed rows."""
    row_title = None
    for p in dash.get("panels", []):
        if p.get("type") == "row":
            row_title = p.get("title")
            yield p, None
            for child in p.get("panels", []):
                yield child, row_title
        else:
            yield p, row_title


def parse_time(text, now):
    """unix seconds, RFC 3339, 'now' or 'now-<N>[smhd]'."""
    m = re.fullmatch(r"now(?:-(\d+)([smhd]))?", text)
    if m:
        if not m.group(1):
            return now
        return now - int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise UsageError(f"time {text!r} is not unix seconds, RFC 3339, 'now' or 'now-<N>[smhd]'")


def parse_duration(text, what):
    """Whole seconds, as the PromQL range and the query step take them ('{n}s'): '15s', '1m30s', '2h'."""
    try:
        seconds = parse_duration_in(text, "s")
    except DurationError:
        seconds = None
    if seconds is None or not seconds.is_integer():
        raise UsageError(f"{what} {text!r} must be a duration like 15s, 1m or 2h")
    return int(seconds)


class Prometheus:
    """The calls a dashboard's queries need, answering with the API's JSON as it is (a query's error
    included, so a checker can report it per panel)."""

    def __init__(self, url, timeout=30):
        try:
            self.client = PrometheusClient(url, timeout)
        except ValueError as e:
            raise UsageError(str(e))

    def _call(self, path, params, method):
        try:
            return self.client.api(path, params, method)
        except PrometheusError as e:  # unreachable
            raise UsageError(str(e))

    def check_up(self):
        r = self._call("status/buildinfo", {}, "GET")
        if r.get("status") != "success":
            raise UsageError(f"{self.client.url} does not answer like Prometheus: {r}")
        return r["data"].get("version", "?")

    def query(self, expr, start, end, step, instant):
        if instant:  # end None: Prometheus' now
            return self._call("query", {"query": expr} if end is None else {"query": expr, "time": end}, "POST")
        return self._call("query_range", {"query": expr, "start": start, "end": end, "step": step}, "POST")

    def label_values(self, label, match, start, end):
        params = {"start": start, "end": end}
        if match:
            params["match[]"] = [match]
        return self._call(f"label/{label}/values", params, "GET")


def substitutions(dash, testids, start, end, step, rate_interval):
    """Grafana variable values used when running a dashboard's queries outside Grafana."""
    values = {"__rate_interval": f"{rate_interval}s", "__interval": f"{step}s",
              "__range": f"{int(end - start)}s", "__range_s": str(int(end - start)),
              "__range_ms": str(int((end - start) * 1000))}
    for v in dash.get("templating", {}).get("list", []):
        name = v.get("name")
        if name == "testid":
            values[name] = "|".join(testids)
        elif v.get("type") == "datasource":
            continue
        elif v.get("includeAll"):
            values[name] = v.get("allValue") or ".*"
        elif v.get("type") in ("textbox", "constant", "custom"):
            cur = v.get("current", {}).get("value")
            values[name] = cur if isinstance(cur, str) and cur else v.get("query", "")
    return values


def substitute(expr, values):
    def repl(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in values:
            raise UsageError(f"query uses ${name}, which the dashboard does not define: {expr}")
        return values[name]
    return re.sub(r"\$\{([A-Za-z_]\w*)(?::\w+)?\}|\[\[([A-Za-z_]\w*)\]\]|\$([A-Za-z_]\w*)", repl, expr)
