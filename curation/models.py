"""Core domain: projects and roles, papers with tables and paragraphs, contexts, taxonomy, batches, instances."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from curation.states import Role, Status
from curation.visibility import (
    ContextQuerySet,
    InstanceQuerySet,
    PaperQuerySet,
    ProjectQuerySet,
    ProjectScopedQuerySet,
)


class Project(models.Model):
    class Gating(models.TextChoices):
        MANUAL = "manual", "Manual (a manager opens batches)"
        SEQUENTIAL = "sequential", "Sequential (next batch opens when the previous is done)"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    gating = models.CharField(max_length=20, choices=Gating.choices, default=Gating.MANUAL)
    panel = models.ManyToManyField(
        "curation.ModelEndpoint", blank=True, related_name="panels", help_text="The models a calibration asks"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices)
    is_qualified = models.BooleanField(default=False)
    qualified_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "project", "role"], name="unique_membership_role")]
        ordering = ["project", "role", "user"]

    def __str__(self) -> str:
        return f"{self.user} as {self.role} in {self.project}"


class Paper(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="papers")
    title = models.CharField(max_length=500)
    source_name = models.CharField(max_length=500, blank=True)
    source_sha256 = models.CharField(max_length=64, blank=True)
    version = models.PositiveIntegerField(default=1)
    arxiv_id = models.CharField(max_length=40, blank=True)
    main_file = models.CharField(max_length=500, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    source_report = models.JSONField(
        default=dict, blank=True, help_text="Files included and never included, and the main-file candidates"
    )
    origin = models.CharField(max_length=40, default="latex", help_text="latex, tatqa, finqa, scitat, demo …")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    objects = PaperQuerySet.as_manager()

    class Meta:
        ordering = ["project", "title", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "source_sha256"], condition=~Q(source_sha256=""), name="unique_paper_source"
            ),
            models.UniqueConstraint(
                fields=["project", "source_name", "version"],
                condition=Q(origin="latex") & ~Q(source_name=""),
                name="unique_latex_paper_version",
            ),
        ]
        # The papers page: a project's newest papers first, 50 a page, read in order rather than sorted whole.
        indexes = [models.Index(fields=["project", "-created_at", "-id"], name="paper_project_newest")]

    def __str__(self) -> str:
        return self.title


class Table(models.Model):
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="tables")
    order = models.PositiveIntegerField()
    label = models.CharField(max_length=300, blank=True)
    labels = models.JSONField(default=list, blank=True, help_text="Every label in the float, subtables' included")
    number = models.CharField(max_length=20, blank=True, help_text="The number a reader sees, e.g. 3 or A.1")
    caption = models.TextField(blank=True)
    cells = models.JSONField(default=list, help_text="Rows as List[List[str]], as a reader sees them")
    grid = models.JSONField(default=list, blank=True, help_text="Rectangular grid with spans expanded")
    spans = models.JSONField(default=list, blank=True)
    header_rows = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Leading grid rows that form the header; empty: counted from the spans"
    )
    subtables = models.JSONField(
        default=list, blank=True, help_text="[{label, caption, number, first_row, row_count}] slices of cells"
    )
    notes = models.JSONField(default=list, blank=True, help_text="Table notes (threeparttable), as text")
    caption_references = models.JSONField(default=list, blank=True, help_text="Labels \\ref'd in the caption")
    cell_references = models.JSONField(default=list, blank=True, help_text="Labels \\ref'd in cells")
    raw_latex = models.TextField(blank=True)
    env = models.CharField(max_length=40, blank=True)
    kind = models.CharField(max_length=40, default="table")
    file = models.CharField(max_length=500, blank=True)
    section = models.CharField(max_length=500, blank=True)
    in_appendix = models.BooleanField(default=False)

    class Meta:
        ordering = ["paper", "order"]
        constraints = [models.UniqueConstraint(fields=["paper", "order"], name="unique_table_order")]

    def __str__(self) -> str:
        return self.label or f"Table {self.order + 1}"


class Paragraph(models.Model):
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="paragraphs")
    order = models.PositiveIntegerField()
    section = models.CharField(max_length=500, blank=True)
    section_number = models.CharField(max_length=40, blank=True)
    text = models.TextField()
    file = models.CharField(max_length=500, blank=True)
    in_appendix = models.BooleanField(default=False)
    mentions = models.JSONField(default=list, blank=True, help_text="Labels of the tables the text references")
    references = models.JSONField(default=list, blank=True, help_text="Every label the text references")
    mentioned_tables = models.ManyToManyField(Table, blank=True, related_name="mentioning_paragraphs")

    class Meta:
        ordering = ["paper", "order"]
        constraints = [models.UniqueConstraint(fields=["paper", "order"], name="unique_paragraph_order")]

    def __str__(self) -> str:
        return self.text[:60]


class ReasoningType(models.Model):
    """A reasoning type (parent null) or subtype of a project's taxonomy (SciTaT table 4 by default)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="reasoning_types")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="subtypes")
    code = models.SlugField(max_length=60)
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    target_proportion = models.FloatField(default=0.0, help_text="Share of questions, in percent")
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["project", "order"]
        constraints = [models.UniqueConstraint(fields=["project", "code"], name="unique_reasoning_type_code")]

    def __str__(self) -> str:
        return self.name


