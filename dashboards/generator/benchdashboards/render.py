"""Renders a dashboard to one SVG picture from its own queries, run against a real Prometheus.

No Grafana server can run here, so this is the honest stand-in for a screenshot: the same panel
layout (gridPos), the same PromQL (variables substituted as check.py does), the same units and log
scales, drawn as plain SVG line charts, bar charts and value lists. Python standard library only.

Usage:
  render.py dashboards/run-overview.json --prometheus http://127.0.0.1:9090 --testid run-1 \
    --start <unix> --end now --out dashboards/images/run-overview.svg
"""
import argparse
import datetime
import html
import json
import math
import pathlib
import re
import sys

# The query walking, variable substitution and Prometheus client the dashboards' checker uses too,
# so a picture runs exactly the queries the checks run.
from . import queries

COL_W, ROW_H, PAD = 54, 30, 6  # pixels per grid column / grid row, panel padding
COLORS = ["#7eb26d", "#eab839", "#6ed0e0", "#ef843c", "#e24d42", "#1f78c1", "#ba43a9", "#705da0"]
BG, PANEL_BG, FG, GRID = "#111217", "#181b1f", "#ccccdc", "#2c3235"


def fmt(value, unit):
    """Human value with the panel's unit (the Grafana units bench uses)."""
    if value is None or isinstance(value, float) and math.isnan(value):
        return "-"
    if unit == "s":
        for limit, div, suffix in ((1e-3, 1e-6, "µs"), (1, 1e-3, "ms"), (float("inf"), 1, "s")):
            if abs(value) < limit:
                return f"{value / div:.3g} {suffix}"
    if unit in ("reqps",):
        return f"{value:.3g} req/s"
    if unit in ("Bps", "bytes"):
        for div, suffix in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"), (1, "B")):
            if abs(value) >= div:
                return f"{value / div:.3g} {suffix}" + ("/s" if unit == "Bps" else "")
        return f"{value:.3g} B"
    if unit == "percentunit":
        return f"{value * 100:.3g}%"
    return f"{value:.4g}"


def legend_of(metric, legend_format, ref):
    if not legend_format or legend_format == "__auto":
        return ", ".join(f"{k}={v}" for k, v in metric.items() if k != "__name__") or ref
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: metric.get(m.group(1), ""), legend_format).strip() or ref


def panel_series(prom, panel, values, start, end, step):
    """[(legend, [(t, v)...])] for range targets, [(legend, value)] for instant ones."""
    lines, points = [], []
    for t in panel.get("targets", []):
        expr = queries.substitute(t["expr"], values)
        r = prom.query(expr, start, end, step, bool(t.get("instant")))
        if r.get("status") != "success":
            raise SystemExit(f'query failed for panel "{panel.get("title")}": {r.get("error")}')
        for res in r["data"]["result"]:
            name = legend_of(res.get("metric", {}), t.get("legendFormat"), t["refId"])
            if "values" in res:
                lines.append((name, [(float(a), float(b)) for a, b in res["values"]]))
            elif "value" in res:
                points.append((name, res.get("metric", {}), float(res["value"][1]), t["refId"]))
    return lines, points


def svg_text(x, y, text, size=11, anchor="start", color=FG, weight="normal"):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{color}" text-anchor="{anchor}" '
            f'font-weight="{weight}" font-family="sans-serif">{html.escape(text)}</text>')


def right_axis_series(panel):
    """{series name: unit} of series the panel draws on a right-hand axis (field overrides)."""
    out = {}
    for o in panel.get("fieldConfig", {}).get("overrides", []):
        props = {p["id"]: p["value"] for p in o.get("properties", [])}
        if props.get("custom.axisPlacement") == "right" and o.get("matcher", {}).get("id") == "byName":
            out[o["matcher"]["options"]] = props.get("unit", "")
    return out


def draw_lines(x, y, w, h, lines, unit, log, panel=None):
    """Left axis for the panel's unit; series with a right-axis override get their own linear
    axis and unit on the right, as Grafana draws them."""
    right = right_axis_series(panel or {})
    left_lines = [l for l in lines if l[0] not in right]
    right_lines = [l for l in lines if l[0] in right]
    out = draw_axis_lines(x, y, w, h, left_lines, unit, log, 0)
    if right_lines:
        out += draw_axis_lines(x, y, w, h, right_lines, right[right_lines[0][0]], False, len(left_lines),
                               right_side=True)
    return out


