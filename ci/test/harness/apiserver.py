"""A bare Kubernetes API for tests: etcd + kube-apiserver on 127.0.0.1, RBAC on, static-token users,
no controllers and no kubelet (Deployments get no pods), as lib/apiserver.sh starts it.

    api = BareApiServer(tmp_dir, users={"admin": ["system:masters"], "bench-runner": []})
    api.start()                      # returns once /readyz answers
    api.kubectl("admin", "apply", "-f", path)
    api.kubeconfig("bench-runner")   # a kubeconfig file for that user
    api.stop()

The binaries come from ci/cluster/build.sh's cache ($BENCH_CACHE/bin); ensure_kube_binaries()
builds them when missing (cold: about 15 min).
"""
import json
import os
import secrets
import socket
import ssl
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CACHE = Path(os.environ.get("BENCH_CACHE", Path.home() / ".cache" / "bench"))
BIN = CACHE / "bin"


def free_port():
    """A TCP port nothing listens on at 127.0.0.1 (the kernel picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ensure_kube_binaries():
    """kube-apiserver, etcd and kubectl in $BENCH_CACHE/bin, built by ci/cluster/build.sh when one
    is missing. Raises with the build's output when it fails."""
    if all((BIN / b).is_file() and os.access(BIN / b, os.X_OK) for b in ("kube-apiserver", "etcd", "kubectl")):
        return BIN
    result = subprocess.run(["bash", str(ROOT / "ci" / "cluster" / "build.sh")], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"ci/cluster/build.sh failed (exit {result.returncode}):\n{result.stdout}{result.stderr}")
    return BIN


class BareApiServer:
    """etcd + kube-apiserver with their state in `workdir`. `users` maps user name -> groups; each
    user gets a random token. `prefix` wraps both commands (e.g. ["taskset", "-c", "0"])."""

    def __init__(self, workdir, users, prefix=()):
        self.dir = Path(workdir)
        self.users = dict(users)
        self.prefix = list(prefix)
        self.tokens = {name: secrets.token_hex(16) for name in self.users}
        self.port = None
        self.procs = []

    @property
    def url(self):
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_file(self):
        """The serving certificate kube-apiserver generated (self-signed, its own CA)."""
        return self.dir / "certs" / "apiserver.crt"

    def log(self, name, lines=20):
        """The last `lines` of etcd.log or apiserver.log (for failure messages)."""
        path = self.dir / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def start(self, timeout=60):
        self.dir.mkdir(parents=True, exist_ok=True)
        tokens_csv = self.dir / "tokens.csv"
        lines = []
        for name, groups in self.users.items():
            line = f"{self.tokens[name]},{name},uid-{name}"
            if groups:
                line += ',"' + ",".join(groups) + '"'
            lines.append(line)
        tokens_csv.write_text("\n".join(lines) + "\n")
        port_etcd, port_peer, self.port = free_port(), free_port(), free_port()
        etcd = [str(BIN / "etcd"), "--name", "bare", "--data-dir", str(self.dir / "etcd"), "--unsafe-no-fsync",
                "--listen-client-urls", f"http://127.0.0.1:{port_etcd}",
                "--advertise-client-urls", f"http://127.0.0.1:{port_etcd}",
                "--listen-peer-urls", f"http://127.0.0.1:{port_peer}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{port_peer}",
                "--initial-cluster", f"bare=http://127.0.0.1:{port_peer}"]
        self._spawn(etcd, "etcd")
        key, pub = self.dir / "sa.key", self.dir / "sa.pub"
        subprocess.run(["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True)
        subprocess.run(["openssl", "rsa", "-in", str(key), "-pubout", "-out", str(pub)], check=True, capture_output=True)
        apiserver = [str(BIN / "kube-apiserver"), "--etcd-servers", f"http://127.0.0.1:{port_etcd}",
                     "--bind-address", "127.0.0.1", "--secure-port", str(self.port), "--cert-dir", str(self.dir / "certs"),
                     "--advertise-address", "127.0.0.1", "--endpoint-reconciler-type", "none",
                     "--token-auth-file", str(tokens_csv), "--authorization-mode", "RBAC",
                     "--service-account-issuer", "https://kubernetes.default.svc",
                     "--service-account-key-file", str(pub), "--service-account-signing-key-file", str(key),
                     "--service-cluster-ip-range", "10.96.0.0/16",
                     "--disable-admission-plugins", "ServiceAccount", "--enable-priority-and-fairness=false"]
        self._spawn(apiserver, "apiserver")
        self._wait_ready(timeout)
        for name in self.users:
            self._write_kubeconfig(name)
        return self

    def _spawn(self, cmd, name):
        with open(self.dir / f"{name}.log", "wb") as out:
            self.procs.append(subprocess.Popen(self.prefix + cmd, stdout=out, stderr=subprocess.STDOUT))

    @staticmethod
    def _insecure():
        # the serving certificate is self-signed; kubeconfig() says insecure-skip-tls-verify as well
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        return context

    def request(self, user, method, path, body=None, query=None, patch=False, timeout=10):
        """One API call as `user` in this process: no kubectl to start, so a test thread can poll the
        API every 100 ms on a loaded machine and never wait on a hung child. Returns the JSON answer;
        a non-2xx answer raises urllib.error.HTTPError, no answer within `timeout` s an OSError."""
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        headers = {"Authorization": f"Bearer {self.tokens[user]}", "Accept": "application/json",
                   "Content-Type": "application/merge-patch+json" if patch else "application/json"}
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, context=self._insecure(), timeout=timeout) as answer:
            return json.loads(answer.read() or b"null")

    def _wait_ready(self, timeout):
        # /readyz is public (system:public-info-viewer): no token needed to wait for it.
        insecure = self._insecure()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for proc in self.procs:
                if proc.poll() is not None:
                    self.stop()
                    raise RuntimeError(f"{proc.args[0]} exited ({proc.returncode}) before the API was ready:\n"
                                       f"{self.log('etcd')}\n{self.log('apiserver')}")
            try:
                with urllib.request.urlopen(f"{self.url}/readyz", context=insecure, timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"kube-apiserver not ready after {timeout} s:\n{self.log('apiserver')}")

    def kubeconfig(self, user):
        """The kubeconfig file of `user` (written at start)."""
        return self.dir / f"{user}.kubeconfig"

    def _write_kubeconfig(self, user):
        # JSON is YAML: no YAML library needed, and nothing to quote by hand.
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "bare",
            "clusters": [{"name": "bare", "cluster": {"server": self.url, "insecure-skip-tls-verify": True}}],
            "users": [{"name": "user", "user": {"token": self.tokens[user]}}],
            "contexts": [{"name": "bare", "context": {"cluster": "bare", "user": "user"}}],
        }
        path = self.kubeconfig(user)
        path.write_text(json.dumps(config, indent=1) + "\n")
        path.chmod(0o600)

    def kubectl(self, user, *args, input=None, check=True):
        """kubectl as `user`; output captured as text. check=True raises with stderr on failure."""
        result = subprocess.run([str(BIN / "kubectl"), "--kubeconfig", str(self.kubeconfig(user)), *map(str, args)],
                                input=input, capture_output=True, text=True)
        if check and result.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(map(str, args))} failed ({result.returncode}):\n{result.stderr}")
        return result

    def stop(self):
        """SIGTERM to kube-apiserver then etcd (the reverse of start), waited for; SIGKILL after 10 s."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs = []

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
