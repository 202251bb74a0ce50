"""What the checker scripts share: one printed line per check ("ok: ..." or "FAIL: ..."), and a
count of the failures for their exit status."""

failures = 0
# k6's remote-write output asks client_golang for a bucket factor of 1.1, which picks native
# histograms of schema 3: neighbouring bucket bounds differ by 2^(1/8). A merged percentile is
# exact to one such bucket.
SCHEMA3_RATIO = 2 ** (1 / 8)


def check(name, ok, detail=""):
    global failures
    print(f"{'ok' if ok else 'FAIL'}: {name}" + (f" ({detail})" if detail else ""))
    if not ok:
        failures += 1
