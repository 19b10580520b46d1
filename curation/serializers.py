"""Output and input shapes of the core API (interfaces only: no rules here)."""

from __future__ import annotations

from rest_framework import serializers

from curation.answer_types import ANSWER_TYPES, SCALES
from curation.deadlines import deadline_state
from curation.models import Batch, Instance, InstanceRevision, Paper, Paragraph, Project, ReasoningType, Table
from curation.models import TransitionEvent as Event
from curation.services.instances import EDITABLE_FIELDS
from curation.states import Role, Status

# A database id (BigAutoField) as input: beyond the 64-bit range is a 400 naming the field, not a driver overflow.
DATABASE_ID_MAX = 2**63 - 1


def database_id_field(**kwargs: object) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=DATABASE_ID_MAX, **kwargs)


class ProjectSerializer(serializers.ModelSerializer):
    roles = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = ["id", "slug", "name", "description", "gating", "created_at", "roles"]

    def get_roles(self, project: Project) -> list[str]:
        return sorted(self.context.get("roles", {}).get(project.pk, []))


class ProjectCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=80, required=False, allow_blank=True)
    description = serializers.CharField(required=False, allow_blank=True)


class MembershipSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(source="user.username")
    role = serializers.ChoiceField(choices=Role.choices)
    is_qualified = serializers.BooleanField()
    qualified_at = serializers.DateTimeField(allow_null=True)


class MembershipCreateSerializer(serializers.Serializer):
    username = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.choices)


class ReasoningTypeSerializer(serializers.ModelSerializer):
    parent = serializers.SlugRelatedField(slug_field="code", read_only=True, allow_null=True)

    class Meta:
        model = ReasoningType
        fields = ["id", "code", "name", "parent", "description", "target_proportion", "order"]


class ReasoningTypeUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=120, required=False)
    description = serializers.CharField(required=False, allow_blank=True)
    target_proportion = serializers.FloatField(required=False, min_value=0, max_value=100)


class BatchSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    is_overdue = serializers.SerializerMethodField(help_text="Past its deadline and not settled yet")

    class Meta:
        model = Batch
        fields = [
            "id", "project", "name", "order", "number", "state", "opened_at", "created_at", "deadline_at",
            "is_overdue", "panel_order",
        ]  # fmt: skip

    def get_is_overdue(self, batch: Batch) -> bool:
        return deadline_state(batch).is_overdue


class BatchCreateSerializer(serializers.Serializer):
    project = serializers.SlugField()
    name = serializers.CharField(max_length=200)


class TableSerializer(serializers.ModelSerializer):
    class Meta:
        model = Table
        exclude = ["paper", "raw_latex"]  # every field but its paper and its LaTeX source


class ParagraphSerializer(serializers.ModelSerializer):
    class Meta:
        model = Paragraph
        exclude = ["paper"]  # every field but its paper
        read_only_fields = ["mentioned_tables"]


class PaperSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Paper
        fields = ["id", "project", "title", "source_name", "version", "arxiv_id", "main_file", "origin", "created_at"]


class PaperDetailSerializer(PaperSerializer):
    tables = TableSerializer(many=True, read_only=True)
    paragraphs = ParagraphSerializer(many=True, read_only=True)

    class Meta(PaperSerializer.Meta):
        fields = [*PaperSerializer.Meta.fields, "warnings", "source_report", "tables", "paragraphs"]


class InstanceSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    reasoning_type = serializers.SlugRelatedField(slug_field="code", read_only=True, allow_null=True)
    author = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    round1_verifier = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    round2_reviewer = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    assigned_to = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    relevant_tables = serializers.PrimaryKeyRelatedField(many=True, read_only=True)

    class Meta:
        model = Instance
        fields = [
            "id",
            "project",
            "batch",
            "context",
            "reasoning_type",
            *(name for name in EDITABLE_FIELDS if name != "reasoning_type_id"),  # every field an edit may change
            "relevant_tables",
            "status",
            "version",
            "author",
            "round1_verifier",
            "round2_reviewer",
            "assigned_to",
            "lease_expires_at",
            "created_at",
            "updated_at",
        ]


class InstanceEditSerializer(serializers.Serializer):
    expected_version = serializers.IntegerField(min_value=1)
    question = serializers.CharField(required=False, allow_blank=True)
    rationale = serializers.CharField(required=False, allow_blank=True)
    answer = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False)
    answer_form = serializers.ChoiceField(choices=Instance.AnswerForm.choices, required=False, allow_blank=True)
    answer_source = serializers.ChoiceField(choices=Instance.AnswerSource.choices, required=False, allow_blank=True)
    answer_type = serializers.ChoiceField(choices=ANSWER_TYPES, required=False, allow_blank=True)
    is_answerable = serializers.BooleanField(required=False)
    unanswerable_reason = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    scale = serializers.ChoiceField(
        choices=[scale for scale in SCALES if scale], required=False, allow_blank=True, allow_null=True
    )
    reasoning_type_id = database_id_field(required=False, allow_null=True)
    relevant_table_ids = serializers.ListField(child=database_id_field(), required=False)


class TransitionCommentSerializer(serializers.Serializer):
    field = serializers.CharField(required=False, allow_blank=True, default="")
    text = serializers.CharField(allow_blank=True, max_length=5000)


class TransitionSerializer(serializers.Serializer):
    """A move through the transition table; `comments` and `message` feed the move's guards and effects (a change
    request needs a comment, a round-two flag a comment or message), exactly as on the step pages."""

    target = serializers.ChoiceField(choices=Status.choices)
    expected_version = serializers.IntegerField(min_value=1)
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    comments = TransitionCommentSerializer(many=True, required=False)
    message = serializers.CharField(required=False, allow_blank=True, max_length=5000)


class RevisionSerializer(serializers.ModelSerializer):
    author = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = InstanceRevision
        fields = ["number", "author", "kind", "fields", "created_at"]


class EventSerializer(serializers.ModelSerializer):
    actor = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = Event
        fields = ["actor", "from_status", "to_status", "version", "reason", "created_at"]


class HistorySerializer(serializers.Serializer):
    revisions = RevisionSerializer(many=True)
    events = EventSerializer(many=True)
