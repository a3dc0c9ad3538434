#!/usr/bin/env python3
"""The container image, built here and run the way a cluster runs it.

scripts/release.sh makes every release artifact from this build's objects
(scripts/image.sh links the fully static wasd and builds the FROM-scratch
image with buildah; the chart is packaged with appVersion = that version; the
SBOM and SHA256SUMS). The test checks they agree, unpacks the OCI archive
with umoci and runs every container of the rendered packaged chart (default
values) from the image's root filesystem: read-only, as uid/gid 65532 without capabilities, with the
chart's args, env and volume mounts, and in-cluster configuration
(service-account token, KUBERNETES_SERVICE_HOST an IP) against the test API
server. The install follows helm's order: the pre-install hook makes the TLS
Secret, the webhook serves it, the post-install hook injects the CA, then a
bad Deployment is denied through the API server and a direct AdmissionReview
is answered over TLS; the reconciler and the cert rotator start, become
ready or do their first pass, and exit 0 on SIGTERM; the pre-delete hook
removes the webhook configurations. Also: a kubeconfig naming the API server
by host name resolves through /etc/hosts and through DNS; the image's labels,
contents and size; controls that must fail (a dynamically linked wasd in the
same root, a write to the root, an unknown host name).

Needs root, buildah, umoci, util-linux and kubectl; without them it exits
77, which ctest reports as skipped. It runs in its own mount, network and
PID namespaces (it re-executes itself under unshare), so its servers listen
on a private loopback and every mount and process goes away with it.
"""

import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest

import yaml