class Batch(models.Model):
    class State(models.TextChoices):
        PLANNED = "planned", "Planned"
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    class PanelOrder(models.TextChoices):
        OFF = "", "As drafted (off)"
        UNANSWERED_FIRST = "unanswered_first", "What no model answers first"
        HOLD_ANSWERED = "hold_answered", "Hold back what all answer"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="batches")
    name = models.CharField(max_length=200)
    order = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=20, choices=State.choices, default=State.PLANNED)
    opened_at = models.DateTimeField(null=True, blank=True)
    # When its last instance settled (validated, released or discarded): set once, so batch.settled is sent once.
    settled_at = models.DateTimeField(null=True, blank=True)
    # The manager's deadline for the batch (SciTaT C.1: clarified before each batch); shown as a countdown.
    deadline_at = models.DateTimeField(null=True, blank=True)
    # How the panel's k of n orders the queue (curation.panel): off, hardest first, or hold back what all answer.
    panel_order = models.CharField(max_length=20, choices=PanelOrder.choices, default=PanelOrder.OFF, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["project", "order", "id"]
        verbose_name_plural = "batches"
        # A batch's number (order + 1) picks it out in its project: a typed number must never select two batches.
        constraints = [models.UniqueConstraint(fields=["project", "order"], name="unique_batch_order")]

    def __str__(self) -> str:
        return self.name

    @property
    def number(self) -> int:
        """The batch's number in its project (1, 2, … as batch_create appends them to its order), which its pages
        show and a release cut takes: its id counts the batches of every project, so a team's first could read #3."""
        return self.order + 1

    @staticmethod
    def numbered(low: int, high: int) -> Q:
        """The batches numbered `low` to `high` (`number`), as a filter."""
        return Q(order__range=(low - 1, high - 1))


class Context(models.Model):
    class Kind(models.TextChoices):
        SHORT = "short", "Short (a paragraph and its tables)"
        LONG = "long", "Long (the whole paper)"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="contexts")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="contexts")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    paragraph = models.ForeignKey(Paragraph, null=True, blank=True, on_delete=models.CASCADE)
    tables = models.ManyToManyField(Table, blank=True, related_name="contexts")
    reasoning_type = models.ForeignKey(ReasoningType, null=True, blank=True, on_delete=models.SET_NULL)
    batch = models.ForeignKey(Batch, null=True, blank=True, on_delete=models.SET_NULL, related_name="contexts")
    created_at = models.DateTimeField(auto_now_add=True)
    objects = ContextQuerySet.as_manager()

    class Meta:
        ordering = ["project", "paper", "kind", "id"]

    def __str__(self) -> str:
        return f"{self.kind} context of {self.paper}"


