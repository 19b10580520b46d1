"""Records of imported benchmark files: the file itself (ImportRecord) and each source row as it was (SourceRecord)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.jobs import RequestedJob
from curation.visibility import ProjectScopedQuerySet


class ImportRecord(models.Model):
    """One imported benchmark file: where it came from, what it held, and what it became."""

    class Format(models.TextChoices):
        TATQA = "tatqa", "TAT-QA"
        TATDQA = "tatdqa", "TAT-DQA"
        FINQA = "finqa", "FinQA"
        SCITAT = "scitat", "SciTaT"

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="imports")
    format = models.CharField(max_length=10, choices=Format.choices)
    source_name = models.CharField(max_length=500)
    source_sha256 = models.CharField(max_length=64)
    source_bytes = models.PositiveBigIntegerField(default=0)
    batch = models.ForeignKey("curation.Batch", null=True, blank=True, on_delete=models.SET_NULL)
    counts = models.JSONField(default=dict, blank=True, help_text="questions, contexts, papers, skipped …")
    notes = models.JSONField(default=list, blank=True, help_text="What the format could not carry, for the card")
    attribution = models.TextField(blank=True, help_text="License and citation of the source, for dataset cards")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "format", "source_sha256"], name="unique_import_source")
        ]

    def __str__(self) -> str:
        return f"{self.get_format_display()} import of {self.source_name}"


class SourceRecord(models.Model):
    """What an imported context or question looked like in its source format (uids, orders, native answers)."""

    class Kind(models.TextChoices):
        CONTEXT = "context", "Context"
        QUESTION = "question", "Question"

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="source_records")
    import_record = models.ForeignKey(ImportRecord, on_delete=models.CASCADE, related_name="records")
    format = models.CharField(max_length=10, choices=ImportRecord.Format.choices)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    key = models.CharField(max_length=200, help_text="The uid or id in the source file")
    paper = models.ForeignKey("curation.Paper", null=True, blank=True, on_delete=models.CASCADE)
    context = models.ForeignKey("curation.Context", null=True, blank=True, on_delete=models.CASCADE)
    instance = models.OneToOneField(
        "curation.Instance", null=True, blank=True, on_delete=models.CASCADE, related_name="source_record"
    )
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["import_record", "id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "format", "kind", "key"], name="unique_source_record")
        ]

    def __str__(self) -> str:
        return f"{self.format} {self.kind} {self.key}"


class ImportJob(RequestedJob):
    """A big import waiting for or running on a worker (TATCURATE_DATASET_IMPORT_ASYNC_MIN_QUESTIONS questions and
    more): the file checked and stored by the web request, imported by the exports worker in one transaction. Small
    files import in the request and leave no such row. A job row: the worker holding its claim token renews the
    heartbeat while it writes; the beat reaper takes a silent one over."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Being imported"
        DONE = "done", "Imported"
        FAILED = "failed", "Failed"

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="import_jobs")
    format = models.CharField(max_length=10, choices=ImportRecord.Format.choices)
    source_name = models.CharField(max_length=500)
    source_sha256 = models.CharField(max_length=64)
    source_bytes = models.PositiveBigIntegerField(default=0)
    stored = models.CharField(max_length=64, help_text="The file's name under MEDIA_ROOT/imports/ until it is imported")
    as_release = models.CharField(max_length=100, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    questions_done = models.PositiveIntegerField(default=0)
    questions_total = models.PositiveIntegerField(default=0)
    record = models.ForeignKey(ImportRecord, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs")
    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["project", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"import of {self.source_name} ({self.state})"

    @property
    def percent(self) -> int:
        if self.state == self.State.DONE:
            return 100
        return min(99, round(100 * self.questions_done / self.questions_total)) if self.questions_total else 0
