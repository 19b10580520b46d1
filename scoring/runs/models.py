"""Scoring runs over a release: chunks of work, one prediction per (run, item), error tags and error samples."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.jobs import JobRow
from curation.visibility import PredictionQuerySet, ProjectScopedQuerySet


class ScoringRun(models.Model):
    """A model (or an uploaded predictions file) scored over a release with one method and context setting."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        PAUSED = "paused", "Paused"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    class Method(models.TextChoices):
        DIRECT = "direct", "Direct QA"
        COT = "cot", "CoT"
        POT = "pot", "PoT"
        CAR = "car", "CaR"
        CALCULATOR = "calculator", "CaR: Calculator only"
        REVERSING = "reversing", "CaR: Reversing"
        TATLLM = "tatllm", "TAT-LLM step-wise"
        TOOL = "tool", "Tool loop"
        UPLOAD = "upload", "Uploaded predictions"

    class Setting(models.TextChoices):
        SHORT = "short", "Short context"
        LONG = "long", "Long context"

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="scoring_runs")
    release = models.ForeignKey("curation.Release", on_delete=models.PROTECT, related_name="scoring_runs")
    endpoint = models.ForeignKey(
        "curation.ModelEndpoint", null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    label = models.CharField(max_length=200, blank=True, help_text="Model name shown in comparisons")
    method = models.CharField(max_length=10, choices=Method.choices)
    setting = models.CharField(max_length=10, choices=Setting.choices, default=Setting.SHORT)
    templates = models.JSONField(default=dict, blank=True, help_text="stage → template text used")
    template_hash = models.CharField(max_length=64, blank=True)
    generation_params = models.JSONField(default=dict, blank=True)
    options = models.JSONField(default=dict, blank=True, help_text="few-shot count, tool set, turn limit, …")
    config = models.JSONField(default=dict, blank=True)
    config_hash = models.CharField(max_length=64)
    uploaded_predictions = models.JSONField(null=True, blank=True, help_text="uid → prediction of an uploaded file")
    upload_name = models.CharField(max_length=300, blank=True)
    upload_format = models.CharField(max_length=20, blank=True)
    item_limit = models.PositiveIntegerField(null=True, blank=True)
    items_total = models.PositiveIntegerField(default=0)
    chunk_size = models.PositiveIntegerField(default=8)
    queue = models.CharField(max_length=100, blank=True, help_text="Celery queue of this run's tasks")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    isolation = models.CharField(max_length=10, blank=True, help_text="Sandbox of model-written code: bwrap|degraded")
    results = models.JSONField(default=dict, blank=True)
    results_computed_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "release"], name="scoring_run_release")]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.label or self.method} on {self.release_id}"

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)


