"""The runner's Role rules from scenarios/contract.json (runnerRole), as
charts/bench/templates/loadtest/rbac.yaml renders them: target "backend" becomes resourceNames
[bench-backend]; target "controller", "dataplane", "parameters" and "upgrade" rules go to a Role in
the controller's (the data plane's) namespace instead (runner_role_rules("controller"),
runner_role_rules("dataplane"), runner_role_rules("upgrade")) when that is not the release namespace;
"dataplane" becomes resourceNames [the data plane's Deployment], "parameters" resourceNames [the object
its replicas come from], "upgrade" resourceNames [the controller's workload] on the rule of its kind
(the other kind's rule is left out, as the chart does), "stream" resourceNames [bench-stream]
(long-lived's stream backend). A rule with via is kept only for that via
(loadtest.dataplaneScale.via; "deployment" by default, as the chart's default)."""
import json
from pathlib import Path

CONTRACT = Path(__file__).resolve().parents[3] / "scenarios" / "contract.json"
ELSEWHERE = ("controller", "dataplane", "parameters", "upgrade")  # targets whose rules live in a namespace of their own


def runner_role_rules(where="release", dataplane="bench-dataplane", workload=("deployments", "traefik"),
                      via="deployment", parameters="bench-proxy-config"):
    """The release namespace's rules (where="release": every rule but those of ELSEWHERE), or only
    the controller's, the data plane's, its parameters object's or the controller workload's
    (where="controller" / "dataplane" / "parameters" / "upgrade"; DATAPLANE: the name of the data
    plane's Deployment; VIA: how dataplane-scale sets its replicas, PARAMETERS: the name of the object
    it sets them on then; WORKLOAD: (resource, name) of the workload controller-upgrade rolls)."""
    rules = []
    for r in json.loads(CONTRACT.read_text())["runnerRole"]["rules"]:
        target = r.get("target")
        if (target if target in ELSEWHERE else "release") != where or r.get("via", via) != via:
            continue
        rule = {"apiGroups": [r["apiGroup"]], "resources": [r["resource"]], "verbs": r["verbs"]}
        if target == "backend":
            rule["resourceNames"] = ["bench-backend"]
        elif target == "dataplane":
            rule["resourceNames"] = [dataplane]
        elif target == "stream":
            rule["resourceNames"] = ["bench-stream"]
        elif target == "parameters":
            rule["resourceNames"] = [parameters]
        elif target == "upgrade" and r["resource"] != "pods":
            if r["resource"] != workload[0]:
                continue
            rule["resourceNames"] = [workload[1]]
        rules.append(rule)
    return rules
