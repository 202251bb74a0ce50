"""The runner's Role rules from scenarios/contract.json (runnerRole), as
charts/bench/templates/loadtest/rbac.yaml renders them: target "backend" becomes resourceNames
[bench-backend]; target "controller" rules go to a Role in the controller's namespace instead
(runner_role_rules(controller=True)) when that is not the release namespace."""
import json
from pathlib import Path

CONTRACT = Path(__file__).resolve().parents[3] / "scenarios" / "contract.json"


def runner_role_rules(controller=False):
    """The release namespace's rules (controller=False: every rule but the controller's), or the
    controller namespace's (controller=True: only those)."""
    rules = []
    for r in json.loads(CONTRACT.read_text())["runnerRole"]["rules"]:
        if (r.get("target") == "controller") != controller:
            continue
        rule = {"apiGroups": [r["apiGroup"]], "resources": [r["resource"]], "verbs": r["verbs"]}
        if r.get("target") == "backend":
            rule["resourceNames"] = ["bench-backend"]
        rules.append(rule)
    return rules