def draw_axis_lines(x, y, w, h, lines, unit, log, color_offset, right_side=False):
    out = []
    # Log axes start at 1 ns / 1e-9: a refused connection's ~0 s duration would stretch them.
    vals = [v for _, pts in lines for _, v in pts if v == v and (v > 1e-9 or not log)]
    ts = [t for _, pts in lines for t, _ in pts]
    if not vals or not ts:
        return [svg_text(x + w / 2, y + h / 2, "No data", 12, "middle")]
    lo, hi = (min(vals), max(vals)) if log else (min(0, min(vals)), max(vals))
    if hi == lo:
        hi = lo + (abs(lo) or 1)
    t0, t1 = min(ts), max(ts) if max(ts) > min(ts) else min(ts) + 1
    legend_w = min(170, w * 0.35)
    px, pw, py, ph = x + 52, w - 100 - legend_w, y, h - 16

    def sy(v):
        if log:
            a, b = math.log10(lo), math.log10(hi) if hi > lo else math.log10(lo) + 1
            return py + ph - (math.log10(v) - a) / ((b - a) or 1) * ph
        return py + ph - (v - lo) / (hi - lo) * ph

    ticks = ([10 ** e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]
             if log else [lo + (hi - lo) * i / 4 for i in range(5)])
    for v in ticks:
        if log and not (lo <= v <= hi * 1.0001):
            continue
        yy = sy(v)
        if right_side:
            out.append(svg_text(px + pw + 2, yy + 4, fmt(v, unit), 9, "start", color=COLORS[color_offset % len(COLORS)]))
            continue
        out.append(f'<line x1="{px}" y1="{yy:.1f}" x2="{px + pw}" y2="{yy:.1f}" stroke="{GRID}"/>')
        out.append(svg_text(px - 4, yy + 4, fmt(v, unit), 9, "end"))
    for i in range(0 if right_side else 3):
        tt = t0 + (t1 - t0) * i / 2
        label = datetime.datetime.fromtimestamp(tt, datetime.timezone.utc).strftime("%H:%M:%S")
        out.append(svg_text(px + pw * i / 2, py + ph + 12, label, 9, "middle"))
    for i, (name, pts) in enumerate(lines[:8], start=color_offset):
        color = COLORS[i % len(COLORS)]
        segs, cur = [], []
        for t, v in pts:
            if v != v or (log and v <= 1e-9):
                if cur:
                    segs.append(cur)
                cur = []
                continue
            cur.append(f"{px + (t - t0) / (t1 - t0) * pw:.1f},{sy(v):.1f}")
        if cur:
            segs.append(cur)
        for seg in segs:
            out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{" ".join(seg)}"/>')
        last = next((v for _, v in reversed(pts) if v == v), None)
        ly = py + 12 + i * 14
        out.append(f'<rect x="{px + pw + 48}" y="{ly - 8}" width="10" height="3" fill="{color}"/>')
        out.append(svg_text(px + pw + 62, ly, f"{name[:18]} {fmt(last, unit)}", 9))
    return out


def percentile_order(label):
    """p50 < p90 < p99 < p99.9 ... by the number after the p."""
    try:
        return float(label.lstrip("p"))
    except ValueError:
        return float("inf")


