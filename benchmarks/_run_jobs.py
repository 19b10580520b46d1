"""The run harness the benchmarks share: real Celery worker processes, and a scoring or an LLM drafting run to give
them (each knows how to start itself, how far it is and what it left). Used by outage.py and run_throughput.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


class Workers:
    """The Celery worker processes of the benchmark, each in its own process group (so kill -9 takes it whole)."""

    def __init__(self, data_dir: Path, queue: str) -> None:
        self.data_dir, self.queue, self.processes = data_dir, queue, {}

    def start(self, name: str, queues: str, *extra: str, loglevel: str = "INFO") -> str:
        """Start a solo-pool worker `name` on `queues` (scripts/start's log level by default); its hostname."""
        hostname = f"{name}@localhost"
        log = open(self.data_dir / f"worker-{name}.log", "w")  # closed with the process in stop_all
        command = [
            sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo", "-Q", queues,
            "-n", hostname, "--without-gossip", "--without-mingle", "--loglevel", loglevel, *extra,
        ]  # fmt: skip
        env = {**os.environ, "CELERY_TASK_ALWAYS_EAGER": "false"}
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes[hostname] = (process, log)
        return hostname

    def kill(self, hostname: str) -> None:
        process, _ = self.processes[hostname]
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def freeze(self, hostname: str) -> None:
        """Stop `hostname` where it stands (SIGSTOP), so what it holds can be read without it moving on."""
        os.killpg(self.processes[hostname][0].pid, signal.SIGSTOP)

    def thaw(self, hostname: str) -> None:
        os.killpg(self.processes[hostname][0].pid, signal.SIGCONT)

    def stop_all(self) -> None:
        for process, log in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            log.close()

    def wait_ready(self, hostnames: list[str], timeout_s: float = 120.0) -> None:
        """Until each worker has written its heartbeat row (it consumes its queues by then)."""
        from curation.models import WorkerHeartbeat

        deadline = time.monotonic() + timeout_s
        while WorkerHeartbeat.objects.filter(hostname__in=hostnames).count() < len(hostnames):
            if time.monotonic() > deadline:
                raise SystemExit(f"workers did not start; see {self.data_dir}")
            time.sleep(0.2)


class ScoringJob:
    """A scoring run of a release of `items` real TAT-QA dev questions (one model request an item)."""

    kind = "scoring"
    requests_per_item = 1

    def __init__(self, *, items: int, endpoint_for, chunk_size: int = 25) -> None:
        from curation.datasets.services import dataset_import
        from curation.services.projects import project_create
        from tests.scoring.metrics.shared_data import shared_data_dir

        documents = json.loads((shared_data_dir() / "tatqa" / "tatqa_dataset_dev.json").read_text())
        chosen, count = [], 0
        for document in documents:
            if count >= items:
                break
            document["questions"] = document["questions"][: items - count]
            chosen.append(document)
            count += len(document["questions"])
        project = project_create(name="Outage bench", slug=f"outage-{uuid.uuid4().hex[:6]}", creator=None)
        self.release = dataset_import(
            project=project, actor=None, format="tatqa", source_name="outage.json",
            content=json.dumps(chosen).encode(), as_release="outage",
        ).release  # fmt: skip
        self.endpoint = endpoint_for(project)
        self.items = self.release.item_count
        self.chunk_size = chunk_size

    def create(self, *, label: str) -> None:
        """The queued run with its chunks, not started yet."""
        from scoring.runs.creation import run_create

        self.run = run_create(
            release=self.release, actor=None, method="direct", endpoint=self.endpoint, use_cache=False, label=label,
            chunk_size=self.chunk_size,
        )  # fmt: skip

    def start(self, *, label: str, queue: str) -> None:
        """Create the run unless `create` did, and start it on `queue`."""
        from scoring.runs.lifecycle import run_start

        if getattr(self, "run", None) is None:
            self.create(label=label)
        run_start(run=self.run, actor=None, queue=queue)

    def done(self) -> int:
        from scoring.models import Prediction

        return Prediction.objects.filter(run=self.run).count()

    def status(self) -> str:
        from scoring.models import ScoringRun

        return ScoringRun.objects.get(pk=self.run.pk).status

    def held_by(self, worker: str):
        """A claim `worker` holds now: (chunk, deliveries)."""
        from scoring.models import RunChunk

        return (
            RunChunk.objects.filter(run=self.run, status="running", worker=worker)
            .values_list("pk", "deliveries")
            .first()
        )

    def still_held(self, held) -> bool:
        from scoring.models import RunChunk

        return RunChunk.objects.filter(pk=held[0], deliveries=held[1], status="running").exists()

    def outcome(self) -> dict[str, Any]:
        from django.db.models import Count

        from scoring.models import Prediction, RunChunk

        predictions = Prediction.objects.filter(run=self.run)
        per_item = predictions.values("item_id").annotate(n=Count("id"))
        return {
            "predictions": predictions.count(),
            "scored": predictions.filter(status="scored").count(),
            "failed": predictions.filter(status="failed").count(),
            "duplicate_predictions": sum(row["n"] - 1 for row in per_item),
            "max_deliveries": max(RunChunk.objects.filter(run=self.run).values_list("deliveries", flat=True)),
        }


class DraftingJob:
    """An LLM drafting run over `items` short contexts, each of its own paper (two model requests an item)."""

    kind = "drafting"
    requests_per_item = 2

    def __init__(self, *, items: int, endpoint_for) -> None:
        self.count, self.endpoint_for, self.items = items, endpoint_for, items

    def create(self, *, label: str) -> None:
        """The contexts (in a project of their own) and the queued run over them, not started yet."""
        from curation.drafting.services.runs import run_create
        from curation.models import Batch
        from curation.services.projects import project_create
        from tests.curation.drafting.conftest import make_contexts

        # A project of its own per run: a context drafted once is skipped by a later run of the same project.
        self.project = project_create(name=f"Outage {label}", slug=f"outage-{uuid.uuid4().hex[:6]}", creator=None)
        batch = Batch.objects.create(project=self.project, name=label)
        make_contexts(self.project, batch, self.count)
        self.run = run_create(
            project=self.project, actor=None, kind="llm", batch=batch, endpoint=self.endpoint_for(self.project)
        )

    def start(self, *, label: str, queue: str) -> None:
        """Create the run unless `create` did, and start it on `queue`."""
        from curation.drafting.services.runs import run_start

        if getattr(self, "run", None) is None:
            self.create(label=label)
        run_start(run_id=self.run.pk, actor=None, queue=queue)

    def done(self) -> int:
        return self.run.items.filter(status__in=("drafted", "failed")).count()

    def status(self) -> str:
        from curation.drafting.models import DraftingRun

        return DraftingRun.objects.get(pk=self.run.pk).status

    def held_by(self, worker: str):
        """A claim `worker` holds now: (item, claim token)."""
        return self.run.items.filter(status="running", worker=worker).values_list("pk", "claim_token").first()

    def still_held(self, held) -> bool:
        return self.run.items.filter(pk=held[0], claim_token=held[1], status="running").exists()

    def outcome(self) -> dict[str, Any]:
        from django.db.models import Count

        from curation.models import Instance

        instances = Instance.objects.filter(project=self.project)
        per_context = instances.values("context_id").annotate(n=Count("id"))
        return {
            "drafted": self.run.items.filter(status="drafted").count(),
            "failed": self.run.items.filter(status="failed").count(),
            "drafts": instances.count(),
            "duplicate_drafts": sum(row["n"] - 1 for row in per_context),
            "max_deliveries": max(self.run.items.values_list("attempts", flat=True)),
        }
