"""REST API of scoring runs: list/start, detail with progress and results, pause/resume/cancel/retry, predictions,
error tags, exports, uploaded predictions, the official figures of a gold + prediction pair, run comparison."""

from __future__ import annotations

import json
import math
from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation import selectors
from curation.api_inputs import valid_input
from curation.api_parsers import StrictJSONParser
from curation.errors import InvalidInput, NotFound
from curation.pagination import BoundedLimitOffsetPagination
from curation.releases import selectors as release_selectors
from curation.uploads import upload_read
from scoring.methods.toolloop import MAX_TURNS_LIMIT
from scoring.runs import creation as run_creation
from scoring.runs import exports, table_formats
from scoring.runs import lifecycle as run_lifecycle
from scoring.runs import predictions as prediction_services
from scoring.runs import progress as runs_progress
from scoring.runs import selectors as scoring_selectors
from scoring.runs import uploads as upload_services
from scoring.runs.models import ErrorTag, Prediction, ScoringRun
from scoring.runs.permissions import runner_require


class ScoringRunOutputSerializer(serializers.ModelSerializer):
    release = serializers.PrimaryKeyRelatedField(read_only=True)
    endpoint = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    # Plain strings, not enums: the schema keeps one enum per name project-wide.
    method = serializers.CharField(read_only=True)
    setting = serializers.CharField(read_only=True)
    status = serializers.CharField(read_only=True)

    class Meta:
        model = ScoringRun
        fields = [
            "id", "release", "endpoint", "label", "method", "setting", "status", "template_hash", "generation_params",
            "options", "config_hash", "items_total", "isolation", "upload_name", "upload_format", "error",
            "created_by", "created_at", "started_at", "finished_at",
        ]  # fmt: skip


class ScoringRunProgressOutputSerializer(serializers.Serializer):
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.FloatField()
    rate_per_s = serializers.FloatField()
    eta_s = serializers.IntegerField(allow_null=True)
    status = serializers.CharField()
    queued_behind = serializers.IntegerField(
        allow_null=True, help_text="while no chunk has begun: how many earlier runs on its queue are unfinished"
    )
    waiting = serializers.CharField(help_text='e.g. "Queued behind 2 runs"; empty once work has begun')


class ScoringRunDetailOutputSerializer(ScoringRunOutputSerializer):
    results = serializers.JSONField(read_only=True)
    templates = serializers.JSONField(read_only=True)
    progress = serializers.SerializerMethodField()
    error_types = serializers.SerializerMethodField()

    class Meta(ScoringRunOutputSerializer.Meta):
        fields = [*ScoringRunOutputSerializer.Meta.fields, "templates", "results", "progress", "error_types"]

    @extend_schema_field(ScoringRunProgressOutputSerializer)
    def get_progress(self, run: ScoringRun) -> dict[str, Any]:
        return runs_progress.run_progress(run)

    @extend_schema_field(serializers.DictField(child=serializers.DictField(child=serializers.IntegerField())))
    def get_error_types(self, run: ScoringRun) -> dict[str, Any]:
        return scoring_selectors.error_distribution(run)


class ErrorTagOutputSerializer(serializers.ModelSerializer):
    tagged_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    label = serializers.CharField(read_only=True)
    kind = serializers.CharField(read_only=True)

    class Meta:
        model = ErrorTag
        fields = ["kind", "custom_label", "label", "note", "tagged_by", "tagged_at"]


class PredictionOutputSerializer(serializers.ModelSerializer):
    gold_answer = serializers.SerializerMethodField()
    question = serializers.SerializerMethodField()
    error_tags = ErrorTagOutputSerializer(many=True, read_only=True)
    status = serializers.CharField(read_only=True)

    class Meta:
        model = Prediction
        fields = [
            "id", "run", "position", "uid", "status", "question", "gold_answer", "answer", "scale", "is_correct",
            "metrics", "context", "tokens_in", "tokens_out", "latency_s", "attempts", "error", "error_tags",
        ]  # fmt: skip

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_gold_answer(self, prediction: Prediction) -> list[str]:
        return list(prediction.item.data.get("answer") or [])

    def get_question(self, prediction: Prediction) -> str:
        return str(prediction.item.data.get("question", ""))


class PredictionDetailOutputSerializer(PredictionOutputSerializer):
    class Meta(PredictionOutputSerializer.Meta):
        fields = [
            *PredictionOutputSerializer.Meta.fields,
            "prompt", "raw_output", "stages", "program", "program_result", "tool_trace", "attempt_log", "worker",
        ]  # fmt: skip


class PredictionPagination(BoundedLimitOffsetPagination):
    """The API's paging (curation/pagination.py: `?limit`, `?offset`, a count capped at 1,000), 100 a page."""

    default_limit = 100


