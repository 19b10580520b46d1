"""Drafting models: versioned prompt templates, drafting runs and one item per (run, context)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from curation.jobs import JobRow


class PromptTemplate(models.Model):
    """One version of a project's prompt; an edit adds a row, so runs keep pointing at what they used."""

    class Kind(models.TextChoices):
        QUESTION = "question", "Question generation"
        RATIONALE_ANSWER = "rationale_answer", "Rationale and answer"
        HEADER_PARAPHRASE = "header_paraphrase", "Header paraphrases"

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="prompt_templates")
    kind = models.CharField(max_length=30, choices=Kind.choices)
    name = models.CharField(max_length=200)
    text = models.TextField()
    content_hash = models.CharField(max_length=64, db_index=True)
    note = models.CharField(max_length=500, blank=True, help_text="What changed in this version")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "kind", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.content_hash[:10]}"


# A run's options: what `run_create` takes, each with its default; the run records them all.
DEFAULT_OPTIONS: dict[str, Any] = {
    "redraft": False,  # draft contexts that already have a draft of this kind
    # 0: twice the endpoint's concurrency limit (at least 4) for LLM runs, 25 for template runs; the run records the
    # size it took.
    "chunk_size": 0,
    "seed": 0,
    "per_template": 1,
    "unanswerable": "skip",  # or "keep": kept as drafts marked for the unanswerable split
    "template_ids": [],  # empty: those of each context's reasoning type (every template for one without a type)
    "paraphrase_headers": False,  # template runs: header names in questions paraphrased by the run's endpoint
    "max_context_chars": 8000,
    "queue": "",  # Celery queue; empty for settings.TATCURATE_DRAFTING_QUEUE (curation/queues.py)
}


class DraftingRun(models.Model):
    """A manager's request to draft a batch (or chosen contexts) with an LLM endpoint or the template drafter."""

    class Kind(models.TextChoices):
        LLM = "llm", "LLM (question, then rationale and answer)"
        TEMPLATE = "template", "Templates (answers computed by tool programs)"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    ACTIVE = (Status.QUEUED, Status.RUNNING)  # a run in these states may still change its items

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="drafting_runs")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    batch = models.ForeignKey(
        "curation.Batch", null=True, blank=True, on_delete=models.SET_NULL, related_name="drafting_runs"
    )
    endpoint = models.ForeignKey(
        "curation.ModelEndpoint", null=True, blank=True, on_delete=models.SET_NULL, related_name="drafting_runs"
    )
    # The endpoint as it was when the run started (it may be edited or deleted later).
    endpoint_snapshot = models.JSONField(default=dict, blank=True)
    question_template = models.ForeignKey(
        PromptTemplate, null=True, blank=True, on_delete=models.PROTECT, related_name="question_runs"
    )
    answer_template = models.ForeignKey(
        PromptTemplate, null=True, blank=True, on_delete=models.PROTECT, related_name="answer_runs"
    )
    template_hashes = models.JSONField(default=dict, blank=True)
    generation_params = models.JSONField(default=dict, blank=True)
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"drafting run {self.pk} ({self.kind}, {self.status})"

    @property
    def is_active(self) -> bool:
        """Whether items may still change."""
        return self.status in self.ACTIVE


class DraftingItem(JobRow):
    """The record of one context's drafting in a run; its status, not the broker message, says what is done."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DRAFTED = "drafted", "Drafted"
        FAILED = "failed", "Failed"
        SKIPPED = "skipped", "Skipped (already drafted)"
        CANCELLED = "cancelled", "Cancelled"

    run = models.ForeignKey(DraftingRun, on_delete=models.CASCADE, related_name="items")
    context = models.ForeignKey("curation.Context", on_delete=models.CASCADE, related_name="drafting_items")
    chunk = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    # The first draft made for this context (template items may make several; all carry the item id).
    instance = models.ForeignKey(
        "curation.Instance", null=True, blank=True, on_delete=models.SET_NULL, related_name="drafting_items"
    )
    instance_count = models.PositiveIntegerField(default=0)
    raw_output = models.JSONField(default=dict, blank=True)
    # claim_token, worker, heartbeat_at: JobRow (curation/jobs.py); the reaper requeues an item whose heartbeat is old.
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "id"]
        constraints = [models.UniqueConstraint(fields=["run", "context"], name="unique_drafting_item_context")]
        indexes = [models.Index(fields=["run", "status"], name="drafting_item_run_status")]

    def __str__(self) -> str:
        return f"item {self.pk} of run {self.run_id} ({self.status})"