def draw_bars(x, y, w, h, points, unit, log, panel):
    """Bars for instant results: grouped by the panel's row field (percentile) when present."""
    out = []
    if not points:
        return [svg_text(x + w / 2, y + h / 2, "No data", 12, "middle")]
    if any("percentile" in m for _, m, _, _ in points):
        # the percentile-distribution chart: x = percentile, one bar per run
        groups = sorted({m.get("percentile", "") for _, m, _, _ in points}, key=percentile_order)
        series = sorted({m.get("testid", "") for _, m, _, _ in points})
        val = {(m.get("percentile"), m.get("testid", "")): v for _, m, v, _ in points}
    else:
        # x = the panel's xField label (testid), one bar per query (or per other label)
        x_label = panel.get("options", {}).get("xField", "testid").split("\\")[0]
        renames = organize_renames(panel)
        groups = sorted({m.get(x_label, "") for _, m, _, _ in points})
        series, val = [], {}
        for _, m, v, ref in points:
            extra = ",".join(f"{k}={x}" for k, x in sorted(m.items()) if k not in (x_label, "__name__"))
            name = extra or renames.get(f"Value #{ref}", "")
            if name not in series:
                series.append(name)
            val[(m.get(x_label, ""), name)] = v
    vals = [v for v in val.values() if v > 0 or not log]
    if not vals:
        return [svg_text(x + w / 2, y + h / 2, "No data", 12, "middle")]
    lo, hi = (min(vals) / 2, max(vals)) if log else (0, max(vals) or 1)
    px, pw, py, ph = x + 52, w - 60, y, h - 18

    def sy(v):
        if log:
            return py + ph - (math.log10(max(v, lo)) - math.log10(lo)) / ((math.log10(hi) - math.log10(lo)) or 1) * ph
        return py + ph - (v - lo) / ((hi - lo) or 1) * ph

    for v in ([10 ** e for e in range(math.ceil(math.log10(lo)), math.floor(math.log10(hi)) + 1)] if log
              else [hi * i / 4 for i in range(5)]):
        out.append(f'<line x1="{px}" y1="{sy(v):.1f}" x2="{px + pw}" y2="{sy(v):.1f}" stroke="{GRID}"/>')
        out.append(svg_text(px - 4, sy(v) + 4, fmt(v, unit), 9, "end"))
    gw = pw / len(groups)
    bw = gw * 0.8 / len(series)
    for gi, g in enumerate(groups):
        for si, s in enumerate(series):
            v = val.get((g, s))
            if v is None:
                continue
            bx = px + gi * gw + gw * 0.1 + si * bw
            out.append(f'<rect x="{bx:.1f}" y="{sy(v):.1f}" width="{bw:.1f}" height="{py + ph - sy(v):.1f}" '
                       f'fill="{COLORS[si % len(COLORS)]}"><title>{html.escape(f"{g} {s}: {fmt(v, unit)}")}</title></rect>')
        out.append(svg_text(px + gi * gw + gw / 2, py + ph + 12, g[:16], 9, "middle"))
    for si, name in enumerate(series if len(series) > 1 else []):
        out.append(f'<rect x="{px + pw - 150}" y="{py + 4 + si * 13}" width="10" height="8" fill="{COLORS[si % len(COLORS)]}"/>')
        out.append(svg_text(px + pw - 136, py + 12 + si * 13, name[:24], 9))
    return out


def organize_renames(panel):
    for t in panel.get("transformations", []):
        if t.get("id") == "organize":
            return t.get("options", {}).get("renameByName", {})
    return {}


