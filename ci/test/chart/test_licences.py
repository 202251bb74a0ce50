"""Every third-party dependency the repository installs is listed in ci/licences.tsv with an allowed
licence: Go modules (go.mod/go.sum, the module@version strings scripts pass to `go get`, `go mod
download` and Dockerfile builds, the `replace` targets they add, Go imports), PyPI packages
(requirements*.txt, pyproject.toml's build backend and dependencies, `pip install NAME==$VERSION` in
scripts), npm packages (package.json and package-lock.json) and the chart's Helm dependencies.
AGPL-3.0 is allowed only for go.k6.io/k6 named under scenarios/runner/ (the runner image a user
builds, NOTICE); a Grafana, Loki, Tempo or other AGPL module anywhere fails, whatever the table
says. The checker reads the files as a dict, so the red cases plant a dependency in a copy."""
import re
import subprocess

import pins
import pytest
import yaml

from conftest import ROOT

TABLE = "ci/licences.tsv"
# SPDX identifiers bench accepts for anything it installs (permissive, or weak copyleft per file).
ALLOWED = {"Apache-2.0", "MIT", "MIT-CMU", "BSD-2-Clause", "BSD-3-Clause", "0BSD", "ISC", "MPL-2.0",
           "PSF-2.0", "Zlib", "CC0-1.0"}
# Licences allowed for one dependency only, and where: (licence, name) -> the path prefix naming it.
SCOPED = {("AGPL-3.0", "go.k6.io/k6"): "scenarios/runner/",   # the runner image a user builds (NOTICE)
          ("GPL-3.0-or-later", "yamllint"): ""}                # a lint tool run as its own program
# AGPL Go modules that must never appear, listed or not.
FORBIDDEN_GO = ("github.com/grafana/grafana", "github.com/grafana/loki", "github.com/grafana/tempo",
                "github.com/grafana/mimir", "github.com/grafana/pyroscope", "github.com/grafana/agent",
                "github.com/grafana/alloy")
SCANNED = re.compile(r"^(ci|scenarios|dashboards|charts|backends)/.*(\.sh|\.py|/Dockerfile|\.go|go\.mod|go\.sum|"
                     r"requirements[^/]*\.txt|package(-lock)?\.json|versions\.env)$|^(Makefile|requirements[^/]*\.txt|pyproject\.toml)$")
OWN_GO = "bench.local/"
# This file names dependencies only to plant them in a copy.
SELF = "ci/test/chart/test_licences.py"

GO_REF = re.compile(r"(?<![\w./@-])((?:[a-z0-9-]+\.)+[a-z]{2,}/[A-Za-z0-9._~/-]*[A-Za-z0-9_~-])"
                    r"@(v[0-9][A-Za-z0-9.+-]*|\$\{?\w+\}?)")
GO_REPLACE = re.compile(r"=>\s+((?:[a-z0-9-]+\.)+[a-z]{2,}/[A-Za-z0-9._~/-]+)\s+(v[0-9][A-Za-z0-9.+-]*)")
GO_IMPORT = re.compile(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"((?:[a-z0-9-]+\.)+[a-z]{2,}/[^"]+)"', re.M)
PIP_PIN = re.compile(r'"([A-Za-z0-9][A-Za-z0-9._-]*)==\$\{?([A-Z][A-Z0-9_]*)\}?"')
ASSIGN = re.compile(r"^\s*(?:ARG\s+)?([A-Z][A-Z0-9_]*)=([A-Za-z0-9][A-Za-z0-9.+-]*)\s*(?:#.*)?$", re.M)
# NAME=$PIN: a script's name for a pin of a versions.env (ci/cluster/config.sh's BENCH_K8S_VERSION)
ALIAS = re.compile(r"^\s*([A-Z][A-Z0-9_]*)=\$\{?([A-Z][A-Z0-9_]*)\}?\s*$", re.M)


def pypi_name(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def tracked_files():
    names = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, text=True,
                           check=True).stdout.split("\0")
    return {n: (ROOT / n).read_text(errors="replace") for n in names if n and n != SELF and SCANNED.search(n) and (ROOT / n).is_file()}


def read_table(text):
    rows = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        eco, name, version, licence, source = line.split("\t")
        key = (eco, pypi_name(name) if eco == "pypi" else name)
        assert key not in rows, f"{TABLE}: {key} twice"
        rows[key] = {"version": None if version == "-" else version, "licence": licence, "source": source}
    return rows