# What a run can use; an uploaded file's predictions are scored, never run.
RUN_METHODS = [choice for choice in ScoringRun.Method.choices if choice[0] != ScoringRun.Method.UPLOAD]


class GenerationParamsInputSerializer(serializers.Serializer):
    """A run's generation parameters: max_tokens and temperature are checked here, the other names pass on to
    `run_create`, which refuses those no endpoint takes."""

    max_tokens = serializers.IntegerField(required=False, min_value=1)
    temperature = serializers.FloatField(required=False, min_value=0)

    def validate_temperature(self, value: float) -> float:
        if not math.isfinite(value):  # "nan" and "inf" parse as floats
            raise serializers.ValidationError("A valid number is required.")
        return value

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        checked = super().to_internal_value(data)
        return {**data, **checked}


class RunOptionsInputSerializer(serializers.Serializer):
    """What starting a run and scoring an uploaded file both take: the release, a label, the experiment (context
    setting, n-shot, tools) and how answers are scored (scale, answer extraction, BERTScore model, a judge)."""

    release = serializers.IntegerField()
    label = serializers.CharField(allow_blank=True, default="", max_length=200)
    setting = serializers.CharField(default="short", help_text="short or long")
    few_shot = serializers.IntegerField(default=0, label="n-shot", help_text="tool examples per tool: 0, 1 or 3")
    tools = serializers.CharField(default="all", help_text="all, or data (data tools only)")
    scale_mode = serializers.CharField(default="predicted", help_text="predicted, or ignore (TAT-QA scale)")
    extraction = serializers.CharField(
        default="default", help_text="how model text is read: default, or official (SciTaT's scripts)"
    )
    bertscore = serializers.CharField(
        default="minilm",
        help_text="minilm (all-MiniLM-L6-v2, offline) or paper (bert-base-uncased layer 12, when configured)",
    )
    judge = serializers.IntegerField(
        allow_null=True,
        default=None,
        help_text="An endpoint that grades free-form answers with the rubric (beside BERTScore; optional)",
    )


