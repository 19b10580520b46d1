"""REST API for ingestion and contexts: upload sources, list a project's papers and contexts, assign reasoning types."""

from __future__ import annotations

from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation import selectors
from curation.api_inputs import valid_input
from curation.api_parsers import StrictJSONParser
from curation.errors import InvalidInput, NotFound
from curation.models import Batch, Context, Paper, Project
from curation.pagination import BoundedLimitOffsetPagination
from curation.papers import ingestion
from curation.papers import selectors as paper_selectors
from curation.papers.models import IngestJob
from curation.serializers import PaperSerializer
from curation.services import contexts as context_services


class IngestResultSerializer(serializers.Serializer):
    source_name = serializers.CharField()
    status = serializers.ChoiceField(choices=["created", "unchanged", "new_version"])
    paper_id = serializers.IntegerField()
    title = serializers.CharField()
    version = serializers.IntegerField()
    arxiv_id = serializers.CharField()
    main_file = serializers.CharField()
    sha256 = serializers.CharField()
    tables = serializers.IntegerField()
    paragraphs = serializers.IntegerField()
    contexts = inline_serializer(
        "ContextCounts", {"short": serializers.IntegerField(), "long": serializers.IntegerField()}
    )
    warnings = serializers.ListField(child=serializers.CharField())


class IngestFileSerializer(serializers.Serializer):  # a job's file without `stored`, its place on the server
    name = serializers.CharField()
    size = serializers.IntegerField()


class IngestRejectedSerializer(serializers.Serializer):
    source_name = serializers.CharField()
    reason = serializers.CharField()


class IngestJobSerializer(serializers.ModelSerializer):
    """An ingestion job as the API shows it: state, stage with counts, the reason when it failed, the results."""

    url = serializers.SerializerMethodField()
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    stage_label = serializers.CharField(source="get_stage_display", read_only=True)
    files_total = serializers.IntegerField(read_only=True)
    percent = serializers.IntegerField(read_only=True)
    files = IngestFileSerializer(many=True, read_only=True)
    results = IngestResultSerializer(many=True, read_only=True)
    rejected = IngestRejectedSerializer(many=True, read_only=True)

    class Meta:
        model = IngestJob
        fields = [
            "id", "url", "project", "state", "stage", "stage_label", "files", "files_done", "files_total",
            "current_file", "tables_found", "paragraphs_found", "percent", "error", "limit", "rejected", "results",
            "attempts", "created_at", "finished_at",
        ]  # fmt: skip

    def get_url(self, job: IngestJob) -> str:
        return reverse("api-ingest-job", args=[job.pk])


class ContextSerializer(serializers.ModelSerializer):
    paper = serializers.PrimaryKeyRelatedField(read_only=True)
    paragraph = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True)
    tables = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    reasoning_type = serializers.SlugRelatedField(slug_field="code", read_only=True, allow_null=True)

    class Meta:
        model = Context
        fields = ["id", "paper", "kind", "paragraph", "tables", "reasoning_type", "batch", "created_at"]


class ProjectPaperListApi(generics.ListAPIView):
    """List the project's papers, newest first and paged, or upload LaTeX sources to ingest (managers)."""

    parser_classes = [MultiPartParser, FormParser]
    pagination_class = BoundedLimitOffsetPagination
    serializer_class = PaperSerializer

    class PaperUploadInputSerializer(serializers.Serializer):
        files = serializers.ListField(child=serializers.FileField(allow_empty_file=True), allow_empty=False)
        batch = serializers.IntegerField(required=False, allow_null=True)

    def get_queryset(self) -> QuerySet[Paper]:
        project = selectors.project_get(user=self.request.user, slug=self.kwargs["slug"])
        papers = selectors.papers_visible_to(self.request.user, project)
        return papers.select_related("project").order_by("-created_at", "-pk")

    @extend_schema(
        request={"multipart/form-data": PaperUploadInputSerializer},
        responses={202: IngestJobSerializer},
        description="Upload one or several .tex files or source archives (field `files`). Managers only. The "
        "files are checked (size, type) and stored, and a worker reads them in a bounded process: the answer is 202 "
        "with the ingestion job (its `url` shows stage, counts and, when a limit was hit, the reason). If any file "
        "is refused at the door nothing is stored and the answer is 400 with a reason per file.",
    )
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        files = request.FILES.getlist("files") or request.FILES.getlist("file")
        payload = valid_input(
            self.PaperUploadInputSerializer, {"files": files, "batch": request.data.get("batch") or None}
        )
        batch = _batch_of(project, payload.get("batch"))
        job = ingestion.ingest_job_request(project=project, actor=request.user, uploads=payload["files"], batch=batch)
        body = IngestJobSerializer(job).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class IngestJobApi(APIView):
    """Follow one ingestion of uploaded LaTeX sources: its stage, counts and any refusal. Managers only."""

    @extend_schema(responses=IngestJobSerializer, description="An ingestion job: poll it for progress. Managers only.")
    def get(self, request: Request, pk: int) -> Response:
        job = paper_selectors.ingest_job_get(user=request.user, job_id=pk)
        return Response(IngestJobSerializer(job).data)


