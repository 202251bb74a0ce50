"""The runner's Role rules from scenarios/contract.json (runnerRole), as
charts/bench/templates/loadtest/rbac.yaml renders them: target "backend" becomes resourceNames
[bench-backend]."""
import json
from pathlib import Path

CONTRACT = Path(__file__).resolve().parents[3] / "scenarios" / "contract.json"


def runner_role_rules():
    rules = []
    for r in json.loads(CONTRACT.read_text())["runnerRole"]["rules"]:
        rule = {"apiGroups": [r["apiGroup"]], "resources": [r["resource"]], "verbs": r["verbs"]}
        if r.get("target") == "backend":
            rule["resourceNames"] = ["bench-backend"]
        rules.append(rule)
    return rules