class ScoringRunListApi(APIView):
    """Runs of a project (every member) and starting one (managers and verifiers)."""

    class ScoringRunCreateInputSerializer(RunOptionsInputSerializer):
        endpoint = serializers.IntegerField()
        method = serializers.ChoiceField(
            choices=RUN_METHODS,
            error_messages={"invalid_choice": "Select a valid choice: {input} is not a method a run can use."},
            help_text="direct, cot, pot, car, calculator (CaR's Calculator only), reversing (CaR reversed), tatllm "
            "or tool",
        )
        limit = serializers.IntegerField(allow_null=True, default=None, min_value=1)
        per_template = serializers.IntegerField(
            allow_null=True,
            default=None,
            min_value=1,
            help_text="score a sample: this many answerable questions per question template (the meta paper draws "
            "20), instead of the whole release",
        )
        sample_seed = serializers.IntegerField(default=0, help_text="the sample's seed")
        max_turns = serializers.IntegerField(
            allow_null=True,
            default=None,
            min_value=1,
            max_value=MAX_TURNS_LIMIT,
            help_text="tool-loop turn cap; null: the release's longest essential-action program + 4",
        )
        generation_params = GenerationParamsInputSerializer(default=dict)
        # A template is sent as written: a prompt's leading or trailing space or newline is part of it.
        templates = serializers.DictField(child=serializers.CharField(trim_whitespace=False), default=dict)
        chunk_size = serializers.IntegerField(default=run_creation.DEFAULT_CHUNK_SIZE, min_value=1, max_value=500)

    parser_classes = [StrictJSONParser]

    @extend_schema(responses=ScoringRunOutputSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        runs = scoring_selectors.runs_of(user=request.user, project=project)
        if request.query_params.get("release", "").isdigit():
            runs = runs.filter(release_id=int(request.query_params["release"]))
        return Response(ScoringRunOutputSerializer(runs, many=True).data)

    @extend_schema(request=ScoringRunCreateInputSerializer, responses={201: ScoringRunDetailOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        selectors.project_get(user=request.user, slug=slug)
        values = valid_input(self.ScoringRunCreateInputSerializer, request.data)
        release = release_selectors.release_get(user=request.user, release_id=values["release"], slug=slug)
        run = run_started(user=request.user, release=release, values=values)
        return Response(ScoringRunDetailOutputSerializer(run).data, status=status.HTTP_201_CREATED)


def run_started(*, user: Any, release: Any, values: dict[str, Any]) -> ScoringRun:
    """Create and start a run from the run serializer's values (the API's and the page's), its endpoint and judge
    among those of the release's project."""
    project = release.project
    endpoint = scoring_selectors.endpoints_for(user=user, project=project).filter(pk=values["endpoint"]).first()
    if endpoint is None:
        runner_require(user, project, "score models")  # who may not run learns that, not "no such"
        raise InvalidInput("No such endpoint in this project.", detail={"field": "endpoint"})
    judge = scoring_selectors.judge_for(user=user, project=project, judge_id=values["judge"])
    options = {key: value for key, value in values.items() if key not in ("release", "endpoint", "judge")}
    run = run_creation.run_create(release=release, actor=user, endpoint=endpoint, judge=judge, **options)
    run_lifecycle.run_start(run=run, actor=user)
    return run


class ScoringRunDetailApi(APIView):
    """One run with its progress, aggregate results and error-type distribution (every member)."""

    @extend_schema(responses=ScoringRunDetailOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        run = scoring_selectors.run_get(user=request.user, run_id=pk)
        return Response(ScoringRunDetailOutputSerializer(run).data)


class ScoringRunActionApi(APIView):
    """Pause, resume, cancel or retry the failed predictions of a run (managers and verifiers)."""

    parser_classes = [StrictJSONParser, FormParser]

    @extend_schema(request=None, responses=ScoringRunDetailOutputSerializer)
    def post(self, request: Request, pk: int, action: str) -> Response:
        if action not in run_lifecycle.RUN_ACTIONS:
            raise NotFound("Actions are pause, resume, cancel and retry-failed.")
        run = scoring_selectors.run_get(user=request.user, run_id=pk)
        run_lifecycle.RUN_ACTIONS[action](run=run, actor=request.user)
        run.refresh_from_db()
        return Response(ScoringRunDetailOutputSerializer(run).data)


class ScoringPredictionListApi(generics.ListAPIView):
    """A run's predictions beside their gold answers (gold readers only), in the release's order; `?wrong=1` keeps
    the wrong ones."""

    serializer_class = PredictionOutputSerializer
    pagination_class = PredictionPagination

    def get_queryset(self) -> QuerySet[Prediction]:
        run = scoring_selectors.run_get(user=self.request.user, run_id=self.kwargs["pk"])
        predictions = scoring_selectors.predictions_of(user=self.request.user, run=run)
        return predictions.filter(is_correct=False) if self.request.query_params.get("wrong") == "1" else predictions


class ScoringPredictionDetailApi(APIView):
    """One prediction with its prompt, output, program, tool trace and metrics (gold readers only)."""

    @extend_schema(responses=PredictionDetailOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        prediction = scoring_selectors.prediction_get(user=request.user, prediction_id=pk)
        return Response(PredictionDetailOutputSerializer(prediction).data)


class ScoringErrorTagApi(APIView):
    """Set or clear the caller's error tag on a prediction (gold readers only)."""

    class ErrorTagInputSerializer(serializers.Serializer):
        kind = serializers.CharField(help_text="miss, grounding, calculation, knowledge, redundancy or custom")
        custom_label = serializers.CharField(allow_blank=True, default="", max_length=60)
        note = serializers.CharField(allow_blank=True, default="")

    parser_classes = [StrictJSONParser, FormParser]

    @extend_schema(request=ErrorTagInputSerializer, responses=ErrorTagOutputSerializer)
    def put(self, request: Request, pk: int) -> Response:
        prediction = scoring_selectors.prediction_get(user=request.user, prediction_id=pk)
        tag = prediction_services.error_tag_set(
            prediction=prediction, actor=request.user, **valid_input(self.ErrorTagInputSerializer, request.data)
        )
        return Response(ErrorTagOutputSerializer(tag).data)

    @extend_schema(request=None, responses={204: OpenApiResponse(description="Removed")})
    def delete(self, request: Request, pk: int) -> Response:
        prediction = scoring_selectors.prediction_get(user=request.user, prediction_id=pk)
        prediction_services.error_tag_clear(prediction=prediction, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ScoringRunExportApi(APIView):
    """A run's results as CSV or JSON with one record per prediction (gold readers only)."""

    @extend_schema(responses={(200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR})
    def get(self, request: Request, pk: int, export_format: str) -> HttpResponse:
        run = scoring_selectors.run_get(user=request.user, run_id=pk)
        return export_response(user=request.user, run=run, export_format=export_format)


def export_response(*, user: Any, run: ScoringRun, export_format: str) -> HttpResponse:
    """The download of a run export, for gold readers (shared by the API and the pages)."""
    scoring_selectors.predictions_of(user=user, run=run)  # the permission check
    if export_format == "csv":
        response = HttpResponse(exports.run_csv(run), content_type="text/csv; charset=utf-8")
    elif export_format == "json":
        body = json.dumps(exports.run_json(run), ensure_ascii=False, indent=1, default=str)
        response = HttpResponse(body, content_type="application/json")
    else:
        raise NotFound("Exports are csv or json.")
    response["Content-Disposition"] = f'attachment; filename="scoring-run-{run.pk}.{export_format}"'
    return response


class ScoringPredictionUploadApi(APIView):
    """Score an uploaded predictions file against a release (managers and verifiers); returns the scored run."""

    class PredictionUploadInputSerializer(RunOptionsInputSerializer):
        format = serializers.CharField(
            help_text="jsonl, tatqa, scitat, finqa or inspect (an Inspect AI eval log of the exported task)"
        )
        file = serializers.FileField(label="Predictions file")
        method = serializers.CharField(
            allow_blank=True, default="", help_text="the method the file comes from, e.g. car, tool"
        )

    parser_classes = [MultiPartParser]

    @extend_schema(request=PredictionUploadInputSerializer, responses={201: ScoringRunDetailOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        selectors.project_get(user=request.user, slug=slug)
        values = valid_input(self.PredictionUploadInputSerializer, request.data)
        release = release_selectors.release_get(user=request.user, release_id=values["release"], slug=slug)
        run = upload_scored(user=request.user, release=release, values=values)
        return Response(ScoringRunDetailOutputSerializer(run).data, status=status.HTTP_201_CREATED)


def upload_scored(*, user: Any, release: Any, values: dict[str, Any]) -> ScoringRun:
    """Score an uploaded predictions file from the upload serializer's values (the API's and the page's)."""
    fields = {name: value for name, value in values.items() if name not in ("release", "file", "judge")}
    judge = scoring_selectors.judge_for(user=user, project=release.project, judge_id=values["judge"])
    file = values["file"]
    return upload_services.upload_run_create(
        release=release, actor=user, name=file.name, content=upload_read(file), judge=judge, **fields
    )


class ScoringOfficialFiguresApi(APIView):
    """The official figures of a gold file and a prediction file (any signed-in user; nothing is stored)."""

    class OfficialFiguresInputSerializer(serializers.Serializer):
        benchmark = serializers.CharField(help_text="tatqa, tatdqa, finqa or scitat")
        gold = serializers.FileField()
        predictions = serializers.FileField()

    class OfficialFiguresOutputSerializer(serializers.Serializer):
        summary = serializers.DictField()
        lines = serializers.ListField(child=serializers.CharField())
        unknown_uids = serializers.ListField(child=serializers.CharField())
        count = serializers.IntegerField()

    parser_classes = [MultiPartParser]

    @extend_schema(request=OfficialFiguresInputSerializer, responses=OfficialFiguresOutputSerializer)
    def post(self, request: Request) -> Response:
        figures = upload_services.official_figures(**valid_input(self.OfficialFiguresInputSerializer, request.data))
        return Response(self.OfficialFiguresOutputSerializer(figures).data)


class ScoringComparisonApi(APIView):
    """Completed runs of a release laid out as the published tables (SciTaT tables 5, 6, 11 and figure 5; the meta
    paper's table 2 and figure 2b), cells keyed by each run's whole configuration: aggregates, every member."""

    class ScoringComparisonOutputSerializer(serializers.Serializer):
        runs = serializers.IntegerField(help_text="completed runs of the release")
        tables = serializers.DictField(
            child=serializers.DictField(),
            help_text="table5, table6, table2, figure2b, figure5, table11: {key, title, caption, stub, column_groups, "
            "columns, rows: [{kind: run|delta|gold, stub, cells: [{value, text, is_best, sd?, ci?}], run_ids}]}",
        )

    @extend_schema(responses=ScoringComparisonOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        release = release_selectors.release_get(user=request.user, release_id=pk)
        return Response(scoring_selectors.comparison(user=request.user, release=release))


class ScoringComparisonFileApi(APIView):
    """One comparison table as CSV or LaTeX (booktabs) to paste into a paper: every member."""

    @extend_schema(
        operation_id="releases_scoring_comparison_file",
        responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/x-tex"): OpenApiTypes.STR},
    )
    def get(self, request: Request, pk: int, table: str, file_format: str) -> HttpResponse:
        release = release_selectors.release_get(user=request.user, release_id=pk)
        return comparison_file_response(user=request.user, release=release, table=table, file_format=file_format)


def comparison_file_response(*, user: Any, release: Any, table: str, file_format: str) -> HttpResponse:
    """The download of one comparison table (the page and the API serve the same file)."""
    name, text = scoring_selectors.comparison_file(user=user, release=release, table=table, file_format=file_format)
    response = HttpResponse(text, content_type=table_formats.FORMATS[file_format])
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