def draw_table(x, y, w, h, points, unit, panel):
    """Instant results merged by label set, one column per query (as the merge transformation)."""
    if not points:
        return [svg_text(x + w / 2, y + h / 2, "No data", 12, "middle")]
    renames = organize_renames(panel)
    units = {o["matcher"]["options"]: next((p["value"] for p in o["properties"] if p["id"] == "unit"), unit)
             for o in panel.get("fieldConfig", {}).get("overrides", [])}
    label_cols, value_cols, rows = [], [], {}
    for _, m, v, ref in points:
        labels = {k: x for k, x in m.items() if k != "__name__"}
        for k in labels:
            if k not in label_cols:
                label_cols.append(k)
        col = renames.get(f"Value #{ref}", renames.get("Value", ref))
        if col not in value_cols:
            value_cols.append(col)
        rows.setdefault(tuple(sorted(labels.items())), {})[col] = v
    cols = label_cols + value_cols
    cw = w / max(1, len(cols))
    out = [svg_text(x + i * cw + 2, y + 12, c[:14], 10, weight="bold") for i, c in enumerate(cols)]
    for r, (labels, vals) in enumerate(sorted(rows.items())[: int((h - 20) // 15)]):
        lab = dict(labels)
        for i, c in enumerate(cols):
            text = lab.get(c, "") if c in label_cols else fmt(vals.get(c), units.get(c, unit))
            out.append(svg_text(x + i * cw + 2, y + 28 + r * 15, text[:16], 10))
    return out


def draw_values(x, y, w, h, points, unit, panel):
    out = []
    if not points:
        return [svg_text(x + w / 2, y + h / 2, "No data", 12, "middle")]
    for i, (name, _m, v, _ref) in enumerate(points[: int(h // 16)]):
        out.append(svg_text(x + 8, y + 14 + i * 16, f"{name or panel.get('title')}: {fmt(v, unit)}", 11))
    return out


def render(dash, prom, values, start, end, step):
    panels = [(p, r) for p, r in queries.walk_panels(dash)]
    # Collapsed rows' panels are drawn expanded, below their row (as Grafana shows them when opened).
    body, height = [], 0
    for p, _row in panels:
        g = p["gridPos"]
        x, y = g["x"] * COL_W, g["y"] * ROW_H + 40
        w, h = g["w"] * COL_W, g["h"] * ROW_H
        height = max(height, y + h)
        if p.get("type") == "row":
            body.append(svg_text(x + PAD, y + 18, p.get("title", ""), 13, weight="bold"))
            continue
        body.append(f'<rect x="{x + PAD / 2}" y="{y + PAD / 2}" width="{w - PAD}" height="{h - PAD}" rx="3" '
                    f'fill="{PANEL_BG}" stroke="{GRID}"/>')
        body.append(svg_text(x + PAD + 4, y + PAD + 14, p.get("title", ""), 11, weight="bold"))
        unit = p.get("fieldConfig", {}).get("defaults", {}).get("unit", "")
        log = p.get("fieldConfig", {}).get("defaults", {}).get("custom", {}).get("scaleDistribution", {}).get("type") == "log"
        lines, points = panel_series(prom, p, values, start, end, step)
        ix, iy, iw, ih = x + PAD + 4, y + PAD + 22, w - 2 * PAD - 8, h - 2 * PAD - 26
        if p.get("type") == "timeseries":
            body += draw_lines(ix, iy, iw, ih, lines, unit, log, p)
        elif p.get("type") == "barchart":
            body += draw_bars(ix, iy, iw, ih, points, unit, log, p)
        elif p.get("type") == "table":
            body += draw_table(ix, iy, iw, ih, points, unit, p)
        else:
            body += draw_values(ix, iy, iw, ih, points, unit, p)
    width = 24 * COL_W
    title = f'{dash.get("title")}  (testid {values.get("testid")}, rendered from its queries, not by Grafana)'
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 10}" '
            f'viewBox="0 0 {width} {height + 10}"><rect width="100%" height="100%" fill="{BG}"/>'
            + svg_text(8, 24, title, 15, weight="bold") + "".join(body) + "</svg>\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dashboard", help="dashboard JSON file")
    ap.add_argument("--prometheus", required=True)
    ap.add_argument("--testid", required=True, help="run id(s), comma-separated")
    ap.add_argument("--start", default="now-1h")
    ap.add_argument("--end", default="now")
    ap.add_argument("--rate-interval", default="1m")
    ap.add_argument("--out", required=True, help="SVG file to write")
    args = ap.parse_args(argv)
    try:
        dash = json.loads(pathlib.Path(args.dashboard).read_text())
        now = datetime.datetime.now().timestamp()
        start, end = queries.parse_time(args.start, now), queries.parse_time(args.end, now)
        if end <= start:
            raise queries.UsageError(f"--start {args.start!r} must be before --end {args.end!r}")
        for t in args.testid.split(","):
            if not queries.TESTID_RE.match(t):
                raise queries.UsageError(f"--testid {t!r} may contain only letters, digits and . _ : -")
        step = max(5, int((end - start) / 150))
        prom = queries.Prometheus(args.prometheus)
        prom.check_up()
        values = queries.substitutions(dash, args.testid.split(","), start, end, step,
                                     queries.parse_duration(args.rate_interval, "--rate-interval"))
        svg = render(dash, prom, values, start, end, step)
    except (queries.UsageError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(svg)
    print(f"wrote {out} ({len(svg)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
