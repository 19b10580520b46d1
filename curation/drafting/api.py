"""REST API of drafting: model endpoints (list, add, edit, test), prompt template versions, and drafting runs."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation import selectors
from curation.api_inputs import valid_input
from curation.drafting import endpoints as endpoint_services
from curation.drafting import selectors as drafting_selectors
from curation.drafting.models import DraftingItem, DraftingRun, PromptTemplate
from curation.drafting.services import prompt_versions
from curation.drafting.services import runs as run_services
from curation.endpoints.django_client import limit_is_shared
from curation.endpoints.models import ModelEndpoint
from curation.errors import InvalidInput, NotFound
from curation.models import Batch
from curation.serializers import database_id_field


class ModelEndpointOutputSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    is_global = serializers.SerializerMethodField()
    key_status = serializers.SerializerMethodField(help_text="none, set or missing (on this server)")
    limit_is_shared = serializers.SerializerMethodField(help_text="whether the concurrency limit holds across workers")

    class Meta:
        model = ModelEndpoint
        fields = [
            "id", "project", "is_global", "name", "base_url", "model", "api_key_env", "key_status", "timeout_s",
            "max_attempts", "concurrency_limit", "requests_per_minute", "generation_params", "supports_tools",
            "is_local_default", "limit_is_shared", "created_at",
        ]  # fmt: skip

    def get_is_global(self, endpoint: ModelEndpoint) -> bool:
        return endpoint.project_id is None

    def get_key_status(self, endpoint: ModelEndpoint) -> str:
        return endpoint_services.key_status(endpoint)

    def get_limit_is_shared(self, endpoint: ModelEndpoint) -> bool:
        return limit_is_shared()


class ModelEndpointInputSerializer(serializers.Serializer):
    """An endpoint's settings from an API body or the endpoint pages' POST (an empty number keeps its default)."""

    name = serializers.CharField(max_length=120)
    base_url = serializers.URLField(max_length=500)
    model = serializers.CharField(max_length=200)
    api_key_env = serializers.CharField(max_length=100, required=False, allow_blank=True, help_text="variable name")
    timeout_s = serializers.FloatField(required=False, min_value=0.1)
    max_attempts = serializers.IntegerField(required=False, min_value=1, max_value=20)
    concurrency_limit = serializers.IntegerField(required=False, min_value=1, max_value=1000)
    requests_per_minute = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    # A JSON field reads the pages' typed text as well as an API body's object.
    generation_params = serializers.JSONField(required=False, help_text='a JSON object, e.g. {"temperature": 0}')
    supports_tools = serializers.BooleanField(required=False)

    def validate_generation_params(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise serializers.ValidationError('Generation parameters must be a JSON object, e.g. {"temperature": 0}.')
        return value


class EndpointTestOutputSerializer(serializers.Serializer):
    is_ok = serializers.BooleanField()
    kind = serializers.CharField(help_text="ok, down, unauthorized, garbage, timeout, rejected, config, …")
    message = serializers.CharField()
    status = serializers.IntegerField(allow_null=True)
    latency_s = serializers.FloatField()
    reply = serializers.CharField(allow_blank=True)
    model = serializers.CharField()
    attempts = serializers.IntegerField()
    key_status = serializers.CharField()
    limit_is_shared = serializers.BooleanField()


class ProjectEndpointListApi(APIView):
    """List the project's model endpoints, or add one (any OpenAI-compatible server). Managers only."""

    @extend_schema(responses=ModelEndpointOutputSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.managed_project_get(user=request.user, slug=slug, action="see model endpoints")
        endpoints = endpoint_services.endpoints_visible_to(request.user, project)
        return Response(ModelEndpointOutputSerializer(endpoints, many=True).data)

    @extend_schema(request=ModelEndpointInputSerializer, responses={201: ModelEndpointOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.managed_project_get(user=request.user, slug=slug, action="add model endpoints")
        payload = valid_input(ModelEndpointInputSerializer, request.data)
        endpoint = endpoint_services.endpoint_create(project=project, actor=request.user, **payload)
        return Response(ModelEndpointOutputSerializer(endpoint).data, status=status.HTTP_201_CREATED)


class EndpointDetailApi(APIView):
    """Read or change one model endpoint (its key stays in the server's environment). Managers only."""

    @extend_schema(responses=ModelEndpointOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        endpoint = endpoint_services.endpoint_get(user=request.user, endpoint_id=pk)
        return Response(ModelEndpointOutputSerializer(endpoint).data)

    @extend_schema(request=ModelEndpointInputSerializer(partial=True), responses=ModelEndpointOutputSerializer)
    def patch(self, request: Request, pk: int) -> Response:
        endpoint = endpoint_services.endpoint_get(user=request.user, endpoint_id=pk)
        payload = valid_input(ModelEndpointInputSerializer, request.data, partial=True)
        endpoint = endpoint_services.endpoint_update(endpoint=endpoint, actor=request.user, **payload)
        return Response(ModelEndpointOutputSerializer(endpoint).data)


class EndpointTestApi(APIView):
    """Send one tiny request to a model endpoint and report status, latency and reply. Managers only."""

    @extend_schema(
        request=None,
        responses=EndpointTestOutputSerializer,
        description="Send one tiny request and report status, latency and the reply, or the failure in plain words.",
    )
    def post(self, request: Request, pk: int) -> Response:
        endpoint = endpoint_services.endpoint_get(user=request.user, endpoint_id=pk)
        result = endpoint_services.endpoint_test(endpoint=endpoint, actor=request.user)
        return Response(EndpointTestOutputSerializer(result).data)


# Plain strings rather than choice fields: the schema's enum names for "kind" and "status" are taken by other apps.
KIND_HELP = "question, rationale_answer or header_paraphrase"


class PromptTemplateOutputSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    kind = serializers.CharField(read_only=True, help_text=KIND_HELP)

    class Meta:
        model = PromptTemplate
        fields = ["id", "kind", "name", "text", "content_hash", "note", "created_by", "created_at"]


class PromptTemplateListApi(APIView):
    """List every version of the project's drafting prompts, or save a new version of one. Managers only."""

    class PromptTemplateInputSerializer(serializers.Serializer):
        kind = serializers.CharField(help_text=KIND_HELP)
        text = serializers.CharField(trim_whitespace=False)
        name = serializers.CharField(required=False, allow_blank=True, max_length=200)
        note = serializers.CharField(required=False, allow_blank=True, max_length=500)

    @extend_schema(
        responses=PromptTemplateOutputSerializer(many=True),
        description="Every version of the project's prompt templates, newest first per kind.",
    )
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.managed_project_get(user=request.user, slug=slug, action="see prompt templates")
        prompt_versions.prompt_templates_ensure_defaults(project=project)
        templates = drafting_selectors.prompt_templates_of(project=project)
        return Response(PromptTemplateOutputSerializer(templates, many=True).data)

    @extend_schema(request=PromptTemplateInputSerializer, responses={201: PromptTemplateOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.managed_project_get(user=request.user, slug=slug, action="edit prompt templates")
        payload = valid_input(self.PromptTemplateInputSerializer, request.data)
        template = prompt_versions.prompt_template_save(project=project, actor=request.user, **payload)
        return Response(PromptTemplateOutputSerializer(template).data, status=status.HTTP_201_CREATED)


class DraftingItemOutputSerializer(serializers.ModelSerializer):
    status = serializers.CharField(read_only=True, help_text="pending, running, drafted, failed, skipped, cancelled")

    class Meta:
        model = DraftingItem
        fields = [
            "id", "context", "chunk", "status", "attempts", "error", "instance", "instance_count", "worker",
            "claimed_at", "finished_at",
        ]  # fmt: skip


class DraftingRunCountsSerializer(serializers.Serializer):
    pending = serializers.IntegerField()
    running = serializers.IntegerField()
    drafted = serializers.IntegerField()
    failed = serializers.IntegerField()
    skipped = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    total = serializers.IntegerField()
    instances = serializers.IntegerField(help_text="drafts made")
    no_draft = serializers.IntegerField(
        help_text="of the drafted items, those that made no draft (a type no template drafts)"
    )


class DraftingRunOutputSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    kind = serializers.CharField(read_only=True, help_text="llm or template")
    status = serializers.CharField(read_only=True, help_text="queued, running, completed, failed, cancelled")
    # The run's progress (run_services.run_progress), computed once per run in to_representation.
    counts = DraftingRunCountsSerializer(source="progress.counts", read_only=True)
    queued_behind = serializers.IntegerField(
        source="progress.queued_behind",
        read_only=True,
        allow_null=True,
        help_text="while no item has begun: how many earlier runs on its queue are unfinished; else null",
    )
    waiting = serializers.CharField(
        source="progress.waiting", read_only=True, help_text='e.g. "Queued behind 2 runs"; empty once work has begun'
    )

    class Meta:
        model = DraftingRun
        fields = [
            "id", "project", "kind", "batch", "endpoint", "endpoint_snapshot", "question_template", "answer_template",
            "template_hashes", "generation_params", "options", "status", "queued_behind", "waiting", "error", "counts",
            "created_by", "created_at", "started_at", "finished_at",
        ]  # fmt: skip

    def to_representation(self, run: DraftingRun) -> dict[str, Any]:
        run.progress = run_services.run_progress(run)
        return super().to_representation(run)


class DraftingRunDetailOutputSerializer(DraftingRunOutputSerializer):
    items = DraftingItemOutputSerializer(many=True, source="items.all", read_only=True)

    class Meta(DraftingRunOutputSerializer.Meta):
        fields = [*DraftingRunOutputSerializer.Meta.fields, "items"]


class DraftingRunListApi(APIView):
    """List the project's latest drafting runs, or create one over a batch or chosen contexts. Managers only."""

    class DraftingRunInputSerializer(serializers.Serializer):
        kind = serializers.CharField(help_text="llm or template")
        batch = database_id_field(required=False, allow_null=True)
        contexts = serializers.ListField(child=database_id_field(), required=False, allow_empty=True)
        endpoint = database_id_field(
            required=False,
            allow_null=True,
            help_text="required for llm runs and for template runs that paraphrase headers",
        )
        question_template = serializers.IntegerField(required=False, allow_null=True, help_text="default: latest")
        answer_template = serializers.IntegerField(required=False, allow_null=True, help_text="default: latest")
        generation_params = serializers.DictField(required=False)
        options = serializers.DictField(
            required=False,
            help_text="redraft, seed, per_template, unanswerable (skip|keep), template_ids, chunk_size, "
            "max_context_chars, paraphrase_headers (template runs; needs endpoint)",
        )
        start = serializers.BooleanField(default=True)

    @extend_schema(responses=DraftingRunOutputSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.managed_project_get(user=request.user, slug=slug, action="see drafting runs")
        runs = drafting_selectors.runs_of_project(user=request.user, project=project)[:200]
        return Response(DraftingRunOutputSerializer(runs, many=True).data)

    @extend_schema(
        request=DraftingRunInputSerializer,
        responses={201: DraftingRunOutputSerializer},
        description="Create a drafting run over a batch or chosen contexts and (by default) queue it for the workers.",
    )
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.managed_project_get(user=request.user, slug=slug, action="start drafting runs")
        data = valid_input(self.DraftingRunInputSerializer, request.data)
        run = run_services.run_create(
            project=project, actor=request.user, **_run_arguments(project, request.user, data)
        )
        if data["start"]:
            run = run_services.run_start(run_id=run.pk, actor=request.user)
        return Response(DraftingRunOutputSerializer(run).data, status=status.HTTP_201_CREATED)


def _run_arguments(project: Any, user: Any, data: dict[str, Any]) -> dict[str, Any]:
    """Turn ids from a request into the rows run_create takes, each checked against the project."""
    batch = None
    if data.get("batch"):
        batch = Batch.objects.filter(project=project, pk=data["batch"]).first()
        if batch is None:
            raise NotFound(f"No batch {data['batch']} in this project.")
    endpoint = None
    if data.get("endpoint"):
        endpoint = endpoint_services.endpoints_visible_to(user, project).filter(pk=data["endpoint"]).first()
        if endpoint is None:
            raise NotFound(f"No endpoint {data['endpoint']} usable in this project.")
    templates = {}
    for field, kind in (("question_template", "question"), ("answer_template", "rationale_answer")):
        if data.get(field):
            template = PromptTemplate.objects.filter(project=project, kind=kind, pk=data[field]).first()
            if template is None:
                raise InvalidInput(f"No {kind} template {data[field]} in this project.")
            templates[field] = template
    return {
        "kind": data["kind"],
        "batch": batch,
        "context_ids": data.get("contexts") or None,
        "endpoint": endpoint,
        "generation_params": data.get("generation_params") or None,
        "options": data.get("options") or None,
        **templates,
    }


class DraftingRunDetailApi(APIView):
    """One drafting run with its settings, progress and items. Managers only."""

    @extend_schema(responses=DraftingRunDetailOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        run = drafting_selectors.run_get(user=request.user, run_id=pk)
        return Response(DraftingRunDetailOutputSerializer(run).data)


class DraftingRunActionApi(APIView):
    """Cancel, resume, or retry the failed items of a drafting run (the URL names which). Managers only."""

    action_name = ""

    @extend_schema(request=None, responses=DraftingRunOutputSerializer)
    def post(self, request: Request, pk: int) -> Response:
        run = drafting_selectors.run_get(user=request.user, run_id=pk)
        run = run_services.RUN_ACTIONS[self.action_name](run_id=run.pk, actor=request.user)
        return Response(DraftingRunOutputSerializer(run).data)
