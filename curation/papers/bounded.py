"""Run the untrusted part of ingestion (unpacking, LaTeX parsing) in a child process with CPU-time, memory, file-size
and process limits and a wall-time kill, and read its answer back as strict JSON. Pure: no Django.

Every door goes through `sources_read_bounded`: the worker's ingestion job and the `ingest_papers` command. A limit
that is hit becomes a `LimitExceeded` whose message says which limit, for which file, in words a person reads.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from curation.latex.archive import MIB, ArchiveLimits
from curation.papers.child import MEMORY_EXIT  # what the child exits with after a MemoryError
from curation.toolkit.strict_json import JsonInputError, json_loads_strict

ROOT = Path(__file__).resolve().parents[2]
# The answer of one child (the extraction of every file, as JSON) is read up to this size.
MAX_ANSWER_BYTES = 256 * MIB
# How much of the child's stderr is kept to explain an unexpected exit.
STDERR_TAIL = 2000
PR_SET_PDEATHSIG = 1
try:  # loaded here, in the parent: the child only calls it between fork and exec
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(None)
except OSError:  # not Linux: the CPU and wall limits still end the child
    _LIBC = None


@dataclass(frozen=True)
class IngestLimits:
    """The bounds of one child: its CPU seconds, wall seconds and address space, and the archive limits."""

    cpu_s: int
    wall_s: int
    memory_bytes: int
    archive: ArchiveLimits


class LimitExceeded(Exception):
    """The child hit a limit (or died); `message` says which in words a person reads, `limit` names it."""

    def __init__(self, message: str, *, limit: str) -> None:
        super().__init__(message)
        self.message = message
        self.limit = limit


def size_words(count: int) -> str:
    """1073741824 → "1 GiB", 209715200 → "200 MiB"."""
    for unit, size in (("GiB", 1024 * MIB), ("MiB", MIB), ("KiB", 1024)):
        if count >= size:
            return f"{count / size:.4g} {unit}"
    return f"{count} bytes"


def _limit_child(limits: IngestLimits) -> Callable[[], None]:
    def apply() -> None:
        if _LIBC is not None and hasattr(_LIBC, "prctl"):  # killed with the process that started it (a worker)
            _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        # What an archive may write in all, plus room for the temporary folder's bookkeeping.
        written = limits.archive.max_uncompressed_bytes + MIB
        resource.setrlimit(resource.RLIMIT_FSIZE, (written, written))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # The reader never starts a process; nothing it parses may either.
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))

    return apply


def sources_read_bounded(
    *,
    files: list[tuple[Path, str]],
    limits: IngestLimits,
    progress: Callable[[dict[str, Any]], None] | None = None,
    tick: Callable[[], None] | None = None,
    tick_s: float = 2.0,
) -> list[dict[str, Any]]:
    """Read `files` ((path, source name) pairs) in one bounded child; one answer per file, in order:
    {"source_name", "sha256", "extraction"} or {"source_name", "refused"}. `progress` hears each progress line,
    `tick` is called at least every `tick_s` seconds while the child runs (the caller's heartbeat). LimitExceeded
    when a limit is hit; the child is killed with its process group then, and always before this returns."""
    request = {"files": [{"path": str(path), "name": name} for path, name in files], "archive": asdict(limits.archive)}
    with tempfile.TemporaryDirectory(prefix="tat-child-") as scratch, open(Path(scratch) / "stderr", "w+b") as errors:
        # Nothing of the worker's environment (database and broker URLs, keys) reaches the child.
        environment = {"PYTHONPATH": str(ROOT), "TMPDIR": scratch, "LANG": "C.UTF-8"}
        child = subprocess.Popen(
            [sys.executable, "-m", "curation.papers.child"],
            cwd=scratch,
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            preexec_fn=_limit_child(limits),
            start_new_session=True,
        )
        try:
            return _talk(child, request, limits, errors, progress, tick, tick_s)
        finally:
            if child.returncode is None:
                _kill(child)


def _talk(
    child: subprocess.Popen,
    request: dict[str, Any],
    limits: IngestLimits,
    errors: Any,
    progress: Callable[[dict[str, Any]], None] | None,
    tick: Callable[[], None] | None,
    tick_s: float,
) -> list[dict[str, Any]]:
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write(json.dumps(request).encode())
        child.stdin.close()
    except BrokenPipeError:
        pass  # the child died at once; its exit says why
    deadline = time.monotonic() + limits.wall_s
    last_tick = time.monotonic()
    buffer = bytearray()
    lines: list[bytes] = []
    current = ""
    stdout = child.stdout.fileno()
    while True:
        now = time.monotonic()
        if now >= deadline:
            _kill(child)
            raise LimitExceeded(
                _about(current, f"extraction took longer than {limits.wall_s} s (wall-time limit)"), limit="wall"
            )
        if tick is not None and now - last_tick >= tick_s:
            tick()
            last_tick = now
        ready, _, _ = select.select([stdout], [], [], min(tick_s, max(deadline - now, 0.01)))
        if not ready:
            continue
        chunk = os.read(stdout, MIB)
        if not chunk:
            break
        buffer.extend(chunk)
        if len(buffer) > MAX_ANSWER_BYTES:
            _kill(child)
            raise LimitExceeded(
                _about(current, f"extraction produced more than {size_words(MAX_ANSWER_BYTES)} of results"),
                limit="answer",
            )
        while (end := buffer.find(b"\n")) >= 0:
            line = bytes(buffer[:end])
            del buffer[: end + 1]
            if line.startswith(b'{"progress"'):
                message = _parse(line)
                current = str(message["progress"].get("file", current))
                if progress is not None:
                    progress(message["progress"])
            else:
                lines.append(line)
    status, cpu_s = _reap(child)
    return _answer(status, cpu_s, lines, limits, errors, current)


def _answer(
    status: int, cpu_s: float, lines: list[bytes], limits: IngestLimits, errors: Any, current: str
) -> list[dict[str, Any]]:
    messages = [_parse(line) for line in lines if line.strip()]
    if any(message.get("limit") == "memory" for message in messages) or status == MEMORY_EXIT:
        raise LimitExceeded(_about(current, f"memory limit {size_words(limits.memory_bytes)} exceeded"), limit="memory")
    # SIGXCPU comes only from the soft CPU limit, SIGKILL after it from the hard one. The rusage figure runs behind
    # the kernel's own count under load (4.2 s at a 5 s limit), so it only tells the hard limit from other kills.
    if status == -signal.SIGXCPU or (status == -signal.SIGKILL and cpu_s >= 0.8 * limits.cpu_s):
        raise LimitExceeded(_about(current, f"extraction used more than {limits.cpu_s} s of CPU time"), limit="cpu")
    answers = [message for message in messages if "sources" in message]
    if status != 0 or not answers:
        errors.seek(0)
        tail = errors.read()[-STDERR_TAIL:].decode("utf-8", "replace").strip()
        last = tail.splitlines()[-1] if tail else "no message"
        raise LimitExceeded(
            _about(
                current,
                f"the extraction process stopped unexpectedly (exit status {status}, {cpu_s:.1f} s of CPU: {last})",
            ),
            limit="crash",
        )
    return list(answers[-1]["sources"])


def _about(current: str, reason: str) -> str:
    return f"{current}: {reason}" if current else reason


def _parse(line: bytes) -> dict[str, Any]:
    try:
        message = json_loads_strict(line)
    except JsonInputError as error:
        raise LimitExceeded(
            f"the extraction process answered something that is not JSON ({error})", limit="crash"
        ) from error
    if not isinstance(message, dict):
        raise LimitExceeded("the extraction process answered something that is not a JSON object", limit="crash")
    return message


def _reap(child: subprocess.Popen) -> tuple[int, float]:
    """Wait for the child and return its exit status (negative: the signal) and the CPU seconds it used."""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, usage.ru_utime + usage.ru_stime


def _kill(child: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    if child.returncode is None:
        _reap(child)
