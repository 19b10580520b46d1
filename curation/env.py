"""Strict readers for environment variables: a malformed value fails at start, naming the variable."""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path


class ConfigurationError(RuntimeError):
    """Raised when an environment variable holds a value the application cannot use."""


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    """`true` or `false` (any case) only, as healthchecks' envbool: `1`, `yes` or `on` stop the start."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value == "true":
        return True
    if value == "false":
        return False
    raise ConfigurationError(f"{name}={raw!r} is not a boolean; use true or false")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigurationError(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ConfigurationError(f"{name}={value} is below the minimum of {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def secret_key_file(path: Path) -> str:
    """The secret key kept in `path`, generated there once (mode 600) when the file does not exist yet.

    Every process of one start (web workers, Celery) reads the same file; the first one to arrive writes it
    through a private temporary file and a hard link, so no process ever reads a half-written key.
    """
    path = Path(path)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".secret-key-")  # mkstemp creates it 0600
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(50))
            try:
                os.link(temporary, path)
            except FileExistsError:
                pass  # another process won the race; use its key
        finally:
            os.unlink(temporary)
    if path.stat().st_mode & 0o077:
        raise ConfigurationError(f"{path} is readable by other users; chmod 600 it")
    key = path.read_text().strip()
    if len(key) < 50:
        raise ConfigurationError(f"{path} holds no usable secret key (delete it to generate a new one)")
    return key
