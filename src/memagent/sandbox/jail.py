"""The OS jail of a sandbox worker: the second wall behind the interpreter.

`enter_jail` runs in the worker once everything it needs is imported and the
files it keeps are open; from then on the process cannot gain anything back.
In order, as far as the platform allows:

1. **Namespaces** (Linux): a new network namespace (no interface but a down
   loopback: no network at all), mount, IPC and UTS namespaces. As root they
   are made directly; otherwise inside a new user namespace, when unprivileged
   user namespaces are enabled. Optional: the seccomp filter below already
   refuses sockets.
2. **An unprivileged user**: started as root, the worker drops to `nobody`
   (supplementary groups cleared, then gid, then uid: it cannot regain root).
   The code it imported may live where `nobody` cannot read (under /root):
   the worker imported it all before.
3. **Hard limits** (soft = hard, so they cannot be raised back): address space,
   open files (those already open), no file size (no writes), no core dumps,
   no processes, and a CPU budget for the worker's lifetime (each run lowers
   its own soft CPU limit; the pool retires a worker past half its budget).
4. **`PR_SET_NO_NEW_PRIVS`**: no set-uid or file capability can ever apply.
5. **A seccomp filter** (libseccomp through `pyseccomp`): `EPERM` for creating
   sockets, new processes or threads (`fork`, `vfork`, `clone`, `clone3`),
   `execve`, opening any file (the worker reads only descriptors it opened
   before: its pipes and `/proc/self/status`), every call that writes the
   file system (unlink, rename, mkdir, truncate, chmod, chown, links, xattrs,
   times), raising a limit other than the CPU one, signalling another process,
   tracing, mounting, namespaces, BPF, io_uring, keyrings and module loading.
   Other architectures' system calls kill the process.

Which layers hold is reported as a `JailReport`. The pool refuses workers
without the three essential ones (an unprivileged user, no_new_privs,
seccomp) unless `MEMAGENT_SANDBOX_UNJAILED=1` (or `WorkerPool(allow_unjailed=
True)`) says to run them with OS limits only; it then warns once.

Per platform: Linux with libseccomp2 (Debian/Ubuntu `libseccomp2`, present on
most installs): all five layers (namespaces where the kernel allows them).
Linux without libseccomp, macOS and others: hard limits and (as root) the
`nobody` user only, so unjailed mode needs the opt-in. Windows has no workers'
jail (`resource` is missing there).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import resource
import sys
from dataclasses import dataclass, field
from typing import Any

NOBODY = 65534
LIFETIME_CPU_S = 3600
"""CPU seconds one worker may use in its life (the hard RLIMIT_CPU)."""
UNJAILED_ENV = "MEMAGENT_SANDBOX_UNJAILED"
ESSENTIAL = ("user", "no_new_privs", "seccomp")

_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000

_DENIED = (
    # network
    "socket",
    "socketpair",
    # new processes and threads, other programs
    "fork",
    "vfork",
    "clone",
    "execve",
    "execveat",
    # opening files (reads and writes alike)
    "open",
    "creat",
    "openat",
    "open_by_handle_at",
    "name_to_handle_at",
    "memfd_create",
    # writing the file system
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "mknod",
    "mknodat",
    "truncate",
    "ftruncate",
    "fallocate",
    "chmod",
    "fchmod",
    "fchmodat",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    # other processes, the kernel, privileges
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "tkill",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "setns",
    "unshare",
    "bpf",
    "perf_event_open",
    "keyctl",
    "add_key",
    "request_key",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "personality",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setgroups",
    "setfsuid",
    "setfsgid",
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "ioperm",
    "iopl",
    "fanotify_init",
)
_NOT_THERE = ("clone3", "openat2")
"""Answered ENOSYS, so the C library falls back to the calls denied above."""


@dataclass
class JailReport:
    """What holds in this worker; `missing` says why a layer does not."""

    uid: int = -1
    layers: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)

    @property
    def jailed(self) -> bool:
        return all(layer in self.layers for layer in ESSENTIAL)

    def as_dict(self) -> dict[str, object]:
        return {"uid": self.uid, "layers": self.layers, "missing": self.missing}


def _libc() -> ctypes.CDLL:
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def _load_seccomp() -> tuple[Any, str]:
    """`pyseccomp` (which finds libseccomp with helper programs: load it while
    the worker may still run them), or None and why not."""
    try:
        import pyseccomp
    except (ImportError, OSError, AttributeError, TypeError) as exc:
        return None, f"no libseccomp ({type(exc).__name__}: {exc})"
    return pyseccomp, ""


def _unshare(libc: ctypes.CDLL, flags: int) -> None:
    if libc.unshare(ctypes.c_int(flags)) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def _namespaces(libc: ctypes.CDLL, report: JailReport, as_root: bool) -> None:
    flags = _CLONE_NEWNET | _CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS
    try:
        _unshare(libc, flags if as_root else flags | _CLONE_NEWUSER)
    except OSError as exc:
        report.missing["namespaces"] = f"unshare: {exc.strerror}"
    else:
        report.layers.append("namespaces")


def _drop_user(report: JailReport) -> None:
    if os.getuid() != 0 and os.geteuid() != 0:
        report.layers.append("user")
        return
    try:
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
    except OSError as exc:
        report.missing["user"] = f"cannot become nobody: {exc.strerror}"
        return
    if os.getuid() == NOBODY and os.geteuid() == NOBODY:
        report.layers.append("user")


def _hard(kind: int, value: int) -> bool:
    try:
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))
    except (ValueError, OSError):
        return False
    return True


def _hard_limits(memory_bytes: int, open_files: int, report: JailReport) -> None:
    wanted = [
        (resource.RLIMIT_AS, memory_bytes),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_FSIZE, 0),
        (resource.RLIMIT_NOFILE, open_files),
    ]
    if hasattr(resource, "RLIMIT_NPROC"):
        wanted.append((resource.RLIMIT_NPROC, 0))
    failed = [str(kind) for kind, value in wanted if not _hard(kind, value)]
    try:  # the CPU: a hard budget for the worker's life; runs lower the soft one
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        cap = LIFETIME_CPU_S if hard == resource.RLIM_INFINITY else min(hard, LIFETIME_CPU_S)
        resource.setrlimit(resource.RLIMIT_CPU, (cap, cap))
    except (ValueError, OSError):
        failed.append("cpu")
    if failed:
        report.missing["hard_limits"] = "could not set " + ", ".join(failed)
    else:
        report.layers.append("hard_limits")


def _no_new_privs(libc: ctypes.CDLL, report: JailReport) -> None:
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        report.missing["no_new_privs"] = os.strerror(ctypes.get_errno())
    else:
        report.layers.append("no_new_privs")


def _seccomp(sc: Any, why_not: str, report: JailReport) -> None:
    if sc is None:
        report.missing["seccomp"] = why_not
        return
    me = os.getpid()
    deny = sc.ERRNO(errno.EPERM)
    try:
        f = sc.SyscallFilter(sc.ALLOW)
        for name in _DENIED:
            with contextlib.suppress(ValueError, OSError):  # not on this architecture
                f.add_rule(deny, name)
        for name in _NOT_THERE:
            with contextlib.suppress(ValueError, OSError):
                f.add_rule(sc.ERRNO(errno.ENOSYS), name)
        # limits: only this process's own (pid 0), only reading or the CPU one
        f.add_rule(deny, "prlimit64", sc.Arg(0, sc.NE, 0))
        f.add_rule(deny, "prlimit64", sc.Arg(1, sc.NE, resource.RLIMIT_CPU), sc.Arg(2, sc.NE, 0))
        with contextlib.suppress(ValueError, OSError):
            f.add_rule(deny, "setrlimit", sc.Arg(0, sc.NE, resource.RLIMIT_CPU))
        # signals: only to itself
        f.add_rule(deny, "kill", sc.Arg(0, sc.NE, me))
        f.add_rule(deny, "tgkill", sc.Arg(0, sc.NE, me))
        f.load()
    except OSError as exc:
        report.missing["seccomp"] = f"filter not loaded: {exc.strerror or exc}"
        return
    report.layers.append("seccomp")


def enter_jail(memory_bytes: int, *, open_files: int = 8) -> JailReport:
    """Jail this process for good (see the module doc) and say what holds."""
    report = JailReport()
    if not sys.platform.startswith("linux"):
        _drop_user(report)
        _hard_limits(memory_bytes, open_files, report)
        for layer in ("no_new_privs", "seccomp", "namespaces"):
            report.missing[layer] = f"not available on {sys.platform}"
        report.uid = os.getuid()
        return report
    libc = _libc()
    sc, why_not = _load_seccomp()
    as_root = os.geteuid() == 0
    if as_root:  # made while root: a user namespace would leave nobody unmapped
        _namespaces(libc, report, as_root=True)
    _drop_user(report)
    if not as_root:
        _namespaces(libc, report, as_root=False)
    _hard_limits(memory_bytes, open_files, report)
    _no_new_privs(libc, report)
    _seccomp(sc, why_not, report)
    report.uid = os.getuid()
    return report


def unjailed_allowed() -> bool:
    """Whether this process opted in to workers without the essential layers."""
    return os.environ.get(UNJAILED_ENV, "").strip().lower() in ("1", "true", "yes")
