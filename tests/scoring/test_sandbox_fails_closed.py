"""Where bubblewrap cannot start, model-written code is not run: the item records why, the run and /healthz say so."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from scoring import sandbox
from scoring.models import Prediction
from scoring.runs.chunks import chunk_process
from scoring.runs.creation import run_create
from scoring.runs.lifecycle import run_start
from tests.support import fault_server as fs

from .run_support import endpoint_for, small_release

PROGRAM = "open({marker!r}, 'w').write('ran')\nans = 42"
POT_REPLY = "```python\nopen({marker!r}, 'w').write('ran')\nans = 42\n```"


@pytest.fixture
def broken_bwrap(monkeypatch, tmp_path):
    """A bubblewrap that cannot start (as on a worker without the privilege it needs)."""
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: fake)
    return fake


def test_a_bwrap_that_cannot_start_runs_nothing_and_says_why(broken_bwrap, tmp_path):
    marker = tmp_path / "ran.txt"
    with pytest.raises(sandbox.SandboxUnavailableError, match="uid map: Permission denied"):
        sandbox.run_program(PROGRAM.format(marker=str(marker)))
    assert not marker.exists()


def test_a_missing_bwrap_runs_nothing(tmp_path):
    marker = tmp_path / "ran.txt"
    with pytest.raises(sandbox.SandboxUnavailableError, match="no isolation"):
        sandbox.run_program(PROGRAM.format(marker=str(marker)), use_bwrap=False)
    assert not marker.exists()


def test_only_the_explicit_unsafe_setting_runs_programs_unisolated(broken_bwrap):
    result = sandbox.run_program("ans = open('/etc/hostname').read().strip()", allow_unisolated=True)
    # The reason it needs a loud name: unisolated, a program reads the host's files (bwrap binds no /etc).
    assert result.ok and result.value == socket.gethostname() and result.isolation == sandbox.ISOLATION_DEGRADED


def scored_run(project, personas, *, method: str, reply: str, questions: int):
    """A run of `method` on a small release, every chunk processed here; returns (run, model requests)."""
    release = small_release(project, questions=questions)
    with fs.FaultServer(default=fs.ok(reply)) as server:
        endpoint = endpoint_for(project, server.base_url, max_attempts=1)
        run = run_create(release=release, actor=personas["manager"], method=method, endpoint=endpoint, use_cache=False)
        run_start(run=run, actor=personas["manager"])
        for chunk_id in run.chunks.values_list("pk", flat=True):
            chunk_process(chunk_id=chunk_id)
        requests = server.chat_request_count
    run.refresh_from_db()
    return run, requests


@pytest.mark.django_db
def test_a_pot_run_without_isolation_fails_its_items_without_asking_the_model(
    project, personas, sent, broken_bwrap, tmp_path
):
    marker = tmp_path / "ran.txt"
    run, requests = scored_run(project, personas, method="pot", reply=POT_REPLY.format(marker=str(marker)), questions=2)
    assert requests == 0 and run.isolation == "refused"
    predictions = list(Prediction.objects.filter(run=run))
    assert len(predictions) == 2 and {p.status for p in predictions} == {"failed"}
    assert all("not run" in p.error and "Permission denied" in p.error for p in predictions)
    assert not marker.exists()


@pytest.mark.django_db
def test_the_run_page_says_programs_are_not_run(project, personas, sent, broken_bwrap, client):
    run, _ = scored_run(project, personas, method="car", reply="ans = 1", questions=1)
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/scoring/runs/{run.pk}/").content.decode()
    assert "programs were not run" in page and "bubblewrap cannot start" in page


@pytest.mark.django_db
def test_a_direct_run_is_not_held_up_by_missing_isolation(project, personas, sent, broken_bwrap):
    run, requests = scored_run(project, personas, method="direct", reply="Answer: 2019", questions=1)
    assert requests == 1 and run.isolation == "" and Prediction.objects.get(run=run).status == "scored"


@pytest.mark.django_db
def test_healthz_shows_whether_programs_can_run_isolated(client, broken_bwrap, monkeypatch):
    assert client.get("/healthz").json()["sandbox"] == {"ok": False, "isolation": "unavailable", "programs": "not run"}
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    from django.test import override_settings

    with override_settings(TATCURATE_UNSAFE_RUN_PROGRAMS_UNISOLATED=True):
        assert client.get("/healthz").json()["sandbox"]["programs"] == "run UNISOLATED"


@pytest.mark.skipif(sandbox.isolation_status().isolation != "bwrap", reason="bubblewrap cannot start on this machine")
@pytest.mark.django_db
def test_healthz_shows_bubblewrap_where_it_starts(client):
    expected = {"ok": True, "isolation": "bubblewrap", "programs": "run isolated"}
    assert client.get("/healthz").json()["sandbox"] == expected


def test_the_unsafe_setting_is_off_by_default():
    from django.conf import settings

    assert settings.TATCURATE_UNSAFE_RUN_PROGRAMS_UNISOLATED is False
    assert "TATCURATE_UNSAFE_RUN_PROGRAMS_UNISOLATED" in Path(settings.BASE_DIR, "docs", "configuration.md").read_text()
