"""The seccomp filter of the sandbox: a deny list compiled by libseccomp (pyseccomp) to classic BPF, which bwrap
loads with `--seccomp FD` just before it executes the program.

Denied with EPERM: memory a program could hold outside its address space (SysV shared memory, message queues and
semaphores, memfd), the calls that change namespaces or mounts (unshare, setns, clone with a CLONE_NEW* flag, mount,
pivot_root, chroot and the new mount API), and kernel attack surface a verification program never needs (ptrace,
bpf, keyrings, perf events, modules, kexec, userfaultfd, io_uring, cross-process memory, file handles, swap,
reboot). clone3 gets ENOSYS: its flags live in memory a filter cannot read, and glibc then falls back to clone,
whose flags the filter does check, so threads and subprocesses still work. System calls of a foreign architecture
(32-bit int 0x80 on x86-64) kill the process: the filter only knows the native numbers.
"""

from __future__ import annotations

import errno
import functools
import tempfile

import structlog

from workers.verify.sandbox_types import SandboxUnavailableError

log = structlog.get_logger(__name__)

DENIED_SYSCALLS: tuple[str, ...] = (
    # memory outside RLIMIT_AS: SysV IPC and memfd (tmpfs pages nobody maps)
    "shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop",
    "semtimedop", "semctl", "memfd_create", "memfd_secret",
    # namespaces, mounts and roots
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
    "move_mount", "open_tree", "mount_setattr",
    # kernel surface
    "ptrace", "process_vm_readv", "process_vm_writev", "bpf", "perf_event_open", "keyctl", "add_key",
    "request_key", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "open_by_handle_at",
    "name_to_handle_at", "swapon", "swapoff", "reboot", "acct", "quotactl", "lookup_dcookie", "uselib",
    "personality", "syslog", "vhangup", "iopl", "ioperm",
)
# clone flags that make a namespace (CLONE_NEWTIME, 0x80, is only valid for clone3 and unshare, both refused)
CLONE_NAMESPACE_FLAGS: tuple[int, ...] = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000,
                                          0x20000000, 0x40000000)


@functools.lru_cache(maxsize=1)
def seccomp_bpf() -> bytes:
    """The filter as classic BPF bytes (built once per process). Raises SandboxUnavailableError without libseccomp."""
    try:
        import pyseccomp as sc
    except (ImportError, RuntimeError, OSError) as exc:  # pyseccomp raises RuntimeError without libseccomp.so
        raise SandboxUnavailableError(f"seccomp is unavailable: {exc} (pip install pyseccomp; apt-get install "
                                      f"libseccomp2)") from None
    try:
        f = sc.SyscallFilter(sc.ALLOW)
        f.set_attr(sc.Attr.CTL_NNP, 0)  # bwrap sets no_new_privs itself before it loads the filter
        skipped = []
        for name in DENIED_SYSCALLS:
            try:
                nr = sc.resolve_syscall(sc.Arch.NATIVE, name)
            except (OSError, ValueError):
                nr = -1
            if nr < 0:  # not a system call on this architecture (e.g. iopl on aarch64)
                skipped.append(name)
                continue
            f.add_rule(sc.ERRNO(errno.EPERM), nr)
        for flag in CLONE_NAMESPACE_FLAGS:
            f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        with tempfile.TemporaryFile() as out:
            f.export_bpf(out)
            out.seek(0)
            program = out.read()
    except OSError as exc:
        raise SandboxUnavailableError(f"the seccomp filter could not be built: {exc}") from None
    if not program or len(program) % 8:
        raise SandboxUnavailableError("the seccomp filter could not be built: libseccomp exported no program")
    log.debug("sandbox.seccomp.built", instructions=len(program) // 8, skipped=skipped)
    return program
