"""Releases (frozen, hashed, versioned copies of validated instances), their export cache and queued cuts."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.datasets.models import ImportRecord
from curation.jobs import ProgressJob
from curation.visibility import ProjectScopedQuerySet


class Release(models.Model):
    """An immutable, versioned snapshot: never edited nor deleted once cut; a new version supersedes it."""

    project = models.ForeignKey("curation.Project", on_delete=models.PROTECT, related_name="releases")
    name = models.SlugField(max_length=100)
    version = models.PositiveIntegerField()
    description = models.TextField(blank=True)
    changelog = models.TextField(blank=True)
    license = models.CharField(max_length=200, blank=True)
    citation = models.TextField(blank=True)
    attribution = models.TextField(blank=True, help_text="Attribution owed to sources the data derives from")
    notes = models.JSONField(default=list, blank=True)
    batches = models.ManyToManyField("curation.Batch", blank=True, related_name="releases")
    import_record = models.ForeignKey(
        ImportRecord, null=True, blank=True, on_delete=models.PROTECT, related_name="releases"
    )
    supersedes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by"
    )
    content_hash = models.CharField(max_length=64, help_text="sha256 of the canonical JSON lines of the items")
    item_count = models.PositiveIntegerField(default=0)
    split_seed = models.BigIntegerField(null=True, blank=True)
    split_ratios = models.JSONField(default=dict, blank=True)
    statistics = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["project", "name", "-version"]
        constraints = [models.UniqueConstraint(fields=["project", "name", "version"], name="unique_release_version")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    @property
    def label(self) -> str:
        return f"{self.name}-v{self.version}"


class ReleaseContext(models.Model):
    """A context (tables and paragraphs as they were) frozen once per release and shared by its items."""

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="contexts")
    key = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, help_text="short or long")
    data = models.JSONField()

    class Meta:
        ordering = ["release", "id"]
        constraints = [models.UniqueConstraint(fields=["release", "key"], name="unique_release_context")]

    def __str__(self) -> str:
        return self.key


class ReleaseItem(models.Model):
    """The frozen copy of one instance in a release; `data` is its canonical JSON without the contexts."""

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="items")
    position = models.PositiveIntegerField()
    instance = models.ForeignKey(
        "curation.Instance", null=True, blank=True, on_delete=models.PROTECT, related_name="release_items"
    )
    uid = models.CharField(max_length=200)
    split = models.CharField(max_length=20, blank=True)
    short_context = models.ForeignKey(
        ReleaseContext, null=True, blank=True, on_delete=models.PROTECT, related_name="short_items"
    )
    long_context = models.ForeignKey(
        ReleaseContext, null=True, blank=True, on_delete=models.PROTECT, related_name="long_items"
    )
    data = models.JSONField()

    class Meta:
        ordering = ["release", "position"]
        constraints = [
            models.UniqueConstraint(fields=["release", "position"], name="unique_release_position"),
            models.UniqueConstraint(fields=["release", "uid"], name="unique_release_uid"),
        ]

    def __str__(self) -> str:
        return f"{self.release} #{self.position}"


class ExportArtifact(ProgressJob):
    """A built (or building) download of one release in one format: the cache and the progress record."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Being written"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="exports")
    format = models.CharField(max_length=20)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    path = models.CharField(max_length=500, blank=True, help_text="Relative to MEDIA_ROOT")
    sha256 = models.CharField(max_length=64, blank=True)
    size_bytes = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["release", "format"]
        constraints = [models.UniqueConstraint(fields=["release", "format"], name="unique_export_format")]

    def __str__(self) -> str:
        return f"{self.release} as {self.format}"

    @property
    def progress(self) -> float:
        return self.items_done / self.items_total if self.items_total else (1.0 if self.state == "ready" else 0.0)


class ReleaseCut(ProgressJob):
    """A big cut waiting for or running on a worker (TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS and more): what was asked,
    how far it is, and the release it became. Small cuts run in the request and leave no such row. A job row: the
    worker holding its claim token renews the heartbeat per frozen chunk; the reaper takes a silent one over."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Being frozen"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="release_cuts")
    name = models.SlugField(max_length=100)
    options = models.JSONField(default=dict, help_text="The release_cut arguments: batch_ids, description, …")
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    release = models.OneToOneField(Release, null=True, blank=True, on_delete=models.SET_NULL, related_name="cut")
    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["project", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"cut of {self.name} ({self.state})"


class NearDuplicateCheck(models.Model):
    """A project's last near-duplicate check (`curation.releases.near_duplicates`): when, at which threshold, what
    it compared; its findings are the project's `NearDuplicate` rows."""

    project = models.OneToOneField("curation.Project", on_delete=models.CASCADE, related_name="near_duplicate_check")
    threshold = models.FloatField(default=0.9, help_text="Question similarity (0-1) from which a pair is a duplicate")
    checked_at = models.DateTimeField(null=True, blank=True)
    checked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    compared = models.JSONField(default=dict, blank=True, help_text="Questions per side: candidates, references")
    seconds = models.FloatField(default=0.0)

    def __str__(self) -> str:
        return f"near-duplicate check of {self.project_id} at {self.threshold}"


class NearDuplicate(models.Model):
    """A validated instance whose question (with its answer and table) nearly repeats another: in the same
    release-to-be, an earlier release of the project, or a public dataset imported on this instance."""

    class Against(models.TextChoices):
        RELEASE = "release", "this release"
        EARLIER = "earlier", "an earlier release"
        IMPORTED = "imported", "an imported dataset"

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="near_duplicates")
    instance = models.ForeignKey("curation.Instance", on_delete=models.CASCADE, related_name="near_duplicates")
    against = models.CharField(max_length=10, choices=Against.choices)
    source = models.CharField(max_length=300, help_text="Which dataset or release the other side is in")
    other = models.ForeignKey("curation.Instance", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    other_project = models.ForeignKey(
        "curation.Project", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    other_question = models.TextField()
    similarity = models.FloatField()
    is_withheld = models.BooleanField(default=False)

    class Meta:
        ordering = ["project", "instance", "-similarity", "id"]
        constraints = [
            models.UniqueConstraint(fields=["instance", "against", "source", "other"], name="unique_near_duplicate")
        ]

    def __str__(self) -> str:
        return f"#{self.instance_id} ~ {self.source} ({self.similarity:.2f})"