class IngestJobRetryApi(APIView):
    """Queue a failed ingestion again with its stored files. Managers only."""

    @extend_schema(
        request=None,
        responses={202: IngestJobSerializer},
        description="Queue a failed ingestion again with its stored files (409 unless it failed). Managers only.",
    )
    def post(self, request: Request, pk: int) -> Response:
        job = paper_selectors.ingest_job_get(user=request.user, job_id=pk)
        job = ingestion.ingest_job_retry(job=job, actor=request.user)
        return Response(IngestJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class IngestJobDiscardApi(APIView):
    """Discard a failed or waiting ingestion and its stored files. Managers only."""

    @extend_schema(
        request=None,
        responses=IngestJobSerializer,
        description="Discard a failed or waiting ingestion and its stored files (409 while it runs or once it is "
        "done). Managers only.",
    )
    def post(self, request: Request, pk: int) -> Response:
        job = paper_selectors.ingest_job_get(user=request.user, job_id=pk)
        job = ingestion.ingest_job_discard(job=job, actor=request.user)
        return Response(IngestJobSerializer(job).data)


@extend_schema(
    parameters=[
        OpenApiParameter("batch", int, description="only this batch"),
        OpenApiParameter("paper", int, description="only this paper"),
        OpenApiParameter("kind", str, enum=Context.Kind.values),
        OpenApiParameter("unassigned", bool, description="only short contexts without a reasoning type"),
    ],
)
class ContextListApi(generics.ListAPIView):
    """List the project's contexts, filtered by batch, paper, kind or the short ones without a reasoning type."""

    serializer_class = ContextSerializer

    def get_queryset(self) -> QuerySet[Context]:
        project = selectors.project_get(user=self.request.user, slug=self.kwargs["slug"])
        contexts = paper_selectors.contexts_visible_to(self.request.user, project).prefetch_related("tables")
        query = self.request.query_params
        try:
            if query.get("batch"):
                contexts = contexts.filter(batch_id=int(query["batch"]))
            if query.get("paper"):
                contexts = contexts.filter(paper_id=int(query["paper"]))
        except ValueError as error:
            raise InvalidInput("batch and paper must be numbers.") from error
        if query.get("kind"):
            contexts = contexts.filter(kind=query["kind"])
        if query.get("unassigned") in ("1", "true"):
            # Long contexts never get a type (their questions are drafted on short ones).
            contexts = contexts.filter(kind=Context.Kind.SHORT, reasoning_type__isnull=True)
        return contexts.order_by("pk")


class ContextAssignApi(APIView):
    """Give the project's short contexts reasoning types by the taxonomy's target shares. Managers only."""

    parser_classes = [StrictJSONParser, FormParser, MultiPartParser]

    class ContextAssignInputSerializer(serializers.Serializer):
        batch = serializers.IntegerField(required=False, allow_null=True, help_text="omit for all unassigned")
        seed = serializers.IntegerField(default=0)

    @extend_schema(
        request=ContextAssignInputSerializer,
        responses=inline_serializer(
            "AssignmentResult",
            {
                "seed": serializers.IntegerField(),
                "assigned": serializers.IntegerField(),
                "counts": serializers.DictField(child=serializers.IntegerField()),
                "targets": serializers.DictField(child=serializers.FloatField()),
            },
        ),
        description="Assign leaf reasoning types by the project's target shares: to every short context of "
        "`batch`, or to all short contexts without a type (long contexts get none). Deterministic for a seed. "
        "Managers only.",
    )
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(self.ContextAssignInputSerializer, request.data)
        batch = _batch_of(project, payload.get("batch"))
        result = context_services.contexts_assign_reasoning_types(
            project=project, actor=request.user, seed=payload["seed"], batch=batch
        )
        return Response(result.as_dict())


class ContextDetailApi(APIView):
    """Read one context (a paragraph and its tables, or a whole paper), or set its reasoning type (managers)."""

    class ContextUpdateInputSerializer(serializers.Serializer):
        reasoning_type = serializers.CharField(allow_null=True, help_text="a leaf type's code, or null")

    @extend_schema(responses=ContextSerializer)
    def get(self, request: Request, pk: int) -> Response:
        context = paper_selectors.context_get(user=request.user, context_id=pk)
        return Response(ContextSerializer(context).data)

    @extend_schema(request=ContextUpdateInputSerializer, responses=ContextSerializer)
    def patch(self, request: Request, pk: int) -> Response:
        context = paper_selectors.context_get(user=request.user, context_id=pk)
        payload = valid_input(self.ContextUpdateInputSerializer, request.data)
        context = context_services.context_set_reasoning_code(
            context=context, code=payload["reasoning_type"], actor=request.user
        )
        return Response(ContextSerializer(context).data)


def _batch_of(project: Project, batch_id: int | None) -> Batch | None:
    if batch_id is None:
        return None
    batch = Batch.objects.filter(project=project, pk=batch_id).first()
    if batch is None:
        raise NotFound(f"No batch {batch_id} in this project.")
    return batch
