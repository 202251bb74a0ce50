"""Repeats (the matrix runner's --repeats, `results --series ID --repeat N`): the report gives each
figure of a series as a median with a 95 % bootstrap interval and a CV, and calls two series
different only where the interval of their difference excludes zero. Crafted series from the
testdata summary (p99 spread by a seeded generator), one real merged run written with --series,
and benchreport.repeats' functions directly."""
import json
import random
import statistics

import pytest

from benchreport import repeats
from conftest import CHROMIUM_FLAGS, ROOT, TESTDATA, output_of, renders_cleanly, run

CONTRACT = ROOT / "ci/test/contract.py"
# series id -> (p99 centre in ms, repeats): "slower" is far from "base", "close" within its noise.
SERIES = {"base": (10.0, 5), "slower": (30.0, 5), "close": (10.5, 4), "pair": (20.0, 2)}
NOISE_MS = 2.0


@pytest.fixture(scope="session")
def series_files(work):
    """Crafted repeats: one summary per repeat, p99 = centre +- NOISE_MS, plus a run in no series."""
    base = json.loads((TESTDATA / "traefik.json").read_text())
    rng = random.Random(7)
    folder = work / "series"
    folder.mkdir()
    files, p99 = [], {}
    for sid, (centre, n) in SERIES.items():
        for r in range(1, n + 1):
            doc = json.loads(json.dumps(base))
            doc["testid"], doc["series"] = f"{sid}-r{r}", {"id": sid, "repeat": r}
            doc["latency_ms"]["p99"] = round(centre + rng.uniform(-NOISE_MS, NOISE_MS), 3)
            p99.setdefault(sid, []).append(doc["latency_ms"]["p99"])
            files.append(folder / f"{sid}-r{r}.json")
            files[-1].write_text(json.dumps(doc))
    files.append(TESTDATA / "traefik.json")
    return files, p99


@pytest.fixture(scope="session")
def series_report(gen, series_files):
    files, _ = series_files
    r = gen("series", *files)
    assert r.returncode == 0, output_of(r)
    return gen.json("series")["series"], gen.md("series")


def test_section_and_every_series_in_report_json(series_report):
    series, md = series_report
    assert "## Repeats" in md
    assert set(series) == set(SERIES), sorted(series)
    assert series["slower"]["runs"] == [f"slower-r{i}" for i in range(1, 6)]


def test_median_interval_and_cv_of_a_series(series_report, series_files):
    series, _ = series_report
    values = series_files[1]["base"]
    fig = series["base"]["figures"]["p99"]
    assert fig["median"] == pytest.approx(statistics.median(values))
    assert fig["low"] <= fig["median"] <= fig["high"], fig
    assert min(values) <= fig["low"] and fig["high"] <= max(values), (fig, values)
    assert fig["cv"] == pytest.approx(statistics.stdev(values) / statistics.fmean(values))


def test_far_apart_series_are_different(series_report):
    c = series_report[0]["slower"]["comparison"]["p99"]
    assert c["verdict"] == "different" and c["low"] > 0, c


def test_series_within_the_noise_are_inconclusive_with_an_estimate(series_report):
    series, md = series_report
    c = series["close"]["comparison"]["p99"]
    assert c["verdict"] == "inconclusive" and c["low"] < 0 < c["high"], c
    assert c["repeats_needed"] > SERIES["close"][1], c
    assert f"| close | p99 | " in md and f"run more repeats (about {c['repeats_needed']} per series)" in md


def test_intervals_shown_in_chromium(series_report, work):
    """The series report renders in headless Chromium without a console message, and the rendered
    page holds the Repeats table with base's p99 interval as the Markdown states it."""
    series, md = series_report
    html = work / "out/series/report.html"
    problems = renders_cleanly(html, work / "screenshots/series.png")
    assert not problems, "\n".join(problems)
    dom = run(["timeout", "90", "chromium", *CHROMIUM_FLAGS, f"--user-data-dir={work / 'chromium.series'}",
               "--dump-dom", f"file://{html}"]).stdout
    row = next(line for line in md.splitlines() if line.startswith("| base | 5 | p99 (ms) |"))
    interval = row.split("|")[5].strip()
    assert "<h2>Repeats</h2>" in dom and "95 % interval" in dom, dom[:2000]
    assert " to " in interval and interval in dom, (row, interval)


