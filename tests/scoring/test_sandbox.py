"""Sandboxed execution of model-written Python: results, limits and isolation."""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from scoring import sandbox
from scoring.sandbox import (
    ISOLATION_BWRAP,
    ISOLATION_DEGRADED,
    SandboxUnavailableError,
    bwrap_path,
    isolation_status,
)

REPO = Path(__file__).resolve().parents[2]
SETTINGS = REPO / "config" / "settings.py"
STRONGEST = isolation_status(allow_unisolated=True).isolation  # bwrap, else degraded
needs_bwrap = pytest.mark.skipif(STRONGEST != ISOLATION_BWRAP, reason="bubblewrap cannot start on this machine")
# The limits are the sandbox's own (rlimits, wall clock, output caps): where bubblewrap cannot start they are
# checked on an explicitly allowed unisolated run; isolation itself is checked only where bwrap starts.
run_program = functools.partial(sandbox.run_program, allow_unisolated=STRONGEST != ISOLATION_BWRAP)


def _alive_with_marker(run_id: str) -> list[int]:
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if run_id.encode() in cmdline and state != "Z":
            alive.append(int(entry.name))
    return alive


def test_bwrap_binary_is_shipped_and_executable():
    path = bwrap_path()
    assert path is not None and path.name == "bwrap" and os.access(path, os.X_OK)


def test_runs_use_the_strongest_isolation_available():
    assert run_program("ans = 1").isolation == STRONGEST


def _has_cap_sys_admin() -> bool:
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    effective = int(next(line for line in status.splitlines() if line.startswith("CapEff:")).split()[1], 16)
    return bool(effective & (1 << 21))


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0 or not _has_cap_sys_admin(),
    reason="only a root worker with CAP_SYS_ADMIN is sure to be able to start bwrap",
)
def test_privileged_root_on_linux_gets_bubblewrap():
    assert STRONGEST == ISOLATION_BWRAP


def test_returns_ans_variable_and_stdout():
    result = run_program("xs = [1, 2, 3]\nans = sum(xs) / 2\nprint('working')")
    assert result.ok and result.value == 3.0
    assert result.stdout == "working\n"
    assert result.error is None and not result.timed_out


def test_calls_entry_function_and_returns_its_string():
    result = run_program("def solution():\n    return 'The growth is 12.5%'", entry="solution()")
    assert result.ok and result.value == "The growth is 12.5%"


def test_entry_function_receives_arguments():
    result = run_program("def f(a, b):\n    return a * b", entry="f()", args=[6, 7])
    assert result.value == 42


def test_values_are_made_json_compatible():
    code = "from fractions import Fraction\nans = {'t': (1, 2), 'f': Fraction(1, 4), 'nan': float('nan'), 's': {3}}"
    result = run_program(code)
    assert result.value == {"t": [1, 2], "f": 0.25, "nan": "nan", "s": [3]}


def test_missing_ans_is_a_clear_error():
    result = run_program("x = 1")
    assert not result.ok and result.error == "NameError: the program did not set 'ans'"


def test_exception_in_program_is_reported_with_traceback():
    result = run_program("ans = 1 / 0")
    assert not result.ok
    assert result.error == "ZeroDivisionError: division by zero"
    assert "ZeroDivisionError" in result.stderr


def test_bad_entry_is_rejected_before_running():
    with pytest.raises(ValueError):
        run_program("ans = 1", entry="os.system('x')")


def test_environment_is_empty_and_interpreter_isolated():
    # LC_CTYPE is set by Python's own locale coercion and PWD by bwrap --chdir, not by the caller.
    code = (
        "import os, sys\n"
        "ans = [sorted(k for k in os.environ if k not in ('LC_CTYPE', 'PWD')), sys.flags.isolated, sys.flags.no_site]"
    )
    os.environ["TAT_SANDBOX_SECRET"] = "leak"
    try:
        result = run_program(code)
    finally:
        del os.environ["TAT_SANDBOX_SECRET"]
    assert result.value == [[], 1, 1]


def test_infinite_loop_is_killed_by_wall_clock():
    result = run_program("while True:\n    pass", timeout_s=1.5)
    assert result.timed_out and not result.ok
    assert "timed out" in result.error
    assert not _alive_with_marker(result.run_id)


def test_sleeping_program_is_killed_by_wall_clock():
    result = run_program("import time\ntime.sleep(60)\nans = 1", timeout_s=1)
    assert result.timed_out and result.value is None


def test_memory_bomb_hits_address_space_limit():
    result = run_program("blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 1024 * 1024))", memory_mb=200)
    assert not result.ok and result.error == "MemoryError"
    assert not result.timed_out


def test_fork_bomb_is_capped_by_process_limit():
    code = (
        "import os, time\nn = 0\nwhile True:\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n"
        "    if pid == 0:\n        time.sleep(60)\n        os._exit(0)\n    n += 1\nans = n"
    )
    result = run_program(code, max_processes=8, timeout_s=10)
    assert result.ok
    assert result.value < 8
    assert not _alive_with_marker(result.run_id)
    assert subprocess.run([sys.executable, "-c", "pass"], check=False).returncode == 0


def test_endless_fork_bomb_is_contained_and_caller_still_forks():
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    result = run_program(code, max_processes=8, timeout_s=2)
    assert result.timed_out
    assert not _alive_with_marker(result.run_id)
    assert subprocess.run([sys.executable, "-c", "pass"], check=False).returncode == 0


