"""Runs a program from an unpacked image root filesystem the way a container
runtime runs a Kubernetes container with the chart's security context, using
only mount(8), setpriv(1) and chroot(1) (no daemon):

- the root is a read-only overlay of the image's rootfs and a small layer of
  empty mount points (the image itself is never written);
- the pod's volumes are bind mounts on those mount points (read-only where
  the chart says so), emptyDirs are tmpfs, /proc is proc, /dev holds null,
  zero, random and urandom; /etc/hosts, /etc/resolv.conf and the
  service-account directory are mounted like kubelet mounts them;
- the program runs as uid/gid 65532 with supplementary group fsGroup, no
  capabilities and no_new_privs (allowPrivilegeEscalation: false), with
  only the environment the container would get.

The caller must be root in a private mount namespace (the test re-executes
itself under `unshare --mount`), so every mount disappears with the
namespace even if the test dies; `Container.stop()` also unmounts its own.
"""

import os
import shutil
import signal
import subprocess

# Mounts and unmounts are instant; the bound only keeps a wedged mount(8)
# from hanging the test.
_MOUNT_TIMEOUT_S = 30


def _run(cmd):
    subprocess.run(cmd, check=True, capture_output=True, timeout=_MOUNT_TIMEOUT_S)


class Mount:
    """One mount in the container: `source` (a host path, or None for an
    emptyDir tmpfs) at `target` (absolute path inside the container)."""

    def __init__(self, target, source=None, read_only=True, is_file=False):
        self.target = target
        self.source = source
        self.read_only = read_only
        self.is_file = is_file


class Container:
    """A program started from the image root. Use Start(); Stop() sends SIGTERM
    to the program's PID (setpriv and chroot exec it, so the PID is its own)."""

    def __init__(self, rootfs, work, name, argv, env, mounts=(), uid=65532, gid=65532,
                 groups=(65532,), extra_files=None):
        self.rootfs = rootfs
        self.dir = os.path.join(work, name)
        self.name = name
        self.argv = list(argv)
        self.env = dict(env)
        self.mounts = list(mounts)
        self.uid, self.gid, self.groups = uid, gid, tuple(groups)
        # {path inside the container: host file}: files placed in the
        # mount-point layer (read-only like the rest of the root).
        self.extra_files = dict(extra_files or {})
        self.root = os.path.join(self.dir, "root")
        self.log_path = os.path.join(self.dir, "output.log")
        self.proc = None
        self._mounted = []

    # ---------------------------------------------------------------- setup

    def _layer(self):
        """The lower layer above the image: empty mount points, extra files."""
        layer = os.path.join(self.dir, "mountpoints")
        os.makedirs(layer)
        points = [Mount("/proc"), Mount("/dev")] + self.mounts
        for m in points:
            path = layer + m.target
            if m.is_file:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "w").close()
            else:
                os.makedirs(path, exist_ok=True)
        for target, host in self.extra_files.items():
            path = layer + target
            os.makedirs(os.path.dirname(path), exist_ok=True)
            shutil.copy2(host, path)
        return layer

    def _mount(self, *args):
        _run(["mount"] + list(args))
        self._mounted.append(args[-1])

    def _prepare(self):
        os.makedirs(self.root)
        layer = self._layer()
        # No upperdir: an overlay of lower layers only is read-only.
        self._mount("-t", "overlay", "overlay", "-o",
                    "ro,lowerdir=%s:%s" % (layer, self.rootfs), self.root)
        self._mount("-t", "proc", "-o", "nosuid,nodev,noexec", "proc", self.root + "/proc")
        self._mount("-t", "tmpfs", "-o", "nosuid,noexec,mode=0755,size=64k", "tmpfs",
                    self.root + "/dev")
        for dev in ("null", "zero", "random", "urandom"):
            path = self.root + "/dev/" + dev
            open(path, "w").close()
            self._mount("--bind", "/dev/" + dev, path)
        for m in self.mounts:
            where = self.root + m.target
            if m.source is None:
                self._mount("-t", "tmpfs", "-o", "nosuid,nodev,mode=1777,size=64m", "tmpfs", where)
                continue
            self._mount("--bind", m.source, where)
            if m.read_only:
                _run(["mount", "-o", "remount,bind,ro,nosuid,nodev", where])

    # -------------------------------------------------------------- running

    def command(self):
        groups = ",".join(str(g) for g in self.groups)
        return (["setpriv", "--no-new-privs", "chroot",
                 "--userspec=%d:%d" % (self.uid, self.gid), "--groups=" + groups, self.root]
                + self.argv)

    def Start(self):
        self._prepare()
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.command(), env=self.env, stdout=self._log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     cwd="/")
        return self

    def Run(self, timeout):
        """Starts, waits up to `timeout` seconds, returns (exit code, output)."""
        self.Start()
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            code = None
        finally:
            self._close()
        return code, self.Output()

    def Execed(self):
        """True once the program runs from the container's root (setpriv and
        chroot have exec'd it, so its identity is the container's)."""
        try:
            return os.readlink("/proc/%d/exe" % self.proc.pid).startswith(self.root + "/")
        except OSError:
            return False

    def Running(self):
        return self.proc is not None and self.proc.poll() is None

    def Stop(self, timeout):
        """SIGTERM by PID, then waits up to `timeout` s (SIGKILL after that).
        Returns the exit code, or None when it had to be killed."""
        code = None
        if self.proc is not None:
            if self.proc.poll() is None:
                os.kill(self.proc.pid, signal.SIGTERM)
                try:
                    code = self.proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
            else:
                code = self.proc.returncode
        self._close()
        return code

    def _close(self):
        log = getattr(self, "_log", None)
        if log and not log.closed:
            log.close()
        # Innermost first.
        while self._mounted:
            subprocess.run(["umount", "-l", self._mounted.pop()], capture_output=True,
                           timeout=_MOUNT_TIMEOUT_S)

    def Output(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def Status(self):
        """The running program's /proc/PID/status as a dict."""
        out = {}
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                key, _, value = line.partition(":")
                out[key] = value.strip()
        return out