def test_two_repeats_give_no_interval(series_report):
    series, _ = series_report
    assert series["pair"]["figures"]["p99"]["low"] is None
    assert series["pair"]["comparison"]["p99"]["verdict"] == "too few repeats"


def test_report_is_reproducible(report, series_files, work, series_report):
    files, _ = series_files
    r = report("--out", work / "out/series-again", *map(str, files))
    assert r.returncode == 0, output_of(r)
    again = json.loads((work / "out/series-again/report.json").read_text())["series"]
    assert again == series_report[0]


def test_no_section_without_repeats(gen):
    r = gen("single", TESTDATA / "traefik.json", TESTDATA / "dropped.json")
    assert r.returncode == 0, output_of(r)
    assert gen.json("single")["series"] == {} and "## Repeats" not in gen.md("single")


@pytest.mark.parametrize("series, want", [
    ({"id": "s", "repeat": 0}, "series.repeat=0; expected a whole number from 1"),
    ({"id": "", "repeat": 1}, 'series.id=""; expected a non-empty string'),
], ids=["repeat 0", "empty id"])
def test_bad_series_refused(report, work, series, want):
    doc = json.loads((TESTDATA / "traefik.json").read_text())
    doc["series"] = series
    path = work / f"bad-series-{series['repeat']}.json"
    path.write_text(json.dumps(doc))
    r = report("--out", work / "out/bad-series", str(path))
    assert r.returncode == 2 and want in r.stderr, output_of(r)


def test_results_writes_the_series(report, prometheus, merged, work):
    """A real merge from Prometheus with --series: the summary carries it and stays valid."""
    out = work / "out/merged-series"
    r = report("results", "--testid", "report-merge", "--prometheus", prometheus.url, "--out", str(out),
               "--rate", "150", "--duration", "10s", "--series", "merge-series", "--repeat", "3")
    assert r.returncode == 0, output_of(r)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["series"] == {"id": "merge-series", "repeat": 3}
    v = report.script(CONTRACT, "valid", out / "summary.json")
    assert v.returncode == 0, output_of(v)


@pytest.mark.parametrize("args, want", [
    (["--series", "s"], "--series and --repeat go together"),
    (["--repeat", "2"], "--series and --repeat go together"),
    (["--series", "s", "--repeat", "0"], "--repeat 0 must be a whole number from 1"),
    (["--series", "a b", "--repeat", "1"], "--series 'a b' is not a series id"),
], ids=["series alone", "repeat alone", "repeat 0", "bad series id"])
def test_results_series_rejected(report, work, args, want):
    r = report("results", "--testid", "x", "--prometheus", "http://127.0.0.1:9", "--out", str(work / "x"), *args)
    assert r.returncode == 2 and want in r.stderr, output_of(r)


# ---- benchreport.repeats itself ----

def test_estimate_needs_three_repeats_for_an_interval():
    assert repeats.estimate([1.0, 2.0]).low is None
    e = repeats.estimate([1.0, 2.0, 3.0])
    assert e.low is not None and e.low <= 2.0 <= e.high


def test_identical_series_are_not_called_different():
    c = repeats.compare("p99", [5.0, 6.0, 7.0, 5.5, 6.5], [5.0, 6.0, 7.0, 5.5, 6.5])
    assert c.verdict == "inconclusive" and c.low <= 0 <= c.high, c


def test_disjoint_series_are_different_either_way():
    a, b = [5.0, 5.2, 4.9, 5.1], [9.0, 9.3, 8.8, 9.1]
    assert repeats.compare("p99", a, b).verdict == "different"
    assert repeats.compare("p99", b, a).verdict == "different"
    assert repeats.compare("p99", b, a).high < 0


def test_repeats_needed_grows_as_the_difference_shrinks():
    a = [10.0, 12.0, 8.0, 11.0, 9.0]
    far = repeats.repeats_needed(a, [v + 3 for v in a])
    near = repeats.repeats_needed(a, [v + 0.5 for v in a])
    assert near > far >= repeats.MIN_REPEATS, (near, far)
    assert repeats.repeats_needed(a, list(a)) is None