def test_huge_output_is_capped():
    code = "import sys\nfor _ in range(100000):\n    sys.stdout.write('x' * 1000)\nans = 'done'"
    result = run_program(code, max_output_bytes=4096)
    assert result.ok and result.value == "done"
    assert result.stdout_truncated and len(result.stdout) == 4096


def test_endless_output_is_capped_and_timed_out():
    result = run_program("while True:\n    print('y' * 1000)", max_output_bytes=1000, timeout_s=1)
    assert result.timed_out and result.stdout_truncated and len(result.stdout) == 1000


def test_large_file_write_hits_file_size_limit():
    result = run_program("open('big.bin', 'wb').write(b'x' * (20 * 1024 * 1024))", file_size_mb=1)
    assert not result.ok and "File too large" in result.error


@pytest.mark.skipif(
    STRONGEST != ISOLATION_BWRAP and os.geteuid() != 0,
    reason="degraded mode run by the repository's owner can write where its owner can",
)
def test_writes_outside_the_sandbox_do_not_reach_the_host():
    target = REPO / "sandbox-escape-check.txt"
    result = run_program(f"open({str(target)!r}, 'w').write('escaped')\nans = 'wrote'")
    assert not result.ok
    assert not target.exists()


@needs_bwrap
def test_tmp_is_private_and_writable():
    marker = Path("/tmp") / "tat-sandbox-host-marker"
    marker.write_text("host")
    try:
        code = (
            f"import os\nopen('/tmp/scratch', 'w').write('ok')\n"
            f"ans = [os.path.exists({str(marker)!r}), open('/tmp/scratch').read()]"
        )
        result = run_program(code)
    finally:
        marker.unlink()
    assert result.value == [False, "ok"]
    assert not Path("/tmp/scratch").exists() or Path("/tmp/scratch").read_text() != "ok"


@needs_bwrap
def test_host_files_are_not_readable():
    for path in (SETTINGS, Path("/etc/passwd"), Path("/root/.bashrc"), Path("/proc/1/environ")):
        result = run_program(f"ans = open({str(path)!r}).read()")
        assert not result.ok, path
        assert result.error.startswith(("FileNotFoundError", "PermissionError")), result.error


@needs_bwrap
def test_system_paths_are_read_only():
    result = run_program("open('/usr/sandbox-write-check', 'w')")
    assert not result.ok and "Read-only file system" in result.error
    assert not Path("/usr/sandbox-write-check").exists()


@needs_bwrap
def test_network_is_unreachable_even_on_loopback():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(5)
    port = server.getsockname()[1]
    accepted: list[bool] = []

    def accept() -> None:
        try:
            server.accept()[0].close()
            accepted.append(True)
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        code = (
            "import socket\nout = []\nfor host, port in (('127.0.0.1', PORT), ('1.1.1.1', 80)):\n"
            "    try:\n        socket.create_connection((host, port), timeout=2).close()\n"
            "        out.append('connected')\n"
            "    except OSError as error:\n        out.append(type(error).__name__)\nans = out"
        ).replace("PORT", str(port))
        result = run_program(code)
    finally:
        server.close()
        thread.join()
    assert result.ok
    assert "connected" not in result.value
    assert not accepted


def test_unusable_bwrap_runs_unisolated_only_when_explicitly_allowed():
    result = sandbox.run_program("ans = 2 + 2", use_bwrap=False, allow_unisolated=True)
    assert result.ok and result.value == 4 and result.isolation == ISOLATION_DEGRADED


def test_unusable_bwrap_refuses_by_default():
    with pytest.raises(SandboxUnavailableError):
        sandbox.run_program("ans = 1", use_bwrap=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="privilege drop only happens for root workers")
def test_root_worker_runs_programs_unprivileged():
    result = run_program("import os\nans = [os.getuid(), os.geteuid()]")
    assert result.value[0] != 0 and result.value[1] != 0


@needs_bwrap
def test_the_data_directory_and_its_secret_key_file_are_not_readable():
    from django.conf import settings

    secret = Path(settings.DATA_DIR) / "secret_key"
    created = not secret.exists()
    if created:
        secret.write_text("sandbox-check-secret")
        secret.chmod(0o644)  # even a world-readable key stays out of reach
    try:
        code = (
            f"import os\nout = []\nfor path in ({str(secret)!r}, {str(settings.DATA_DIR)!r}):\n"
            "    try:\n        out.append(open(path).read() if path.endswith('key') else os.listdir(path))\n"
            "    except OSError as error:\n        out.append(type(error).__name__)\nans = out"
        )
        result = run_program(code)
    finally:
        if created:
            secret.unlink()
    assert result.ok and result.value == ["FileNotFoundError", "FileNotFoundError"]


@needs_bwrap
@pytest.mark.parametrize("port", [5432, 6379], ids=["postgresql", "redis"])
def test_the_database_and_redis_of_this_host_are_unreachable(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        pytest.skip(f"nothing listens on 127.0.0.1:{port} here")
    code = (
        f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
        "    ans = 'connected'\nexcept OSError as error:\n    ans = type(error).__name__"
    )
    result = run_program(code)
    assert result.ok and result.value != "connected"