def installed(files, chart_yaml):
    """(ecosystem, name, version or None, file) for every dependency the files install."""
    found = []
    assigns = {}
    for text in files.values():
        for name, value in ASSIGN.findall(text):
            assigns.setdefault(name, value)
    # and the pins scripts read from files other than KEY=value ones (TRAEFIK_VERSION: the preset's tag)
    for name, pin in pins.read_pins(ROOT).items():
        assigns.setdefault(name, pin.value)
    for text in files.values():
        for name, target in ALIAS.findall(text):
            if target in assigns:
                assigns.setdefault(name, assigns[target])

    def resolve(version):
        if version.startswith("$"):
            return assigns.get(version.strip("${}"))
        return version

    for path, text in files.items():
        base = path.rsplit("/", 1)[-1]
        if base == "go.mod":
            block = re.findall(r"^require\s*\((.*?)^\)", text, re.M | re.S)
            lines = re.findall(r"^require\s+([^\s(]\S*)\s+(\S+)", text, re.M)  # one-line requires
            lines += [tuple(l.split()[:2]) for b in block for l in b.splitlines() if l.split()[:2] and not l.strip().startswith("//")]
            found += [("go", m, v, path) for m, v in lines]
            found += [("go", m, v, path) for m, v in GO_REPLACE.findall(text)]
        elif base == "go.sum":
            found += [("go", l.split()[0], l.split()[1].removesuffix("/go.mod"), path) for l in text.splitlines() if l.strip()]
        elif base == "pyproject.toml":
            import tomllib
            doc = tomllib.loads(text)
            # the build backend is installed by version; the dependencies are names (their pins:
            # requirements.txt), so each must have a row too
            for req in doc.get("build-system", {}).get("requires", []):
                name, _, version = req.partition("==")
                found.append(("pypi", pypi_name(name), version or None, path))
            project = doc.get("project", {})
            names = project.get("dependencies", []) + sum(project.get("optional-dependencies", {}).values(), [])
            found += [("pypi", pypi_name(re.split(r"[\s<>=!~;\[]", n)[0]), None, path) for n in names]
        elif base.startswith("requirements") and base.endswith(".txt"):
            for line in text.splitlines():
                line = line.split("#")[0].strip()
                if line:
                    name, _, version = line.partition("==")
                    found.append(("pypi", pypi_name(name), version or None, path))
        elif base == "package.json":
            import json
            doc = json.loads(text)
            for section in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
                found += [("npm", n, v, path) for n, v in doc.get(section, {}).items()]
        elif base == "package-lock.json":
            import json
            for key, pkg in json.loads(text).get("packages", {}).items():
                if key:
                    found.append(("npm", key.rsplit("node_modules/", 1)[-1], pkg.get("version"), path))
        else:
            if base.endswith(".go"):
                found += [("go", p, None, path) for p in GO_IMPORT.findall(text)]
            else:
                found += [("go", m, resolve(v), path) for m, v in GO_REF.findall(text)]
                found += [("go", m, v, path) for m, v in GO_REPLACE.findall(text)]
                found += [("pypi", pypi_name(n), resolve("$" + v), path) for n, v in PIP_PIN.findall(text)]
    found = [f for f in found if not (f[0] == "go" and f[1].startswith(OWN_GO))]
    for dep in yaml.safe_load(chart_yaml).get("dependencies", []):
        found.append(("helm", dep["name"], str(dep["version"]), "charts/bench/Chart.yaml"))
    return found


def go_row(rows, path):
    """The table's module for a Go module or package path (longest module prefix)."""
    best = None
    for eco, name in rows:
        if eco == "go" and (path == name or path.startswith(name + "/")) and (best is None or len(name) > len(best)):
            best = name
    return best


def licence_ok(expression, name, path):
    def one(term):
        term = term.strip("() ")
        if term in ALLOWED:
            return True
        scope = SCOPED.get((term, name))
        return scope is not None and path.startswith(scope)
    return any(all(one(t) for t in alt.split(" AND ")) for alt in expression.split(" OR "))


def problems(files, table_text, chart_yaml):
    rows = read_table(table_text)
    bad = []
    for eco, name, version, path in installed(files, chart_yaml):
        if eco == "go" and name.startswith(FORBIDDEN_GO):
            bad.append(f"{path}: {name}: an AGPL Grafana module (never allowed)")
            continue
        key = (eco, go_row(rows, name) if eco == "go" else name)
        row = rows.get(key) if key[1] else None
        if row is None:
            bad.append(f"{path}: {eco} {name} {version or ''}: not in {TABLE}")
            continue
        # a row may list versions separated by spaces: one module pinned by two of bench's modules
        if version and row["version"] and version not in row["version"].split():
            bad.append(f"{path}: {eco} {name} {version}: {TABLE} lists {row['version']} (re-check the licence)")
        if not licence_ok(row["licence"], key[1], path):
            bad.append(f"{path}: {eco} {name}: licence {row['licence']} not allowed here")
    return sorted(set(bad))


@pytest.fixture(scope="module")
def repo():
    return tracked_files(), (ROOT / TABLE).read_text(), (ROOT / "charts/bench/Chart.yaml").read_text()