class RunChunk(JobRow):
    """A slice of a run's items (by position) that one task processes; the row, not the message, records the work."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    first_position = models.PositiveIntegerField()
    last_position = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    # JobRow's fields (curation/jobs.py) at the lengths this table was created with (a uuid4 hex is 32).
    claim_token = models.CharField(max_length=32, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    deliveries = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="unique_run_chunk")]

    def __str__(self) -> str:
        return f"chunk {self.index} of run {self.run_id}"


class Prediction(models.Model):
    """What one run produced for one release item: prompt, output, answer, program, tool trace, metrics, cost."""

    class Status(models.TextChoices):
        SCORED = "scored", "Scored"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="predictions")
    item = models.ForeignKey("curation.ReleaseItem", on_delete=models.PROTECT, related_name="predictions")
    position = models.PositiveIntegerField()
    uid = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices)
    context = models.CharField(
        max_length=5,
        blank=True,
        help_text="The context the model was given: short or long (a short-setting run falls back to the long "
        "context where the release has no short one); blank for uploaded predictions",
    )
    prompt = models.JSONField(default=list, blank=True, help_text="Messages of the (last) request")
    raw_output = models.TextField(blank=True)
    stages = models.JSONField(default=dict, blank=True, help_text="CaR stages, TAT-LLM steps, extraction rule …")
    answer = models.JSONField(default=list, blank=True)
    scale = models.CharField(max_length=20, blank=True)
    program = models.TextField(blank=True)
    program_result = models.JSONField(null=True, blank=True)
    tool_trace = models.JSONField(default=list, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    is_correct = models.BooleanField(default=False)
    tokens_in = models.PositiveIntegerField(null=True, blank=True)
    tokens_out = models.PositiveIntegerField(null=True, blank=True)
    latency_s = models.FloatField(default=0.0)
    metrics_s = models.FloatField(default=0.0)
    attempts = models.PositiveIntegerField(default=0)
    attempt_log = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    worker = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    objects = PredictionQuerySet.as_manager()

    class Meta:
        ordering = ["run", "position"]
        constraints = [models.UniqueConstraint(fields=["run", "item"], name="unique_run_prediction")]
        indexes = [
            models.Index(fields=["run", "status"], name="scoring_prediction_status"),
            # A run's predictions in the release's order: a page of a big run reads its rows, not the whole run.
            models.Index(fields=["run", "position"], name="scoring_prediction_position"),
        ]

    def __str__(self) -> str:
        return f"prediction {self.uid} of run {self.run_id}"


class ErrorTag(models.Model):
    """A person's judgement of why a prediction is wrong (SciTaT's error types, or a custom one); one per person."""

    class Kind(models.TextChoices):
        MISS = "miss", "Miss"
        GROUNDING = "grounding", "Grounding"
        CALCULATION = "calculation", "Calculation"
        KNOWLEDGE = "knowledge", "Knowledge"
        REDUNDANCY = "redundancy", "Redundancy"
        CUSTOM = "custom", "Custom"

    prediction = models.ForeignKey(Prediction, on_delete=models.CASCADE, related_name="error_tags")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    custom_label = models.CharField(max_length=60, blank=True)
    note = models.TextField(blank=True)
    tagged_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="error_tags")
    tagged_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["prediction", "tagged_at"]
        constraints = [models.UniqueConstraint(fields=["prediction", "tagged_by"], name="unique_error_tag_per_person")]

    def __str__(self) -> str:
        return self.custom_label or self.kind

    @property
    def label(self) -> str:
        return self.label_of(self.kind, self.custom_label)

    @classmethod
    def label_of(cls, kind: str, custom_label: str) -> str:
        """A tag's label as people read it: its custom label when it is a custom tag, else its kind's name."""
        if kind == cls.Kind.CUSTOM and custom_label:
            return custom_label
        return str(dict(cls.Kind.choices).get(kind, kind))


class PredictionLabel(models.Model):
    """A member's reading of a free-form prediction: correct or not (one per person). The judge's verdicts are
    measured against these (`scoring.metrics.judge.agreement`)."""

    prediction = models.ForeignKey(Prediction, on_delete=models.CASCADE, related_name="labels")
    is_correct = models.BooleanField()
    labelled_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    labelled_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["prediction", "labelled_at"]
        constraints = [models.UniqueConstraint(fields=["prediction", "labelled_by"], name="unique_label_per_person")]

    def __str__(self) -> str:
        return f"{'correct' if self.is_correct else 'not correct'} ({self.prediction_id})"


class ErrorSample(models.Model):
    """A seeded random draw of a run's errors for tagging (SciTaT §4.4): up to `per_form` free-form and short-form
    errors as prediction ids, with the size of each error pool; the newest draw is the run's sample."""

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="error_samples")
    seed = models.BigIntegerField()
    per_form = models.PositiveIntegerField(default=25)
    free_form = models.JSONField(default=list, blank=True, help_text="ids of the sampled free-form predictions")
    short_form = models.JSONField(default=list, blank=True, help_text="ids of the sampled short-form predictions")
    free_form_errors = models.PositiveIntegerField(default=0)
    short_form_errors = models.PositiveIntegerField(default=0)
    drawn_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    drawn_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "-drawn_at", "-id"]

    def __str__(self) -> str:
        return f"error sample (seed {self.seed}) of run {self.run_id}"
