"""SVG charts (matplotlib, Agg backend): percentile distribution, convergence, time series."""

import io
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (backend first)
from matplotlib.ticker import FixedLocator, FixedFormatter, NullLocator  # noqa: E402

from .summary import CONVERGENCE_EVENTS, PERCENTILE_FRACTIONS, PERCENTILES  # noqa: E402

# Reproducible SVG: text as text (small, selectable), fixed ids, no creation date.
matplotlib.rcParams.update({
    "svg.fonttype": "none",
    "svg.hashsalt": "bench-report",
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
})


def _svg(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    # Inline use in HTML: drop the XML declaration and DOCTYPE, keep the <svg> element.
    return text[text.index("<svg"):]


def _x_position(p):
    """Percentile -> x on a 'number of nines' axis: p50 -> 2, p99 -> 100, p99.9999 -> 1e6."""
    return 1.0 / (1.0 - PERCENTILE_FRACTIONS[p])


def percentile_chart(runs, title):
    """Latency by percentile, one line per run, x spaced by nines like HdrHistogram plots."""
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    drawn = 0
    low, high = None, None
    for run in runs:
        pts = [(_x_position(p), run.latency_ms[p]) for p in PERCENTILES if run.latency_ms.get(p) is not None]
        if not pts:
            continue
        xs, ys = zip(*pts)
        ax.plot(xs, ys, marker="o", markersize=3, label=run.label)
        drawn += 1
        positive = [y for y in ys if y > 0]
        if positive:
            low = min(positive + ([low] if low else []))
            high = max(positive + ([high] if high else []))
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator([_x_position(p) for p in PERCENTILES]))
    ax.xaxis.set_major_formatter(FixedFormatter([p[1:] + "%" for p in PERCENTILES]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(1.6, 1.6e6)
    if low and high and high / low > 100:
        ax.set_yscale("log")
    ax.set_xlabel("percentile")
    ax.set_ylabel("latency (ms)")
    ax.set_title(title)
    if drawn:
        ax.legend(loc="upper left", fontsize=8)
    else:
        ax.text(0.5, 0.5, "no latency data (no request completed)", transform=ax.transAxes,
                ha="center", va="center")
    return _svg(fig)


def convergence_chart(runs):
    """Endpoint convergence p50 and max per run, for added and removed endpoints."""
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.5 * max(1, len(runs)) * 2))
    labels, values, colors = [], [], []
    palette = {"added": ("#2a9d8f", "#8fd3c9"), "removed": ("#e76f51", "#f4b9a8")}
    for run in runs:
        for event in CONVERGENCE_EVENTS:
            stats = run.convergence_ms.get(event, {})
            if stats.get("max") is None:
                continue
            labels.append(f"{run.label} {event}")
            values.append((stats.get("p50") or 0, stats["max"]))
            colors.append(palette[event])
    y = list(range(len(labels)))
    ax.barh(y, [v[1] for v in values], color=[c[1] for c in colors], label="max")
    ax.barh(y, [v[0] for v in values], color=[c[0] for c in colors], height=0.5, label="p50")
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("time until the change is seen in responses (ms)")
    ax.set_title("endpoint convergence (dark: p50, light: max)")
    return _svg(fig)


def timeseries_chart(ts, label):
    """Latency quantiles, request and error rates, and replicas (when recorded) over the run, with
    every scale event marked as a dotted line."""
    has_replicas = any(ts.replicas.values())
    panels = 3 if has_replicas else 2
    fig, axes = plt.subplots(panels, 1, figsize=(7.5, 2.2 * panels), sharex=True)
    lat_ax, rate_ax = axes[0], axes[1]
    for q, pts in ts.latency_ms.items():
        if pts:
            lat_ax.plot(*zip(*pts), label=q)
    lat_ax.set_ylabel("latency (ms)")
    lat_ax.set_title(f"{label}: latency, errors" + (" and replicas" if has_replicas else "") + " over time")
    if ts.request_rate:
        rate_ax.plot(*zip(*ts.request_rate), color="#777777", label="requests/s")
    for cls, pts in sorted(ts.error_rate.items()):
        if pts:
            rate_ax.plot(*zip(*pts), label=f"errors/s {cls}")
    rate_ax.set_ylabel("per second")
    if any(ts.error_rate.values()):
        rate_ax.set_yscale("symlog", linthresh=1)
    if has_replicas:
        for name, pts in sorted(ts.replicas.items()):
            if pts:
                axes[2].step(*zip(*pts), where="post", label=f"replicas {name}")
        axes[2].set_ylabel("replicas")
    axes[-1].set_xlabel("seconds since the run started")
    axes[-1].set_xlim(0, max(ts.end - ts.start, 1))
    for t, action, _ in ts.scale_events:
        for ax in axes:
            ax.axvline(t, color="#9b5de5", linestyle=":", linewidth=1)
        axes[-1].annotate(action, (t, 1), xycoords=("data", "axes fraction"), fontsize=7,
                          rotation=90, va="top", ha="right", color="#9b5de5")
    for ax in axes:
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right", fontsize=7)
    return _svg(fig)


def svg_ids_unique(svgs):
    """Several SVGs inline in one page must not share element ids (clip paths would cross over):
    prefix every id in SVG number i with c<i>-."""
    out = []
    for i, svg in enumerate(svgs):
        prefix = f"c{i}-"
        svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
        svg = re.sub(r'url\(#([^)]+)\)', lambda m: f"url(#{prefix}{m.group(1)})", svg)
        svg = re.sub(r'((?:xlink:)?href)="#([^"]+)"', lambda m: f'{m.group(1)}="#{prefix}{m.group(2)}"', svg)
        out.append(svg)
    return out
