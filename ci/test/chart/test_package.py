"""The packaged chart holds what the chart needs and nothing else: its templates read files/,
scenarios/*.js, scenarios/lib/*.js and *.proto, scenarios/contract.json and dashboards/*.json (through the
scenarios and dashboards links); .helmignore leaves out the rest of the linked folders (runner,
calibration, generator, report, tests, READMEs, pictures) and the chart's own tests and CI overlays."""
import fnmatch
import tarfile

from conftest import ROOT

# Paths inside the package (after "bench/"), as fnmatch patterns; "*" matches across "/" here,
# so the folder patterns are checked with the depth below.
ALLOWED = ["Chart.yaml", "values.yaml", "values.schema.json", "README.md", "LICENSE", ".helmignore",
           "templates/*", "files/*", "scenarios/*.js", "scenarios/lib/*.js", "scenarios/lib/*.proto",
           "scenarios/contract.json", "dashboards/*.json"]
ONE_LEVEL = ("scenarios/*.js", "dashboards/*.json", "scenarios/lib/*.js", "scenarios/lib/*.proto")


def allowed(path):
    return any(fnmatch.fnmatch(path, p) and (p not in ONE_LEVEL or path.count("/") == p.count("/"))
               for p in ALLOWED)


def packaged(helm, chart, work):
    out = work / f"package-v{helm.major}"
    result = helm("package", chart, "-d", out)
    assert result.returncode == 0, result.stderr
    (archive,) = out.glob("bench-*.tgz")
    with tarfile.open(archive) as tar:
        return {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()}


def test_package_holds_only_what_the_chart_needs(helm, chart, work):
    files = packaged(helm, chart, work)
    assert sorted(f for f in files if not allowed(f)) == []


def test_package_holds_every_file_the_templates_read(helm, chart, work):
    files = packaged(helm, chart, work)
    needed = {f"scenarios/{p.name}" for p in (ROOT / "scenarios").glob("*.js")}
    needed |= {f"scenarios/lib/{p.name}" for p in (ROOT / "scenarios" / "lib").glob("*.js")}
    needed |= {f"scenarios/lib/{p.name}" for p in (ROOT / "scenarios" / "lib").glob("*.proto")}
    needed |= {f"dashboards/{p.name}" for p in (ROOT / "dashboards").glob("*.json")}
    needed |= {"scenarios/contract.json", "values.schema.json", "LICENSE"}  # the licence travels with the package
    needed |= {f"files/{p.relative_to(ROOT / 'charts' / 'bench' / 'files')}"
               for p in (ROOT / "charts" / "bench" / "files").rglob("*") if p.is_file()}
    assert sorted(needed - files) == []