class Instance(models.Model):
    class AnswerForm(models.TextChoices):
        SHORT = "short", "Short-form"
        FREE = "free", "Free-form"

    class AnswerSource(models.TextChoices):
        TEXT = "text", "Text"
        TABLE = "table", "Table"
        TABLE_TEXT = "table-text", "Table-Text"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="instances")
    batch = models.ForeignKey(Batch, null=True, blank=True, on_delete=models.SET_NULL, related_name="instances")
    context = models.ForeignKey(Context, null=True, blank=True, on_delete=models.PROTECT, related_name="instances")
    reasoning_type = models.ForeignKey(ReasoningType, null=True, blank=True, on_delete=models.SET_NULL)
    question = models.TextField(blank=True)
    rationale = models.TextField(blank=True)
    answer = models.JSONField(default=list, blank=True, help_text="A list of answer strings")
    answer_form = models.CharField(max_length=10, choices=AnswerForm.choices, blank=True)
    answer_source = models.CharField(max_length=12, choices=AnswerSource.choices, blank=True)
    answer_type = models.CharField(max_length=20, blank=True, help_text="span, multi-span, arithmetic, count …")
    # null is "not chosen yet", "" the scale None: two meanings a string alone cannot hold apart.
    scale = models.CharField(max_length=20, blank=True, null=True, default=None)  # noqa: DJ001
    derivation = models.TextField(blank=True)
    program = models.TextField(blank=True, help_text="FinQA-style program, when the source has one")
    is_answerable = models.BooleanField(
        default=True, help_text="False: the context does not hold the answer (the release's unanswerable split)"
    )
    unanswerable_reason = models.TextField(blank=True, help_text="Why the context cannot answer the question")
    relevant_tables = models.ManyToManyField(Table, blank=True, related_name="instances")
    excluded_tables = models.ManyToManyField(Table, blank=True, related_name="excluded_from")
    excluded_paragraphs = models.ManyToManyField(Paragraph, blank=True, related_name="excluded_from")
    essential_actions = models.JSONField(default=list, blank=True)
    draft = models.JSONField(default=dict, blank=True, help_text="The draft as produced, with its provenance")
    external_uid = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFTED, db_index=True)
    version = models.PositiveIntegerField(default=1)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="authored_instances"
    )
    round1_verifier = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="round1_instances"
    )
    round2_reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="round2_instances"
    )
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assigned_instances",
        help_text="A draft a manager gave to one annotator: served to them first, to nobody else",
    )
    # The latest calibration's verdict (curation.panel): answered correctly by k of the n panel models that answered.
    panel_correct = models.PositiveSmallIntegerField(null=True, blank=True)
    panel_size = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    objects = InstanceQuerySet.as_manager()

    class Meta:
        ordering = ["project", "id"]
        indexes = [
            models.Index(fields=["project", "status"], name="instance_project_status"),
            # The queue: drafts of a batch in id order (the claim's window).
            models.Index(fields=["batch", "id"], condition=Q(status="drafted"), name="instance_drafts_by_batch"),
            # What an annotator holds (a lease, or work sent back): the claim and "Next" ask it every time.
            models.Index(
                fields=["author", "project"],
                condition=Q(status__in=[Status.IN_REFINEMENT, Status.CHANGES_REQUESTED]),
                name="instance_held_by_author",
            ),
            # The project's latest change: the key of its cached figures (curation.figures_cache).
            models.Index(fields=["project", "updated_at"], name="instance_project_updated"),
            # An annotator's own work in id order with its status, read from the index however long they have worked.
            models.Index(fields=["project", "author", "id"], include=["status"], name="instance_author_work"),
            # Round one's pile in the order it is served: a verifier's Next reads its first rows however many wait.
            models.Index(
                fields=["project", "round1_verifier", "updated_at", "id"],
                include=["author", "version"],
                condition=Q(status="submitted"),
                name="instance_round1_pile",
            ),
            # Everything one person wrote, by id alone (the discussion badge's "their instance", across projects).
            models.Index(fields=["author", "id"], name="instance_by_author"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.question[:60]}"


class InstanceRevision(models.Model):
    """One saved edit of an instance: who, when and the full editable fields after the edit."""

    instance = models.ForeignKey(Instance, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    kind = models.CharField(max_length=20, default="edit", help_text="draft, edit, autosave, submit, system")
    fields = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["instance", "number"]
        constraints = [models.UniqueConstraint(fields=["instance", "number"], name="unique_revision_number")]

    def __str__(self) -> str:
        return f"revision {self.number} of instance {self.instance_id}"


class TransitionEvent(models.Model):
    """Audit row for every status change: who moved the instance, from where to where, when and why."""

    instance = models.ForeignKey(Instance, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    from_status = models.CharField(max_length=20, choices=Status.choices)
    to_status = models.CharField(max_length=20, choices=Status.choices)
    version = models.PositiveIntegerField(help_text="The instance version after the transition")
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["instance", "created_at", "id"]
        # The dashboard's windows (submitted / validated per day, pay for a period) read the days they show.
        indexes = [
            models.Index(fields=["to_status", "created_at"], name="event_status_time"),
            # The claim: an annotator's last claims and the drafts they set aside, without the rest of their history.
            models.Index(
                fields=["actor", "id"],
                condition=Q(from_status=Status.DRAFTED, to_status=Status.IN_REFINEMENT),
                name="event_claims_by_actor",
            ),
            models.Index(
                fields=["actor", "instance", "created_at"],
                condition=Q(from_status=Status.IN_REFINEMENT, to_status=Status.DRAFTED),
                name="event_set_asides_by_actor",
            ),
            # An instance's first event of a kind: a probe per event instead of a hash of the project's history.
            models.Index(fields=["instance", "to_status", "created_at"], name="event_instance_kind_time"),
        ]

    def __str__(self) -> str:
        return f"{self.from_status or 'new'} → {self.to_status} (instance {self.instance_id})"


class WorkerHeartbeat(models.Model):
    """Written by each Celery worker every few seconds, so /healthz can see workers on any broker."""

    hostname = models.CharField(max_length=255, unique=True)
    pid = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField()
    last_seen_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.hostname