from lib.wait import wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("WASD_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("WASD_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
WASD_BIN = os.environ.get("WASD_BIN") or os.path.join(BUILD_DIR, "wasd")
TESTS_DIR = os.path.join(SOURCE_DIR, "tests")

SKIP = 77  # ctest SKIP_RETURN_CODE (tests/CMakeLists.txt)
RELEASE_NS = "wasd-system"
APP_NS = "ml-serving"
UID = GID = 65532
# The goal for the unpacked image.
MAX_ROOTFS_BYTES = 15 * 1000 * 1000
# A hook Job or a one-shot command finishes in well under a second here;
# the bound is for a hang.
JOB_TIMEOUT_S = 60
# Long-running containers: time to become ready, and to exit on SIGTERM
# (the webhook drains within its 30 s default; the chart gives it 40 s).
READY_TIMEOUT_S = 30
STOP_TIMEOUT_S = 40
TOOLS = ("buildah", "umoci", "unshare", "setpriv", "chroot", "mount", "umount", "ip", "curl",
         "kubectl", "readelf", "ldd", "strip", "cmake")


def missing_prerequisites():
    why = []
    if os.geteuid() != 0:
        why.append("not root (mount namespaces, overlayfs and chroot need it)")
    missing = [t for t in TOOLS if not shutil.which(t)]
    if missing:
        why.append("%s (scripts/setup.sh installs them)" % ", ".join(missing))
    cache = os.path.join(BUILD_DIR, "CMakeCache.txt")
    if not os.path.exists(cache):
        why.append("no CMake build in %s" % BUILD_DIR)
    else:
        with open(cache) as f:
            text = f.read()
        if "WASD_STATIC_DEPS:BOOL=ON" not in text or "WASD_SANITIZE:BOOL=ON" in text:
            why.append("this build has no wasd-fully-static target (WASD_STATIC_DEPS off)")
    return why


def log(msg):
    print("image test: " + msg, flush=True)


class Timer:
    def __init__(self):
        self.t0 = time.monotonic()

    def __str__(self):
        return "%.1f s" % (time.monotonic() - self.t0)


def run(cmd, timeout=300, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


class Image(unittest.TestCase):
    """Ordered: the numbered tests follow one install, as helm would run it."""

    @classmethod
    def setUpClass(cls):
        import sandbox
        from apiserver.harness import ApiServer
        from dnsstub import DnsStub
        from lib import chart
        cls.sandbox = sandbox
        cls.work = tempfile.mkdtemp(prefix="wasd-image-test-")
        cls.containers = []
        cls.ran = set()  # (kind, name, container) of the chart run so far
        cls.srv = cls.dns = None
        try:
            cls._build()
            cls._unpack()
            # The chart has no default image: named as a user names the
            # image they pushed (the built one, without its tag).
            cls.objs = [o for o in yaml.safe_load_all(chart.render_text(
                namespace=RELEASE_NS, chart_dir=cls.chart_dir,
                sets=["image.repository=" + cls.image.rsplit(":", 1)[0]])) if o]
            t = Timer()
            cls.srv = ApiServer().Start()
            log("test API server ready in %s on %s" % (t, cls.srv.url))
            cls.dns = DnsStub({"kube-api-dns.wasd.test": "127.0.0.1"}).Start()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def _build(cls):
        """scripts/release.sh with this build's objects: every artifact the
        test then checks is the one a release ships."""
        t = Timer()
        out = os.path.join(BUILD_DIR, "release")
        cls.release_dir = out
        p = run([os.path.join(SOURCE_DIR, "scripts", "release.sh"), "--build-dir", BUILD_DIR,
                 "--out", out, "--project-url", "https://git.example.org/platform/wasd"], timeout=900)
        if p.returncode != 0:
            raise AssertionError("scripts/release.sh failed:\n%s\n%s" % (p.stdout, p.stderr))
        cls.env = {}
        with open(os.path.join(out, "release.env")) as f:
            for line in f:
                key, _, value = line.strip().partition("=")
                cls.env[key] = value
        cls.version = cls.env["VERSION"]
        cls.image = cls.env["IMAGE"]
        cls.binary = os.path.join(BUILD_DIR, "wasd-fully-static")
        cls.archive = os.path.join(out, "wasd-%s.oci.tar" % cls.version)
        log("release %s (image %s) built in %s" % (cls.version, cls.image, t))
        with tarfile.open(os.path.join(out, "wasd-%s.tgz" % cls.version)) as tar:
            tar.extractall(os.path.join(cls.work, "chart"))
        cls.chart_dir = os.path.join(cls.work, "chart", "wasd")

    @classmethod
    def _unpack(cls):
        t = Timer()
        layout = os.path.join(cls.work, "layout")
        os.makedirs(layout)
        with tarfile.open(cls.archive) as tar:
            tar.extractall(layout)
        bundle = os.path.join(cls.work, "bundle")
        p = run(["umoci", "unpack", "--image", "%s:%s" % (layout, cls.version), bundle])
        if p.returncode != 0:
            raise AssertionError("umoci unpack failed:\n" + p.stderr)
        cls.rootfs = os.path.join(bundle, "rootfs")

        def blob(digest):
            with open(os.path.join(layout, "blobs", *digest.split(":"))) as f:
                return json.load(f)
        with open(os.path.join(layout, "index.json")) as f:
            index = json.load(f)
        cls.manifest = blob(index["manifests"][0]["digest"])
        cls.ref_name = index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"]
        cls.config = blob(cls.manifest["config"]["digest"])
        log("unpacked in %s" % t)

    @classmethod
    def tearDownClass(cls):
        for c in cls.containers:
            c.Stop(timeout=5)
        if cls.dns:
            cls.dns.Stop()
        if cls.srv:
            cls.srv.Stop()
        # Never delete through a mount: anything still mounted under the work
        # directory (a container that failed half-way) is detached first.
        with open("/proc/self/mountinfo") as f:
            left = [line.split()[4] for line in f if line.split()[4].startswith(cls.work + "/")]
        for path in sorted(left, key=len, reverse=True):
            subprocess.run(["umount", "-l", path], capture_output=True, timeout=30)
        if not os.environ.get("WASD_KEEP_TEST_DIRS"):
            shutil.rmtree(cls.work, ignore_errors=True)

    # ------------------------------------------------------------ helpers

    def container(self, name, argv, env=None, mounts=(), hosts=None, resolv=None,
                  extra_files=None, sa=None, groups=(GID,)):
        """A sandbox.Container with kubelet's files: /etc/hosts, /etc/resolv.conf
        and, for a service account `sa`, its token directory."""
        sb = self.sandbox
        name = "%02d-%s" % (len(self.containers), name)
        d = os.path.join(self.work, "files-" + name)
        os.makedirs(d)
        files = {"hosts": hosts or "127.0.0.1\tlocalhost\n",
                 "resolv.conf": resolv or "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"}
        for fname, text in files.items():
            with open(os.path.join(d, fname), "w") as f:
                f.write(text)
        ms = [sb.Mount("/etc/hosts", os.path.join(d, "hosts"), is_file=True),
              sb.Mount("/etc/resolv.conf", os.path.join(d, "resolv.conf"), is_file=True)]
        full_env = {"PATH": self._image_env()["PATH"], "HOME": "/nonexistent", "HOSTNAME": name}
        if sa:
            token, _ = self.srv.AddUser("system:serviceaccount:%s:%s" % (RELEASE_NS, sa),
                                        ["system:serviceaccounts",
                                         "system:serviceaccounts:" + RELEASE_NS])
            sa_dir = os.path.join(d, "serviceaccount")
            os.makedirs(sa_dir)
            shutil.copy(self.srv.ca, os.path.join(sa_dir, "ca.crt"))
            for fname, text in (("token", token), ("namespace", RELEASE_NS)):
                with open(os.path.join(sa_dir, fname), "w") as f:
                    f.write(text)
            self._secret_perms(sa_dir, 0o440)
            ms.append(sb.Mount("/var/run/secrets/kubernetes.io/serviceaccount", sa_dir))
            full_env.update({"KUBERNETES_SERVICE_HOST": "127.0.0.1",
                             "KUBERNETES_SERVICE_PORT": str(self.srv.port)})
        full_env.update(env or {})
        c = sb.Container(self.rootfs, self.work, name, argv, full_env, ms + list(mounts),
                         uid=UID, gid=GID, groups=groups, extra_files=extra_files)
        self.containers.append(c)
        return c

    def _image_env(self):
        return dict(e.split("=", 1) for e in self.config["config"].get("Env", []))

    @staticmethod
    def _secret_perms(d, mode):
        """As kubelet writes a secret volume with fsGroup: group 65532, defaultMode."""
        os.chown(d, 0, GID)
        os.chmod(d, 0o750)
        for fname in os.listdir(d):
            os.chown(os.path.join(d, fname), 0, GID)
            os.chmod(os.path.join(d, fname), mode)

    def workloads(self):
        """(object, pod spec, container) of every Deployment, Job and Pod."""
        out = []
        for o in self.objs:
            if o["kind"] in ("Deployment", "Job", "Pod"):
                spec = o["spec"] if o["kind"] == "Pod" else o["spec"]["template"]["spec"]
                for c in spec.get("initContainers", []) + spec["containers"]:
                    out.append((o, spec, c))
        return out

    def pick(self, kind, hook=None, component=None):
        hits = []
        for o, spec, c in self.workloads():
            phases = (o["metadata"].get("annotations") or {}).get("helm.sh/hook", "")
            if o["kind"] != kind:
                continue
            # "test-success" is Helm 2's name of the "test" hook.
            names = {"test" if h == "test-success" else h for h in phases.split(",") if h}
            if hook is not None and hook not in names:
                continue
            if hook is None and phases:
                continue
            labels = o["metadata"].get("labels") or {}
            if component and labels.get("app.kubernetes.io/component") != component:
                continue
            hits.append((o, spec, c))
        return hits

    def chart_container(self, obj, spec, c):
        """The container `c` of `obj` as the chart defines it, in the sandbox."""
        sb = self.sandbox
        entrypoint = self.config["config"]["Entrypoint"]
        argv = (c["command"] if "command" in c else entrypoint) + c.get("args", [])
        env = {}
        for e in c.get("env", []):
            if "value" in e:
                env[e["name"]] = str(e["value"])
            elif e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.namespace":
                env[e["name"]] = RELEASE_NS
            else:
                self.fail("%s: env %s: a source this test does not provide" % (c["name"], e))
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        mounts = []
        for vm in c.get("volumeMounts", []):
            v = volumes[vm["name"]]
            if "secret" in v:
                mounts.append(sb.Mount(vm["mountPath"], self._secret_volume(obj, v["secret"]),
                                       read_only=True))
            elif "emptyDir" in v:
                mounts.append(sb.Mount(vm["mountPath"], None, read_only=False))
            else:
                self.fail("%s: volume %s: a kind this test does not provide" % (c["name"], v))
        name = "%s-%s" % (obj["metadata"]["name"], c["name"])
        type(self).ran.add((obj["kind"], obj["metadata"]["name"], c["name"]))
        # The ids as kubelet resolves them: the container's securityContext,
        # else the pod's, else the image's USER.
        pod_sc = spec.get("securityContext") or {}
        sc = c.get("securityContext") or {}
        image_uid, image_gid = (int(x) for x in self.config["config"]["User"].split(":"))
        uid = sc.get("runAsUser", pod_sc.get("runAsUser", image_uid))
        gid = sc.get("runAsGroup", pod_sc.get("runAsGroup", image_gid))
        groups = [gid] + [g for g in [pod_sc.get("fsGroup")] + pod_sc.get("supplementalGroups", [])
                          if g is not None and g != gid]
        self.assertEqual((uid, gid, sc.get("readOnlyRootFilesystem"),
                          sc.get("allowPrivilegeEscalation")), (UID, GID, True, False), name)
        return self.container(name, argv, env=env, mounts=mounts, groups=groups,
                              sa=spec.get("serviceAccountName"))

    def _secret_volume(self, obj, secret):
        got = self.srv.Get("/api/v1/namespaces/%s/secrets/%s" % (RELEASE_NS, secret["secretName"]))
        self.assertIsNotNone(got, "%s mounts Secret %s, which does not exist" % (
            obj["metadata"]["name"], secret["secretName"]))
        d = tempfile.mkdtemp(prefix="secret-", dir=self.work)
        items = secret.get("items") or [{"key": k, "path": k} for k in got["data"]]
        for item in items:
            with open(os.path.join(d, item["path"]), "wb") as f:
                f.write(base64.b64decode(got["data"][item["key"]]))
        self._secret_perms(d, secret.get("defaultMode", 0o644))
        return d

    def run_job(self, obj, spec, c):
        t = Timer()
        code, out = self.chart_container(obj, spec, c).Run(JOB_TIMEOUT_S)
        self.assertEqual(code, 0, "%s/%s: %s\n%s" % (obj["metadata"]["name"], c["name"],
                                                    c.get("args"), out))
        log("job %s/%s ran in %s" % (obj["metadata"]["name"], c["name"], t))
        return out

    def start_until_ready(self, obj, spec, c):
        t = Timer()
        box = self.chart_container(obj, spec, c).Start()
        # Stopped here too when an assertion fails first, so the next
        # container finds its ports free.
        self.addCleanup(box.Stop, 5)
        probe = c.get("readinessProbe", {}).get("httpGet")
        if probe:
            ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
            port = ports.get(probe["port"], probe["port"])
            url = "http://127.0.0.1:%s%s" % (port, probe["path"])
            wait_for(lambda: not box.Running() or self._http_ok(url),
                                    READY_TIMEOUT_S, what="%s ready" % box.name)
        wait_for(lambda: not box.Running() or box.Execed(), READY_TIMEOUT_S,
                                what="%s started" % box.name)
        self.assertTrue(box.Running(), "%s exited:\n%s" % (box.name, box.Output()))
        status = box.Status()
        # The sandbox is what the chart asks for: uid/gid 65532, no
        # capabilities, no privilege escalation, a read-only root.
        self.assertEqual(status["Uid"].split(), [str(UID)] * 4)
        self.assertEqual(status["Gid"].split(), [str(GID)] * 4)
        self.assertEqual(int(status["CapEff"], 16), 0)
        self.assertEqual(status["NoNewPrivs"], "1")
        self.assertEqual(os.readlink("/proc/%d/root" % box.proc.pid), box.root)
        log("%s started in %s" % (box.name, t))
        return box

    def stop(self, box, grace=STOP_TIMEOUT_S):
        t = Timer()
        code = box.Stop(grace)
        self.assertEqual(code, 0, "%s on SIGTERM:\n%s" % (box.name, box.Output()))
        log("%s stopped (exit 0) in %s" % (box.name, t))

    @staticmethod
    def _http_ok(url):
        import urllib.request
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                return r.status == 200
        except OSError:
            return False

    def kubectl(self, *args, check=True):
        return self.srv.Kubectl(*args, check=check)

    # ------------------------------------------------------ the artifacts

    def test_01_binary_is_fully_static(self):
        elf = run(["readelf", "-lW", self.binary]).stdout + run(["readelf", "-dW", self.binary]).stdout
        self.assertNotIn("INTERP", elf)
        self.assertNotIn("(NEEDED)", elf)
        # static-pie: ldd says "statically linked"; plain -static would say
        # "not a dynamic executable".
        p = run(["ldd", self.binary])
        self.assertRegex(p.stdout + p.stderr, r"statically linked|not a dynamic executable")
        # Control: the normal build is dynamic (the same check can fail).
        self.assertIn("(NEEDED)", run(["readelf", "-dW", WASD_BIN]).stdout)

    def test_02_image_holds_the_binary_and_etc_only(self):
        cfg = self.config["config"]
        self.assertEqual(cfg["Entrypoint"], ["/wasd"])
        self.assertEqual(cfg["User"], "%d:%d" % (UID, GID))
        self.assertNotIn("Cmd", cfg)
        labels = cfg["Labels"]
        self.assertEqual(labels["org.opencontainers.image.version"], self.version)
        self.assertEqual(labels["org.opencontainers.image.revision"], self.env["REVISION"])
        self.assertTrue(labels.get("org.opencontainers.image.source"))
        # The repository's LICENSE, as the SBOM says.
        self.assertEqual(labels["org.opencontainers.image.licenses"], "Apache-2.0")
        self.assertEqual(self.ref_name, self.version)
        self.assertEqual(len(self.manifest["layers"]), 1)
        files = {}
        for dirpath, dirnames, filenames in os.walk(self.rootfs):
            for n in filenames + dirnames:
                path = os.path.join(dirpath, n)
                st = os.lstat(path)
                files[os.path.relpath(path, self.rootfs)] = st
        self.assertEqual(sorted(files), ["etc", "etc/group", "etc/nsswitch.conf", "etc/passwd",
                                         "wasd"])
        self.assertTrue(all(st.st_uid == 0 and st.st_gid == 0 for st in files.values()))
        self.assertEqual(files["wasd"].st_mode & 0o7777, 0o755)
        with open(os.path.join(self.rootfs, "etc", "passwd")) as f:
            self.assertIn("nonroot:x:%d:%d:" % (UID, GID), f.read())
        with open(os.path.join(self.rootfs, "etc", "group")) as f:
            self.assertIn("nonroot:x:%d:" % GID, f.read())
        size = sum(st.st_size for st in files.values() if stat.S_ISREG(st.st_mode))
        log("image size: %.1f MB uncompressed (goal <= %.0f MB), %.1f MB compressed archive"
            % (size / 1e6, MAX_ROOTFS_BYTES / 1e6, os.path.getsize(self.archive) / 1e6))
        self.assertLessEqual(size, MAX_ROOTFS_BYTES)

    def test_03_version_runs_in_the_image(self):
        code, out = self.container("version", ["/wasd", "version"]).Run(JOB_TIMEOUT_S)
        self.assertEqual(code, 0, out)
        first = out.splitlines()[0]
        self.assertTrue(first.startswith("wasd %s (revision %s," % (self.version, self.env["REVISION"])),
                        first)
        self.assertIn("glibc", out)
        self.assertIn("linked statically (rebuild wasd for a glibc update)", out)

    def test_04_a_dynamic_wasd_does_not_start_in_the_image(self):
        # Control: the same root without a loader or libc cannot run the
        # normal build, so the runs above prove the binary is self-contained.
        box = self.container("dynamic", ["/wasd-dynamic", "version"],
                             extra_files={"/wasd-dynamic": WASD_BIN})
        code, out = box.Run(JOB_TIMEOUT_S)
        self.assertNotEqual(code, 0, out)
        self.assertIn("No such file or directory", out)

    def test_05_the_root_is_read_only(self):
        code, out = self.container("write", [
            "/wasd", "certs", "generate", "--service", "s", "--namespace", "n",
            "--out-dir", "/certs"]).Run(JOB_TIMEOUT_S)
        self.assertNotEqual(code, 0, out)
        self.assertIn("Read-only file system", out)

    def test_06_release_artifacts_agree(self):
        d = self.release_dir
        p = run(["sha256sum", "-c", "SHA256SUMS"], cwd=d)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # The tarball, image, chart, SBOM, krew manifest and every licence file.
        licenses = sorted(os.listdir(os.path.join(d, "licenses")))
        self.assertIn("LICENSE", licenses)
        self.assertIn("libssl-dev.copyright", licenses)
        self.assertEqual(len(p.stdout.splitlines()), 5 + len(licenses), p.stdout)
        # The binary of the tarball is the image's /wasd, byte for byte, and
        # the one the SBOM describes.
        tarball, = [n for n in os.listdir(d) if n.endswith("-linux-%s.tar.gz" % run(
            ["dpkg", "--print-architecture"]).stdout.strip())]
        with tarfile.open(os.path.join(d, tarball)) as tar:
            member, = [m for m in tar.getmembers() if m.name.endswith("/wasd")]
            shipped = tar.extractfile(member).read()
            names = tar.getnames()
        top = member.name.split("/")[0]
        self.assertIn(top + "/LICENSE", names)
        for name in licenses:
            self.assertIn("%s/licenses/%s" % (top, name), names)
        with open(os.path.join(self.rootfs, "wasd"), "rb") as f:
            self.assertEqual(shipped, f.read())
        with open(os.path.join(d, "wasd-%s.spdx.json" % self.version)) as f:
            sbom = json.load(f)
        self.assertEqual(sbom["spdxVersion"], "SPDX-2.3")
        wasd, = [pk for pk in sbom["packages"] if pk["name"] == "wasd"]
        self.assertEqual(wasd["versionInfo"], self.version)
        self.assertEqual(wasd["licenseDeclared"], "Apache-2.0")
        self.assertEqual(wasd["checksums"][0]["checksumValue"], hashlib.sha256(shipped).hexdigest())
        linked = {pk["name"]: pk["versionInfo"] for pk in sbom["packages"] if pk["name"] != "wasd"}
        # OpenSSL, yaml-cpp, Boost, libstdc++, glibc: each with the version
        # dpkg has installed.
        for pkg in ("libssl-dev", "libyaml-cpp-dev", "libboost1.74-dev", "libstdc++-12-dev",
                    "libc6-dev"):
            want = run(["dpkg-query", "-W", "-f", "${Version}", pkg]).stdout
            self.assertEqual(linked.get(pkg), want, pkg)
        static = {r["relatedSpdxElement"] for r in sbom["relationships"]
                  if r["relationshipType"] == "STATIC_LINK"}
        self.assertIn("SPDXRef-Package-deb-libc6-dev", static)

    # -------------------------------------------- the chart, installed

    def test_10_chart_runs_only_the_built_image(self):
        with open(os.path.join(self.chart_dir, "Chart.yaml")) as f:
            chart = yaml.safe_load(f)
        self.assertEqual(chart["appVersion"], self.version)
        self.assertEqual(chart["version"], self.version)
        workloads = self.workloads()
        self.assertTrue(workloads)
        for o, _, c in workloads:
            where = "%s %s/%s" % (o["kind"], o["metadata"]["name"], c["name"])
            self.assertEqual(c["image"], self.image, where)
            self.assertNotIn("command", c, "%s overrides the image's entrypoint" % where)

    def test_11_pre_install_hook_creates_the_secret(self):
        for ns in (RELEASE_NS, APP_NS):
            self.kubectl("create", "namespace", ns)
        jobs = self.pick("Job", hook="pre-install")
        self.assertTrue(jobs)
        for job in jobs:
            self.run_job(*job)
        path = os.path.join(self.work, "chart-objects.yaml")
        with open(path, "w") as f:
            yaml.safe_dump_all([o for o in self.objs if "helm.sh/hook" not in
                                (o["metadata"].get("annotations") or {})], f)
        self.kubectl("apply", "-f", path)

    def test_12_webhook_denies_through_the_api_server_and_answers_tls(self):
        (dep, spec, c), = self.pick("Deployment", component="webhook")
        box = self.start_until_ready(dep, spec, c)
        svc, = [o for o in self.objs if o["kind"] == "Service" and
                o["spec"]["selector"].get("app.kubernetes.io/component") == "webhook"]
        port = [p for p in svc["spec"]["ports"] if p["name"] == "webhook"][0]
        target = {p["name"]: p["containerPort"] for p in c["ports"]}.get(port["targetPort"],
                                                                        port["targetPort"])
        self.srv.SetServiceEndpoint(RELEASE_NS, svc["metadata"]["name"], "127.0.0.1", target)
        for job in self.pick("Job", hook="post-install"):
            self.run_job(*job)
        # The README's first denial.
        p = self.kubectl("apply", "-n", APP_NS, "-f",
                         os.path.join(SOURCE_DIR, "examples", "bad-h2-gang-rollingupdate.yaml"),
                         check=False)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn('spec.strategy.type: Invalid value: "RollingUpdate": gang scheduling '
                      'requires Recreate', p.stderr)
        p = self.kubectl("apply", "-n", APP_NS, "-f",
                         os.path.join(SOURCE_DIR, "examples", "kep-1-gang-zone-atomic.yaml"),
                         check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        # A real AdmissionReview straight to the webhook over TLS, verified
        # against the CA of the Secret for the Service's DNS name.
        secret = self.srv.Get("/api/v1/namespaces/%s/secrets/%s" % (
            RELEASE_NS, [v for v in spec["volumes"] if "secret" in v][0]["secret"]["secretName"]))
        ca = os.path.join(self.work, "webhook-ca.crt")
        with open(ca, "wb") as f:
            f.write(base64.b64decode(secret["data"]["ca.crt"]))
        review = run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "make_review.py"),
                      os.path.join(SOURCE_DIR, "examples", "bad-h1-mincount-over-replicas.yaml")])
        self.assertEqual(review.returncode, 0, review.stderr)
        host = "%s.%s.svc" % (svc["metadata"]["name"], RELEASE_NS)
        p = run(["curl", "-sS", "--max-time", "10", "--cacert", ca,
                 "--resolve", "%s:%d:127.0.0.1" % (host, target),
                 "-H", "Content-Type: application/json", "--data-binary", "@-",
                 "https://%s:%d/validate-apps-v1-deployment?timeout=10s" % (host, target)],
                input=review.stdout)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = json.loads(p.stdout)
        self.assertEqual(got["response"]["uid"], json.loads(review.stdout)["request"]["uid"])
        self.assertFalse(got["response"]["allowed"])
        self.assertEqual(got["response"]["status"]["code"], 422)
        self.assertIn("must be less than or equal to spec.replicas", got["response"]["status"]["message"])
        # `helm test`: its pods run while the release is up.
        for pod in self.pick("Pod", hook="test"):
            self.run_job(*pod)
        self.stop(box)

    def test_13_reconciler_leads_and_stops(self):
        (dep, spec, c), = self.pick("Deployment", component="reconciler")
        box = self.start_until_ready(dep, spec, c)
        lease_path = "/apis/coordination.k8s.io/v1/namespaces/%s/leases/wasd-reconciler" % RELEASE_NS
        lease = wait_for(
            lambda: (self.srv.Get(lease_path) or {}).get("spec", {}).get("holderIdentity"),
            READY_TIMEOUT_S, what="the reconciler's Lease")
        self.assertTrue(lease)
        self.stop(box)

    def test_14_cert_rotator_checks_and_stops(self):
        (dep, spec, c), = self.pick("Deployment", component="cert-rotator")
        box = self.start_until_ready(dep, spec, c)
        user = "system:serviceaccount:%s:%s" % (RELEASE_NS, spec["serviceAccountName"])
        wait_for(lambda: not box.Running() or self.srv.Audit(user=user, path="/secrets/"),
                                READY_TIMEOUT_S, what="the rotator's first check")
        self.assertTrue(box.Running(), box.Output())
        self.stop(box)

    def _kubeconfig(self, host):
        with open(self.srv.ca, "rb") as f:
            ca = base64.b64encode(f.read()).decode()
        cfg = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
               "clusters": [{"name": "k", "cluster": {
                   "server": "https://%s:%d" % (host, self.srv.port),
                   # The test API server's certificate names localhost.
                   "tls-server-name": "localhost",
                   "certificate-authority-data": ca}}],
               "users": [{"name": "u", "user": {"token": self.srv.token}}],
               "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}
        d = tempfile.mkdtemp(prefix="kubeconfig-", dir=self.work)
        with open(os.path.join(d, "config"), "w") as f:
            yaml.safe_dump(cfg, f)
        self._secret_perms(d, 0o440)
        return d

    def _inject_ca_by_host_name(self, name, host, hosts=None):
        # The post-install Job (`certs rotate --once ... --webhook-config`):
        # it reads the TLS Secret through the API server, so it mounts nothing
        # but the kubeconfig given here.
        (job, spec, c), = self.pick("Job", hook="post-install")
        sb = self.sandbox
        self.assertNotIn("volumes", spec)
        args = c["args"]
        box = self.container(name, ["/wasd"] + args + ["--kubeconfig", "/etc/wasd/kube/config"],
                             mounts=[sb.Mount("/etc/wasd/kube", self._kubeconfig(host))],
                             hosts=hosts)
        return box.Run(JOB_TIMEOUT_S)

    def test_15_kubeconfig_host_name_from_etc_hosts(self):
        code, out = self._inject_ca_by_host_name(
            "by-hosts", "kube-api.wasd.test",
            hosts="127.0.0.1\tlocalhost\n127.0.0.1\tkube-api.wasd.test\n")
        self.assertEqual(code, 0, out)
        self.assertNotIn("kube-api.wasd.test", [q[0] for q in self.dns.queries])

    def test_16_kubeconfig_host_name_from_dns(self):
        code, out = self._inject_ca_by_host_name("by-dns", "kube-api-dns.wasd.test")
        self.assertEqual(code, 0, out)
        self.assertIn(("kube-api-dns.wasd.test", 1), self.dns.queries)

    def test_17_unknown_host_name_does_not_resolve(self):
        # Control: names resolve only through the files and the server above.
        code, out = self._inject_ca_by_host_name("unknown", "nowhere.wasd.test")
        self.assertNotEqual(code, 0, out)
        self.assertIn("resolve", out)
        self.assertIn("nowhere.wasd.test", [q[0] for q in self.dns.queries])

    def test_19_pre_delete_hook_removes_the_configurations(self):
        jobs = self.pick("Job", hook="pre-delete")
        self.assertTrue(jobs)
        names = [o["metadata"]["name"] for o in self.objs if o["kind"] in (
            "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")]
        self.assertTrue(names)
        for job in jobs:
            self.run_job(*job)
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            for n in names:
                self.assertIsNone(self.srv.Get(
                    "/apis/admissionregistration.k8s.io/v1/%s/%s" % (kind, n)), (kind, n))

    def test_99_every_container_of_the_chart_ran(self):
        want = {(o["kind"], o["metadata"]["name"], c["name"]) for o, _, c in self.workloads()}
        self.assertEqual(want - self.ran, set(), "containers of the chart this test did not run")


def main():
    if os.environ.get("WASD_IMAGE_TEST_INNER") != "1":
        why = missing_prerequisites()
        if why:
            print("SKIPPED: the image test needs: " + "; ".join(why), flush=True)
            return SKIP
        # Private mount, network and PID namespaces: the servers listen on
        # a loopback nobody else shares, and when the test ends (or ctest
        # kills it) every mount and process it made ends with it.
        env = dict(os.environ, WASD_IMAGE_TEST_INNER="1")
        cmd = ["unshare", "--mount", "--net", "--pid", "--fork", "--kill-child",
               "--mount-proc", "--propagation", "private",
               sys.executable, os.path.abspath(__file__)] + sys.argv[1:]
        return subprocess.run(cmd, env=env).returncode
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True, timeout=30)
    t = Timer()
    result = unittest.main(verbosity=2, exit=False).result
    log("total %s" % t)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
