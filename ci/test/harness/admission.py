"""What the chart part's admission-policy modules (ci/test/chart/test_admission*.py) share: the
runner's username, one update as a given user on a bare kube-apiserver, and a change that sets one
field. Each module renders its own policy and objects; the verdicts come from the real API server."""
import json
import urllib.error

# The runner's ServiceAccount user for release bench in namespace bench (the policies' binding).
RUNNER = "system:serviceaccount:bench:bench-loadtest"


def update(server, path, change, user=RUNNER):
    """GET the object at PATH, change(it), PUT it as USER: ("allowed", object) or ("denied", message)."""
    obj = server.request("admin", "GET", path)
    change(obj)
    try:
        return "allowed", server.request(user, "PUT", path, obj)
    except urllib.error.HTTPError as e:
        return "denied", json.loads(e.read() or b"{}").get("message", str(e))


def set_at(keys, value):
    """A change setting the field at KEYS (a key, or a function from the node to the next node)
    to VALUE, making the maps on the way."""
    def change(obj):
        node = obj
        for key in keys[:-1]:
            node = key(node) if callable(key) else node.setdefault(key, {})
        node[keys[-1]] = value
    return change
