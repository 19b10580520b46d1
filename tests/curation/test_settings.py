"""Settings come from the environment through strict helpers; bad values stop the start with a clear message."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from curation.env import ConfigurationError, env_bool, env_int, env_list
from tests.support.sources import parsed

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("raw", "expected"), [("true", True), ("False", False), (" TRUE ", True), ("false", False)])
def test_env_bool_accepts_true_and_false(monkeypatch, raw, expected):
    monkeypatch.setenv("X_FLAG", raw)
    assert env_bool("X_FLAG", not expected) is expected


@pytest.mark.parametrize("raw", ["maybe", "1", "0", "yes", "on", "off"])
def test_env_bool_rejects_anything_else_naming_the_variable(monkeypatch, raw):
    monkeypatch.setenv("X_FLAG", raw)
    with pytest.raises(ConfigurationError, match=f"X_FLAG='{raw}' is not a boolean"):
        env_bool("X_FLAG", False)


def test_the_configuration_reference_says_booleans_take_true_or_false_only():
    assert "`true`/`false` only" in (ROOT / "docs" / "configuration.md").read_text()


# Reads of the process environment allowed outside settings.py/env.py: an endpoint's API key is read by the *name*
# its row stores (data, not a setting), and setdefault calls only prepare the process (settings module, BLAS).
_ENV_READS_ALLOWED = {
    ("curation/endpoints/config.py", "os.environ.get(self.api_key_env)"),
    ("curation/drafting/endpoints.py", "os.environ.get(endpoint.api_key_env)"),
}


def _app_modules():
    for app in ("config", "curation", "annotate", "scoring"):
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_no_setting_is_read_outside_the_settings_module():
    """Settings are read in config/settings.py only: no os.environ/getenv elsewhere, no getattr(settings, x, d)."""
    offenders = []
    for name, source in _app_modules():
        for node in ast.walk(parsed(ROOT / name, source)):
            if not isinstance(node, ast.Call | ast.Subscript):
                continue  # unparsing every node (whole classes and functions too) was most of this test's time
            text = ast.unparse(node)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
                if len(node.args) == 3 and ast.unparse(node.args[0]) == "settings":
                    offenders.append(f"{name}: {text}")
            if name in ("config/settings.py", "curation/env.py"):
                continue
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.getenv", "getenv"):
                offenders.append(f"{name}: {text}")
            is_env_call = isinstance(node, ast.Call) and re.fullmatch(r"os\.environ\.(get|pop)", ast.unparse(node.func))
            if is_env_call and (name, text) not in _ENV_READS_ALLOWED:
                offenders.append(f"{name}: {text}")
            if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
                offenders.append(f"{name}: {text}")
    assert offenders == []


def test_scoring_chunks_run_under_the_global_task_time_limit():
    from celery import current_app
    from django.conf import settings

    import scoring.tasks  # noqa: F401  (registers the task)

    task = current_app.tasks["scoring.run_chunk"]
    assert (task.time_limit, task.soft_time_limit) == (
        settings.CELERY_TASK_TIME_LIMIT,
        settings.CELERY_TASK_SOFT_TIME_LIMIT,
    )
    source = (ROOT / "scoring" / "tasks.py").read_text()
    assert "time_limit=" not in source  # no task overrides the global limits


def test_env_int_rejects_garbage_and_values_below_minimum(monkeypatch):
    monkeypatch.setenv("X_NUM", "12a")
    with pytest.raises(ConfigurationError, match="X_NUM='12a' is not an integer"):
        env_int("X_NUM", 1)
    monkeypatch.setenv("X_NUM", "0")
    with pytest.raises(ConfigurationError, match="below the minimum"):
        env_int("X_NUM", 1, minimum=1)


def test_env_list_splits_on_commas(monkeypatch):
    monkeypatch.setenv("X_HOSTS", "a.org, b.org,,")
    assert env_list("X_HOSTS", []) == ["a.org", "b.org"]
    monkeypatch.delenv("X_HOSTS")
    assert env_list("X_HOSTS", ["d"]) == ["d"]


def _settings_in_subprocess(env: dict[str, str], expression: str) -> subprocess.CompletedProcess:
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings'; django.setup(); "
        f"from django.conf import settings; print(repr(({expression})))"
    )
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=60
    )


def test_malformed_boolean_stops_the_start(tmp_path):
    result = _settings_in_subprocess({"DJANGO_DEBUG": "yesplease", "TATCURATE_DATA_DIR": str(tmp_path)}, "1")
    assert result.returncode != 0
    assert "DJANGO_DEBUG='yesplease' is not a boolean" in result.stderr


def test_embedded_defaults_use_sqlite_wal_filesystem_broker_and_locmem(tmp_path):
    expression = (
        "settings.DATABASES['default']['ENGINE'], settings.DATABASES['default']['OPTIONS']['transaction_mode'], "
        "settings.CELERY_BROKER_URL, settings.CACHES['default']['BACKEND'].rsplit('.', 1)[-1]"
    )
    result = _settings_in_subprocess({"TATCURATE_DATA_DIR": str(tmp_path)}, expression)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ("('django.db.backends.sqlite3', 'IMMEDIATE', 'filesystem://', 'LocMemCache')")
    assert (tmp_path / "broker" / "queue").is_dir()


def test_postgres_and_redis_come_from_the_environment(tmp_path):
    env = {
        "TATCURATE_DATA_DIR": str(tmp_path),
        "DATABASE_URL": "postgres://u@db.example:5433/curate",
        "REDIS_URL": "redis://cache.example:6379/2",
    }
    expression = (
        "settings.DATABASES['default']['ENGINE'], settings.DATABASES['default']['PORT'], "
        "settings.CELERY_BROKER_URL, settings.CACHES['default']['BACKEND'].rsplit('.', 1)[-1]"
    )
    result = _settings_in_subprocess(env, expression)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "('django.db.backends.postgresql', 5433, 'redis://cache.example:6379/2', 'RedisCache')"
    )


def test_production_requires_a_secret_key(tmp_path):
    result = _settings_in_subprocess({"DJANGO_DEBUG": "false", "TATCURATE_DATA_DIR": str(tmp_path)}, "1")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_deploy_check_passes_with_production_variables(tmp_path):
    ignored = ("DATABASE_URL", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE")  # the last is set by the browser tests
    env = {
        **{k: v for k, v in os.environ.items() if k not in ignored},
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": "x" * 20 + "Qw3rTy-uIoP_aSdF-gHjK-lZxC-vBnM-1234567890",
        "DJANGO_ALLOWED_HOSTS": "curate.example.org",
        "TATCURATE_DATA_DIR": str(tmp_path),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_queue_names_come_from_the_environment_and_a_plain_worker_consumes_them_all(tmp_path):
    env = {"TATCURATE_DATA_DIR": str(tmp_path), "TATCURATE_SCORING_QUEUE": "gpu", "TATCURATE_DRAFTING_QUEUE": "cpu"}
    expression = (
        "[q.name for q in settings.CELERY_TASK_QUEUES], "
        "__import__('curation.queues', fromlist=['queue_for']).queue_for('scoring.run_chunk')"
    )
    result = _settings_in_subprocess(env, expression)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(['celery', 'cpu', 'gpu', 'exports', 'control'], 'gpu')"
