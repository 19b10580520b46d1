"""REST API of batches: assign drafts or contexts, fill from papers, the project's gating mode, deadlines, the panel
and calibrations (managers); announcements (managers post, annotators and verifiers mark them read)."""

from __future__ import annotations

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.batches import selectors as announcement_selectors
from annotate.batches.announcements import announcement_mark_read, announcement_post
from curation import selectors
from curation.api_inputs import valid_input
from curation.batches import services as batch_flow
from curation.batches.services import batch_deadline_set
from curation.models import Batch
from curation.panel import services as panel
from curation.serializers import BatchSerializer


class AssignSerializer(serializers.Serializer):
    instance_ids = serializers.ListField(child=serializers.IntegerField(), required=False, default=list)
    context_ids = serializers.ListField(child=serializers.IntegerField(), required=False, default=list)


class FillSerializer(serializers.Serializer):
    per_paper = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        label="Contexts per paper",  # as the batches page labels it, for the page's refusals
        error_messages={"min_value": "Contexts per paper must be at least 1."},
        help_text="short contexts per paper; null: all",
    )
    seed = serializers.IntegerField(required=False, default=0)
    paper_ids = serializers.ListField(
        child=serializers.IntegerField(), required=False, default=list, help_text="empty: every paper"
    )


class FillResultSerializer(serializers.Serializer):
    batch = serializers.IntegerField(source="batch_id")
    per_paper = serializers.IntegerField(allow_null=True)
    seed = serializers.IntegerField()
    papers = serializers.IntegerField()
    contexts = serializers.IntegerField()
    context_ids = serializers.ListField(child=serializers.IntegerField())
    moved = serializers.IntegerField()


class GatingSerializer(serializers.Serializer):
    gating = serializers.ChoiceField(choices=["manual", "sequential"])


class AssignResultSerializer(serializers.Serializer):
    batch = BatchSerializer()
    moved = serializers.IntegerField()


