"""Ingestion jobs: uploaded sources stored on disk, waiting for (or read by) a worker's bounded child process."""

from __future__ import annotations

from django.db import models

from curation.jobs import RequestedJob
from curation.visibility import ProjectScopedQuerySet


class IngestJob(RequestedJob):
    """One upload of one or several sources: checked and stored by the web request, read by a worker in a bounded
    child process (curation/papers/bounded.py), stored as papers in one transaction. A job row: the worker holding
    its claim token renews the heartbeat while the child runs; the beat reaper takes a silent one over."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Being read"
        DONE = "done", "Papers stored"
        FAILED = "failed", "Failed"
        DISCARDED = "discarded", "Discarded"

    class Stage(models.TextChoices):
        STORED = "stored", "Stored, waiting to be read"
        UNPACKING = "unpacking", "Unpacking"
        EXTRACTING = "extracting", "Extracting tables and text"
        SAVING = "saving", "Saving papers"
        DONE = "done", "Done"

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="ingest_jobs")
    batch = models.ForeignKey("curation.Batch", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    stage = models.CharField(max_length=10, choices=Stage.choices, default=Stage.STORED)
    folder = models.CharField(max_length=64, help_text="Where the uploads wait, under MEDIA_ROOT/ingest/")
    files = models.JSONField(default=list, help_text="[{name, stored, size}] in upload order")
    files_done = models.PositiveIntegerField(default=0)
    current_file = models.CharField(max_length=255, blank=True)
    tables_found = models.PositiveIntegerField(default=0)
    paragraphs_found = models.PositiveIntegerField(default=0)
    results = models.JSONField(default=list, help_text="One IngestResult per stored source once done")
    rejected = models.JSONField(default=list, help_text="[{source_name, reason}] when sources were refused")
    limit = models.CharField(max_length=20, blank=True, help_text="The limit that was hit: cpu, memory, wall, …")
    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["project", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"ingestion {self.pk} ({self.state})"

    @property
    def files_total(self) -> int:
        return len(self.files)

    @property
    def reason(self) -> str:
        """Why it failed, without the "Nothing was stored." the page says in its heading."""
        return self.error.removeprefix("Nothing was stored. ")

    @property
    def percent(self) -> int:
        """How far the job is: files read, and the saving step as the last share."""
        if self.state == self.State.DONE:
            return 100
        total = self.files_total or 1
        return min(95, round(90 * self.files_done / total) + (5 if self.stage == self.Stage.SAVING else 0))
