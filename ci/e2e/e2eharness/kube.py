"""kubectl and helm on the local cluster, as argument lists (no value ever reaches a shell)."""
import json
import subprocess
import time

from .settings import Settings


class CommandError(RuntimeError):
    """A command that failed; the message holds its arguments, exit status and output."""


def run(cmd, check=False, **kwargs):
    """cmd as an argument list, output captured as text; with check, a failure raises with it."""
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        raise CommandError(f"{' '.join(map(str, cmd))} exited {result.returncode}:\n"
                           f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


class Kube:
    """kubectl and helm with the local cluster's kubeconfig and tools, for one release."""

    def __init__(self, settings=None):
        self.settings = settings or Settings.read()
        self.env = self.settings.env()
        self.namespace = self.settings.namespace
        self.release = self.settings.release
        self.work = self.settings.work

    def for_release(self, release, namespace):
        """The same cluster, another release and namespace."""
        from dataclasses import replace
        return Kube(replace(self.settings, release=release, namespace=namespace))

    def run(self, cmd, check=False, **kwargs):
        return run(cmd, check=check, env=self.env, **kwargs)

    def kubectl(self, *args, check=True, **kwargs):
        return self.run(["kubectl", *args], check=check, **kwargs)

    def kubectl_json(self, *args):
        return json.loads(self.kubectl(*args, "-o", "json").stdout)

    def helm(self, *args, check=True, **kwargs):
        return self.run(["helm", *args], check=check, **kwargs)

    def backend_deployments(self):
        """The release's backend Deployments ("deployment.apps/NAME"): not backend-failover's flapping
        one (label bench/flapping), which shares the backend's component label."""
        return self.kubectl("-n", self.namespace, "get", "deployments", "-o", "name", "-l",
                            f"app.kubernetes.io/instance={self.release},app.kubernetes.io/component=backend,"
                            "!bench/flapping").stdout.split()

    def ready(self):
        return self.kubectl("get", "--raw", "/readyz", check=False).returncode == 0


def wait_for(what, probe, timeout_s, interval_s=1.0):
    """Polls probe() until it returns something true (returned), or raises TimeoutError after
    timeout_s saying what it waited for and the last answer."""
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval_s)
    raise TimeoutError(f"{what}: not within {timeout_s} s (last: {last!r})")