class BatchAssignApi(APIView):
    @extend_schema(request=AssignSerializer, responses=AssignResultSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Put drafts (or the drafts of contexts) into a batch. Managers only."""
        batch = selectors.batch_get(user=request.user, batch_id=pk)
        payload = valid_input(AssignSerializer, request.data)
        moved = batch_flow.batch_assign(batch_id=pk, actor=request.user, **payload)
        return Response({"batch": BatchSerializer(batch).data, "moved": moved})


class BatchFillApi(APIView):
    @extend_schema(request=FillSerializer, responses=FillResultSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Put short contexts without a batch into the batch: all of the papers', or a seeded N per paper."""
        selectors.batch_get(user=request.user, batch_id=pk)
        payload = valid_input(FillSerializer, request.data)
        sample = batch_flow.batch_fill_from_papers(batch_id=pk, actor=request.user, **payload)
        return Response(FillResultSerializer(sample).data)


class GatingApi(APIView):
    """Set how the project opens batches: manual, or sequential (the next opens when one is done). Managers only."""

    @extend_schema(request=GatingSerializer, responses=GatingSerializer)
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(GatingSerializer, request.data)
        project = batch_flow.project_gating_set(project=project, actor=request.user, gating=payload["gating"])
        return Response({"gating": project.gating})


class ZonedDateTimeField(serializers.DateTimeField):
    """An ISO 8601 moment that names its time zone: DRF would read "2027-01-15T17:00" as the server's zone (UTC)
    without a word, so a value without one is refused with the reason."""

    def to_internal_value(self, value: object) -> object:
        if isinstance(value, str):
            parsed = parse_datetime(value.strip())
            if parsed is not None and timezone.is_naive(parsed):
                raise serializers.ValidationError(
                    f"{value!r} has no time zone; add one, e.g. {value.strip()}Z (UTC) or {value.strip()}+01:00."
                )
        return super().to_internal_value(value)


class DeadlineSerializer(serializers.Serializer):
    deadline_at = ZonedDateTimeField(allow_null=True, help_text="ISO 8601 with a time zone; null removes it")


class BatchDeadlineApi(APIView):
    @extend_schema(request=DeadlineSerializer, responses=BatchSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Set or remove a batch's deadline (shown with a countdown in the queue and on the dashboard). Managers."""
        batch = selectors.batch_get(user=request.user, batch_id=pk)
        payload = valid_input(DeadlineSerializer, request.data)
        batch = batch_deadline_set(batch_id=pk, actor=request.user, deadline_at=payload["deadline_at"])
        return Response(BatchSerializer(batch).data)


class AnnouncementSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="announcement.pk")
    text = serializers.CharField(source="announcement.text", help_text="Markdown as written")
    html = serializers.CharField(help_text="Rendered and sanitised as guidelines are")
    batch = serializers.IntegerField(source="announcement.batch_id", allow_null=True)
    created_by = serializers.CharField(source="announcement.created_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField(source="announcement.created_at")


class AnnouncementWithReadsSerializer(AnnouncementSerializer):
    reads = serializers.IntegerField(help_text="Annotators and verifiers who marked it read")
    audience = serializers.IntegerField(help_text="Annotators and verifiers of the project")


class AnnouncementListApi(APIView):
    class AnnouncementInputSerializer(serializers.Serializer):
        text = serializers.CharField(max_length=20_000)
        batch = serializers.IntegerField(
            required=False, allow_null=True, min_value=1, max_value=2**63 - 1, source="batch_id"
        )

    @extend_schema(responses=AnnouncementWithReadsSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        """The project's recent announcements with how many read them. Managers only."""
        project = selectors.project_get(user=request.user, slug=slug)
        rows = announcement_selectors.announcements_of(user=request.user, project=project)
        return Response(AnnouncementWithReadsSerializer(rows, many=True).data)

    @extend_schema(request=AnnouncementInputSerializer, responses={201: AnnouncementWithReadsSerializer})
    def post(self, request: Request, slug: str) -> Response:
        """Post an announcement to the project's annotators and verifiers. Managers only."""
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(self.AnnouncementInputSerializer, request.data)
        announcement = announcement_post(project=project, actor=request.user, **payload)
        rows = announcement_selectors.announcements_of(user=request.user, project=project)
        row = next(r for r in rows if r["announcement"].pk == announcement.pk)
        return Response(AnnouncementWithReadsSerializer(row).data, status=status.HTTP_201_CREATED)


class AnnouncementUnreadApi(APIView):
    @extend_schema(responses=AnnouncementSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        """The viewer's announcements of this project not marked read yet (what the banner shows)."""
        project = selectors.project_get(user=request.user, slug=slug)
        rows = announcement_selectors.unread_announcements(request.user, project=project)
        return Response(AnnouncementSerializer(rows, many=True).data)


class AnnouncementReadApi(APIView):
    class AnnouncementReadSerializer(serializers.Serializer):
        announcement = serializers.IntegerField(source="announcement_id")
        read_at = serializers.DateTimeField()

    @extend_schema(request=None, responses=AnnouncementReadSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Record "I've read it" (idempotent). Annotators and verifiers of the announcement's project."""
        read = announcement_mark_read(announcement_id=pk, user=request.user)
        return Response(self.AnnouncementReadSerializer(read).data)


class PanelSerializer(serializers.Serializer):
    endpoint_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        max_length=panel.PANEL_MAX,
        help_text="the endpoints a calibration asks (the project's own or global ones); empty: no panel",
    )


class ProjectPanelApi(APIView):
    @extend_schema(responses=PanelSerializer)
    def get(self, request: Request, slug: str) -> Response:
        """The project's panel of models (managers)."""
        project = selectors.project_get(user=request.user, slug=slug)
        return Response({"endpoint_ids": panel.panel_of(user=request.user, project=project)})

    @extend_schema(request=PanelSerializer, responses=PanelSerializer)
    def put(self, request: Request, slug: str) -> Response:
        """Name the project's panel, replacing it (managers)."""
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(PanelSerializer, request.data)
        endpoints = panel.panel_set(project=project, actor=request.user, endpoint_ids=payload["endpoint_ids"])
        return Response({"endpoint_ids": sorted(e.pk for e in endpoints)})


class CalibrationSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="calibration.pk")
    batch = serializers.IntegerField(source="calibration.batch_id")
    state = serializers.CharField(source="calibration.state", help_text="pending, running, done or failed")
    items_done = serializers.IntegerField(source="calibration.items_done")
    items_total = serializers.IntegerField(source="calibration.items_total")
    error = serializers.CharField(source="calibration.error")
    created_at = serializers.DateTimeField(source="calibration.created_at")
    finished_at = serializers.DateTimeField(source="calibration.finished_at", allow_null=True)
    k_of_n = serializers.DictField(child=serializers.IntegerField(), help_text='questions per "k of n"')
    models = serializers.ListField(
        child=serializers.DictField(), help_text="per panel model: model, answered (correctly), asked, percent"
    )
    held = serializers.IntegerField(help_text="drafts the batch's panel order holds back")
    uncalibrated = serializers.IntegerField(help_text="instances without a verdict")


class BatchCalibrationApi(APIView):
    @extend_schema(responses=CalibrationSerializer)
    def get(self, request: Request, pk: int) -> Response:
        """The batch's latest calibration with the distribution of k and each model's share (managers)."""
        batch = selectors.batch_get(user=request.user, batch_id=pk)
        summary = panel.calibration_summary(user=request.user, batch=batch)
        return Response(CalibrationSerializer(summary).data)

    @extend_schema(request=None, responses={202: CalibrationSerializer})
    def post(self, request: Request, pk: int) -> Response:
        """Ask the project's panel to answer every instance of the batch, on the scoring worker (managers; 409 while
        one is waiting or running)."""
        batch = selectors.batch_get(user=request.user, batch_id=pk)
        panel.calibration_request(batch_id=batch.pk, actor=request.user)
        summary = panel.panel_summaries([batch])[batch.pk]
        return Response(CalibrationSerializer(summary).data, status=status.HTTP_202_ACCEPTED)


class PanelOrderSerializer(serializers.Serializer):
    panel_order = serializers.ChoiceField(choices=Batch.PanelOrder.choices)


class BatchPanelOrderApi(APIView):
    @extend_schema(request=PanelOrderSerializer, responses=BatchSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """How the batch's queue uses its panel verdicts: off, what no model answers first, or hold back what all
        answer (managers)."""
        selectors.batch_get(user=request.user, batch_id=pk)
        payload = valid_input(PanelOrderSerializer, request.data)
        batch = panel.batch_panel_order_set(batch_id=pk, actor=request.user, order=payload["panel_order"])
        return Response(BatchSerializer(batch).data)
