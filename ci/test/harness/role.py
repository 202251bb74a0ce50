"""The runner's Role rules from scenarios/contract.json (runnerRole), as
charts/bench/templates/loadtest/rbac.yaml renders them: target "backend" becomes resourceNames
[bench-backend]; target "controller" and "dataplane" rules go to a Role in the controller's (the data
plane's) namespace instead (runner_role_rules("controller"), runner_role_rules("dataplane")) when
that is not the release namespace; "dataplane" becomes resourceNames [the data plane's Deployment]."""
import json
from pathlib import Path

CONTRACT = Path(__file__).resolve().parents[3] / "scenarios" / "contract.json"
ELSEWHERE = ("controller", "dataplane")  # targets whose rules live in a namespace of their own


def runner_role_rules(where="release", dataplane="bench-dataplane"):
    """The release namespace's rules (where="release": every rule but those of ELSEWHERE), or only
    the controller's or the data plane's (where="controller" / "dataplane"; DATAPLANE: the name of
    the data plane's Deployment)."""
    rules = []
    for r in json.loads(CONTRACT.read_text())["runnerRole"]["rules"]:
        target = r.get("target")
        if (target if target in ELSEWHERE else "release") != where:
            continue
        rule = {"apiGroups": [r["apiGroup"]], "resources": [r["resource"]], "verbs": r["verbs"]}
        if target == "backend":
            rule["resourceNames"] = ["bench-backend"]
        elif target == "dataplane":
            rule["resourceNames"] = [dataplane]
        rules.append(rule)
    return rules
