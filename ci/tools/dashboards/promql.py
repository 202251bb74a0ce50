"""PromQL's structure, as both dashboard checkers read it (check.py, lint.py): tokens, vector
selectors and the metric names they name. Enough to know, for each selector, its metric, matchers,
range and the function that holds it; whether a query is valid PromQL is judged by Prometheus' own
parser (promtool, lint.py; a real Prometheus, check.py --prometheus), not here."""
import re

GROUPING_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
# Words that are no metric: the grouping words, the binary operators spelled as words, inf and nan.
KEYWORDS = GROUPING_KEYWORDS | {"bool", "and", "or", "unless", "offset", "inf", "nan", "atan2"}

TOKEN_RE = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
  | (?P<matchers>\{(?:"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|[^{}"'])*\})
  | (?P<range>\[[^\]]*\])
  | (?P<paren>[(),])
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<number>[0-9][0-9.eExXa-fA-F]*[a-z]*|\.[0-9]+)
  | (?P<variable>\$\{?[A-Za-z_][A-Za-z0-9_:]*\}?|\[\[[A-Za-z_][A-Za-z0-9_]*\]\])
  | (?P<op>==|!=|<=|>=|=~|!~|[-+*/%^<>@=])
""", re.X)


def tokens(expr):
    """(kind, text) of each token of expr, spaces left out; a character no kind takes is ("other", c)."""
    out, pos = [], 0
    while pos < len(expr):
        m = TOKEN_RE.match(expr, pos)
        if not m:
            out.append(("other", expr[pos]))
            pos += 1
            continue
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group()))
        pos = m.end()
    return out


def selectors(expr):
    """Each vector selector of expr as a dict: name ("" for a bare {...}), matchers (the text inside
    its braces, or None), range (text in [] or None), subquery (bool), parent (the function whose
    sole argument it is, or None), offset (its text or None)."""
    toks = tokens(expr)
    frames, found = [], []  # frames: what each open '(' belongs to: a function name, "group" or None
    i = 0
    while i < len(toks):
        kind, text = toks[i]
        nxt = toks[i + 1] if i + 1 < len(toks) else ("", "")
        if text == "(":
            prev = toks[i - 1] if i else ("", "")
            if prev[0] == "ident" and prev[1] in GROUPING_KEYWORDS:
                frames.append("group")
            elif prev[0] == "ident":
                frames.append(prev[1])
            else:
                frames.append(None)
        elif text == ")":
            if frames:
                frames.pop()
        elif (kind == "ident" and text.lower() not in KEYWORDS and nxt[1] != "(" and "group" not in frames
              and nxt[1] not in ("by", "without")) \
                or (kind == "matchers" and (i == 0 or toks[i - 1][0] != "ident")):
            start = i
            matchers = text[1:-1] if kind == "matchers" else None
            if kind == "ident" and nxt[0] == "matchers":
                i += 1
                matchers = nxt[1][1:-1]
            rng = toks[i + 1][1][1:-1] if i + 1 < len(toks) and toks[i + 1][0] == "range" else None
            if rng is not None:
                i += 1
            offset = None
            if i + 2 < len(toks) and toks[i + 1] == ("ident", "offset"):
                offset = toks[i + 2][1]
                i += 2
            before = toks[start - 1][1] if start else ""
            after = toks[i + 1][1] if i + 1 < len(toks) else ""
            sole = before in ("(", ",") and after in (")", ",")
            found.append({"name": text if kind == "ident" else "", "matchers": matchers, "range": rng,
                          "subquery": rng is not None and ":" in rng,
                          "parent": frames[-1] if frames and sole else None, "offset": offset})
        i += 1
    return found


def metric_names(expr):
    """The metric names expr's selectors name, in order (functions, keywords, label names, durations,
    numbers, strings and dashboard variables are none)."""
    return [s["name"] for s in selectors(expr) if s["name"]]
