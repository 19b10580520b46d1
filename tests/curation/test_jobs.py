"""The one job mechanism (curation/jobs.py): transaction-aware enqueue, and the reaper on export builds."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from curation.jobs import JobKind, job_enqueue, job_task
from curation.releases.models import ExportArtifact
from curation.releases.services.exports import export_request
from curation.releases.services.jobs import EXPORT_BUILDS
from tests.support.jobs import left_by
from tests.support.sources import parsed
from tests.support.workers import celery_worker, wait_for


def _left_by_a_dead_worker(release, *, minutes: int = 10) -> ExportArtifact:
    """An export build whose writer vanished: running, claimed, its heartbeat minutes old."""
    artifact = ExportArtifact.objects.create(release=release, format="jsonl", items_total=release.item_count)
    left_by(artifact, worker="gone@old-host", minutes=minutes)
    return artifact


# --- Transaction-aware enqueue ---------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_job_sent_inside_a_transaction_leaves_after_the_commit(sent_routed):
    with transaction.atomic():
        job_enqueue(task_name="curation.export_build", args=[7], queue="exports-test")
        with transaction.atomic():  # a savepoint: still waits for the outermost commit
            job_enqueue(task_name="curation.drafting_chunk", args=[1, 2])
        assert sent_routed == []
    assert sent_routed == [("curation.export_build", [7], "exports-test"), ("curation.drafting_chunk", [1, 2], None)]


@pytest.mark.django_db(transaction=True)
def test_a_job_sent_inside_a_rolled_back_transaction_never_leaves(sent_routed):
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            job_enqueue(task_name="curation.export_build", args=[7])
            raise RuntimeError("the write failed")
    assert sent_routed == []
    job_enqueue(task_name="curation.export_build", args=[8])  # outside a transaction: at once
    assert sent_routed == [("curation.export_build", [8], None)]


def test_every_job_task_is_found_by_name_and_is_transaction_aware():
    for name in ("curation.drafting_chunk", "scoring.run_chunk", "curation.export_build"):
        assert job_task(name).apply_async.__func__.__qualname__ == "TransactionAwareTask.apply_async"


# --- Export builds ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_stalled_export_build_is_sent_again_once(release, sent_routed, django_capture_on_commit_callbacks, settings):
    settings.TATCURATE_EXPORTS_QUEUE = "exports-test"
    artifact = _left_by_a_dead_worker(release)
    assert EXPORT_BUILDS.reap(stall_s=3600) == 0
    with django_capture_on_commit_callbacks(execute=True):
        assert EXPORT_BUILDS.reap(stall_s=60) == 1
    assert sent_routed == [("curation.export_build", [artifact.pk], None)]
    artifact.refresh_from_db()
    assert artifact.state == ExportArtifact.State.PENDING and artifact.claim_token == ""
    with django_capture_on_commit_callbacks(execute=True):
        assert EXPORT_BUILDS.reap(stall_s=60) == 0  # idempotent
    assert len(sent_routed) == 1


@pytest.mark.django_db
def test_a_duplicate_message_leaves_a_live_build_alone(release, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    artifact = _left_by_a_dead_worker(release, minutes=0)  # its writer is alive: a fresh heartbeat
    assert EXPORT_BUILDS.run(artifact.pk, worker="other@host").state == ExportArtifact.State.RUNNING
    artifact.refresh_from_db()
    assert artifact.claim_token == "dead-token" and artifact.worker == "gone@old-host"
    ExportArtifact.objects.filter(pk=artifact.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    built = EXPORT_BUILDS.run(artifact.pk, worker="other@host")  # a silent writer is taken over
    assert built.state == ExportArtifact.State.READY and built.worker == "other@host" and built.attempts == 2


@pytest.mark.django_db
def test_an_export_lost_with_its_worker_too_often_fails(release, settings, sent_routed, tmp_path):
    settings.TATCURATE_JOB_MAX_ATTEMPTS = 1
    artifact = _left_by_a_dead_worker(release)
    assert EXPORT_BUILDS.reap(stall_s=60) == 1
    artifact.refresh_from_db()
    assert artifact.state == ExportArtifact.State.FAILED and "gone@old-host" in artifact.error
    assert sent_routed == []
    settings.MEDIA_ROOT = tmp_path
    again = export_request(release=release, actor=None, format="jsonl")  # asked again: built afresh
    assert again.state == ExportArtifact.State.READY and again.attempts == 1


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_an_export_whose_worker_vanished_is_reaped_and_built_by_a_new_worker(release, settings):
    artifact = _left_by_a_dead_worker(release)
    with celery_worker(name="replacement") as worker:
        settings.TATCURATE_EXPORTS_QUEUE = worker["queue"]
        assert EXPORT_BUILDS.reap(stall_s=60) == 1
        wait_for(
            lambda: ExportArtifact.objects.get(pk=artifact.pk).state == ExportArtifact.State.READY,
            timeout=60,
            what="the new worker to build the export",
        )
    artifact.refresh_from_db()
    assert artifact.worker == worker["hostname"] and artifact.items_done == release.item_count
    assert artifact.sha256 and artifact.claim_token == "" and artifact.attempts == 2


def test_no_service_imports_a_task_module():
    """Services send jobs by name (job_enqueue); importing a task module from a service makes an import circle."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offenders = []
    for app in ("curation", "annotate", "scoring"):
        for path in (root / app).rglob("*.py"):
            if "services" not in path.parts and path.stem != "services":
                continue
            for node in ast.walk(parsed(path)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
                names += [f"{node.module}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) else []
                if any(name.split(".")[-1] == "tasks" for name in names):
                    offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == []


def stall_filters(root, paths) -> list[str]:
    """Where a module filters on a heartbeat's age itself (`heartbeat_at__lt=` / `heartbeat_at__isnull=`)."""
    import ast

    found = []
    for path in paths:
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.keyword) and node.arg in ("heartbeat_at__lt", "heartbeat_at__isnull"):
                found.append(f"{path.relative_to(root)}:{node.value.lineno}")
    return found


def test_the_stall_rule_is_one_filter_in_curation_jobs(tmp_path):
    """Every reaper and every takeover of a silent row filters with `job_silent`; none writes the rule again."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    paths = [path for app in ("curation", "annotate", "scoring") for path in (root / app).rglob("*.py")]
    offenders = stall_filters(root, [path for path in paths if path != root / "curation" / "jobs.py"])
    assert offenders == []
    assert stall_filters(root, [root / "curation" / "jobs.py"])  # the rule itself, so the check can see one
    copy = tmp_path / "reaper.py"
    copy.write_text("rows = Row.objects.filter(state='running', heartbeat_at__lt=cutoff)\n")
    assert stall_filters(tmp_path, [copy]) == ["reaper.py:1"]


@pytest.mark.django_db
def test_a_silent_row_is_one_that_missed_its_beats_in_a_running_state(project, personas):
    from curation.jobs import job_silent, job_stall_seconds
    from curation.papers.models import IngestJob

    now = timezone.now()
    beats = {
        "fresh": now,
        "stale": now - timedelta(seconds=job_stall_seconds() + 1),
        "never": None,
    }
    ids = {}
    for name, beat in beats.items():
        for state in ("running", "pending"):
            job = IngestJob.objects.create(project=project, requested_by=personas["manager"], files=[])
            IngestJob.objects.filter(pk=job.pk).update(state=state, heartbeat_at=beat)
            ids[job.pk] = (name, state)
    silent = IngestJob.objects.filter(job_silent(running="running", state_field="state"), pk__in=ids)
    assert sorted(ids[pk] for pk in silent.values_list("pk", flat=True)) == [("never", "running"), ("stale", "running")]
    both = job_silent(running=("running", "pending"), state_field="state")
    assert IngestJob.objects.filter(both, pk__in=ids).count() == 4
    patient = job_silent(running="running", state_field="state", stall_s=3600)  # an hour: only "never" is silent
    assert [ids[pk] for pk in IngestJob.objects.filter(patient, pk__in=ids).values_list("pk", flat=True)] == [
        ("never", "running")
    ]


class _BrokenKind(JobKind):
    name = "broken kind"

    def reap(self, *, stall_s: float | None = None) -> int:
        raise RuntimeError("the database went away")


BROKEN_KIND = _BrokenKind()


@pytest.mark.django_db
def test_one_failing_reaper_does_not_stop_the_others(monkeypatch, caplog):
    from curation import jobs

    monkeypatch.setattr(jobs, "_KIND_PATHS", {*jobs._KIND_PATHS, "tests.curation.test_jobs.BROKEN_KIND"})
    counts = jobs.jobs_reap()
    assert counts == {
        "broken kind": -1,
        "calibrations": 0,
        "dataset imports": 0,
        "drafting items": 0,
        "export builds": 0,
        "ingestion jobs": 0,
        "release cuts": 0,
        "scoring chunks": 0,
        "webhook deliveries": 0,
    }
    assert "broken kind: reaper failed" in caplog.text


def test_the_job_kinds_come_from_the_code_and_the_mechanism_names_each_one():
    """The kinds are read from the registry (every app's AppConfig.ready), not from prose: each has a model with a
    claim, a Celery task registered under its name (drafting items and scoring chunks send per-chunk tasks of their
    own), and curation/jobs.py's docstring names it."""
    from celery import current_app

    from curation import jobs

    kinds = jobs.job_kinds()
    names = [kind.name for kind in kinds]
    assert len(names) == len(set(names)) == 8
    current_app.loader.import_default_modules()
    for kind in kinds:
        assert kind.name in " ".join(jobs.__doc__.split()), f"curation/jobs.py does not name {kind.name}"
        assert {"claim_token", "worker", "heartbeat_at"} <= {field.name for field in kind.model._meta.fields}
        if kind.task_name:
            assert kind.task_name in current_app.tasks
    number = "zero one two three four five six seven eight nine ten".split()[len(kinds)]
    assert f"its {number} job kinds" in " ".join(jobs.__doc__.split())