def test_every_installed_dependency_listed_with_an_allowed_licence(repo):
    files, table, chart = repo
    found = installed(files, chart)
    # the scan sees what it must: a Go pin of each kind, pip pins, npm and Helm
    seen = {(e, n) for e, n, _, _ in found}
    for expected in [("go", "go.k6.io/k6"), ("go", "helm.sh/helm/v3/cmd/helm"), ("go", "github.com/containous/mux"),
                     ("go", "github.com/coredns/coredns/plugin/cache"), ("pypi", "yamllint"), ("pypi", "matplotlib"),
                     ("pypi", "setuptools"),
                     ("npm", "@grafana/schema"), ("helm", "k6-operator")]:
        assert expected in seen, expected
    assert problems(files, table, chart) == []


def test_table_rows_are_used(repo):
    """A row nothing installs is stale (rows with version "-" are dependencies of a listed one)."""
    files, table, chart = repo
    rows = read_table(table)
    used = set()
    for eco, name, _, _ in installed(files, chart):
        used.add((eco, go_row(rows, name) if eco == "go" else name))
    assert [k for k, r in rows.items() if k not in used and r["version"]] == []


def plant(repo, path, line, table_line=None):
    files, table, chart = repo
    files = {**files, path: files[path] + "\n" + line + "\n"}
    return problems(files, table + (table_line + "\n" if table_line else ""), chart)


@pytest.mark.parametrize("path, line, table_line, expect", [
    ("ci/tools/install.sh", 'go_build_tool grafana v12 github.com/grafana/grafana/pkg/cmd/grafana@v12.0.0', None,
     "github.com/grafana/grafana/pkg/cmd/grafana: an AGPL Grafana module"),
    ("ci/e2e/build-binaries.sh", 'go get github.com/grafana/loki/v3@v3.5.0',
     "go\tgithub.com/grafana/loki/v3\tv3.5.0\tAGPL-3.0\tplanted", "github.com/grafana/loki/v3: an AGPL Grafana module"),
    ("ci/e2e/build-binaries.sh", 'go get "go.k6.io/k6@$K6_VERSION"', None, "go.k6.io/k6: licence AGPL-3.0 not allowed here"),
    ("ci/cluster/build.sh", 'go get github.com/example/unlisted@v1.0.0', None, "github.com/example/unlisted v1.0.0: not in"),
    ("ci/tools/install.sh", 'go get helm.sh/helm/v3/cmd/helm@v3.99.0', None, "lists " + pins.value("HELM3_VERSION")),
    ("requirements.txt", "leftpad==1.0", None, "pypi leftpad 1.0: not in"),
    ("requirements.txt", "copyleft-thing==1.0",
     "pypi\tcopyleft-thing\t1.0\tGPL-3.0-only\tplanted", "licence GPL-3.0-only not allowed"),
], ids=["grafana", "loki-listed-agpl", "k6-outside-runner", "unlisted-go", "version-bump", "unlisted-pypi", "gpl-pypi"])
def test_licence_check_fails_on_a_planted_dependency(repo, path, line, table_line, expect):
    found = plant(repo, path, line, table_line)
    assert any(expect in p for p in found), found


def test_licence_check_fails_on_a_planted_npm_package(repo):
    files, table, chart = repo
    path = "ci/tools/dashboards/schema/package.json"
    files = {**files, path: files[path].replace('"typescript"', '"left-pad": "1.3.0", "typescript"')}
    assert any("npm left-pad 1.3.0: not in" in p for p in problems(files, table, chart))


def test_notice_names_every_chart_dependency_and_the_runner_parts():
    notice = (ROOT / "NOTICE").read_text()
    deps = yaml.safe_load((ROOT / "charts/bench/Chart.yaml").read_text())["dependencies"]
    assert [d["name"] for d in deps if d["name"] not in notice] == []
    for part in ("go.k6.io/k6", "AGPL-3.0", "github.com/grafana/xk6-kubernetes", "scenarios/runner/xk6-bench"):
        assert part in notice, part


def stream_modules_missing(notice, go_mod):
    """The modules backends/stream/go.mod requires (what the stream image's binary links) that NOTICE
    does not name."""
    required = re.findall(r"^\s+(\S+) v\S+", go_mod, re.M)
    assert required, "no require lines in backends/stream/go.mod"
    return [m for m in required if m not in notice]


def test_notice_names_every_module_of_the_stream_image():
    notice = (ROOT / "NOTICE").read_text()
    go_mod = (ROOT / "backends/stream/go.mod").read_text()
    assert stream_modules_missing(notice, go_mod) == []
    # a module added to go.mod and not to NOTICE is named
    planted = go_mod.replace("require (\n", "require (\n\tgithub.com/example/planted v1.0.0\n", 1)
    assert stream_modules_missing(notice, planted) == ["github.com/example/planted"]
