"""What the checker scripts share: one printed line per check ("ok: ..." or "FAIL: ..."), and a
count of the failures for their exit status."""

failures = 0


def check(name, ok, detail=""):
    global failures
    print(f"{'ok' if ok else 'FAIL'}: {name}" + (f" ({detail})" if detail else ""))
    if not ok:
        failures += 1
