"""REST API of releases (list, cut, detail, statistics, items, exports, downloads) and dataset imports."""

from __future__ import annotations

from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation import selectors
from curation.api_inputs import valid_input
from curation.api_parsers import StrictJSONParser
from curation.datasets import jobs as dataset_jobs
from curation.datasets.formats import FORMATS
from curation.datasets.models import ImportJob, ImportRecord
from curation.exports import EXPORT_FORMATS
from curation.exports.statistics import presented
from curation.releases import selectors as release_selectors
from curation.releases.models import ExportArtifact, Release, ReleaseCut, ReleaseItem
from curation.releases.services import cut as cut_services
from curation.releases.services import exports as export_services
from curation.serializers import database_id_field
from curation.uploads import upload_read


class ReleaseSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    batches = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    supersedes = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True)

    class Meta:
        model = Release
        fields = [
            "id",
            "project",
            "name",
            "version",
            "description",
            "changelog",
            "license",
            "citation",
            "attribution",
            "notes",
            "content_hash",
            "item_count",
            "split_seed",
            "split_ratios",
            "batches",
            "supersedes",
            "created_by",
            "created_at",
        ]


class ReleaseDetailSerializer(ReleaseSerializer):
    class Meta(ReleaseSerializer.Meta):
        fields = [*ReleaseSerializer.Meta.fields, "statistics"]


class ReleaseCutSerializer(serializers.Serializer):
    name = serializers.SlugField(max_length=100)
    batch_ids = serializers.ListField(child=database_id_field(), required=False, default=list)
    batches = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=2000,
        help_text="\"all\" (every batch with validated instances) or the project's batch numbers (a batch's `number`) "
        'and ranges, e.g. "3-7, 12"; with batch_ids or instead of them',
    )
    description = serializers.CharField(required=False, allow_blank=True, default="")
    changelog = serializers.CharField(required=False, allow_blank=True, default="")
    license = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    citation = serializers.CharField(required=False, allow_blank=True, default="")
    split_seed = serializers.IntegerField(required=False, allow_null=True, default=None)
    split_ratios = serializers.DictField(child=serializers.FloatField(min_value=0), required=False, default=None)
    include_withheld = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Also release what the cut withholds by default (the qualification exam's gold pool): its answers "
        "become public with the release",
    )


class ReleaseItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReleaseItem
        fields = ["position", "uid", "split", "data"]


class ExportArtifactSerializer(serializers.ModelSerializer):
    progress = serializers.FloatField(read_only=True)
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = ExportArtifact
        fields = [
            "format",
            "state",
            "items_done",
            "items_total",
            "progress",
            "sha256",
            "size_bytes",
            "error",
            "finished_at",
            "download_url",
        ]

    def get_download_url(self, artifact: ExportArtifact) -> str | None:
        if artifact.state != ExportArtifact.State.READY:
            return None
        return f"/api/releases/{artifact.release_id}/exports/{artifact.format}/download/"


class ExportRequestSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=sorted(EXPORT_FORMATS))


class ImportJobSerializer(serializers.ModelSerializer):
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    percent = serializers.IntegerField(read_only=True)
    url = serializers.SerializerMethodField()

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "url",
            "format",
            "source_name",
            "source_sha256",
            "source_bytes",
            "as_release",
            "state",
            "questions_done",
            "questions_total",
            "percent",
            "record",
            "error",
            "attempts",
            "requested_by",
            "created_at",
            "finished_at",
        ]

    def get_url(self, job: ImportJob) -> str:
        return reverse("api-import-job", args=[job.pk])


class ImportRecordSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = ImportRecord
        fields = [
            "id",
            "format",
            "source_name",
            "source_sha256",
            "source_bytes",
            "batch",
            "counts",
            "notes",
            "created_by",
            "created_at",
        ]


class ImportUploadSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS)
    file = serializers.FileField()
    as_release = serializers.SlugField(required=False, allow_blank=True, default="")


class ImportResultSerializer(serializers.Serializer):
    import_id = serializers.IntegerField()
    format = serializers.CharField()
    source = serializers.CharField()
    sha256 = serializers.CharField()
    created = serializers.BooleanField()
    counts = serializers.DictField(help_text="questions, validated, drafts (no answer in the file), contexts, …")
    summary = serializers.CharField(help_text="The counts in words, as the page and the command say them")
    notes = serializers.ListField(child=serializers.CharField())
    release = serializers.DictField(allow_null=True)


class ReleaseListApi(APIView):
    """List the project's releases, or cut a new one from validated batches (managers)."""

    @extend_schema(responses=ReleaseSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        releases = release_selectors.releases_of(user=request.user, project=project).prefetch_related("batches")
        return Response(ReleaseSerializer(releases, many=True).data)

    @extend_schema(
        request=ReleaseCutSerializer,
        responses={201: ReleaseDetailSerializer, 202: OpenApiResponse(description="Queued on a worker")},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(ReleaseCutSerializer, request.data)
        result = cut_services.release_cut_request(project=project, actor=request.user, **payload)
        if isinstance(result, ReleaseCut):  # big: queued on a worker; the releases page shows its progress
            return Response(
                {"cut": result.pk, "name": result.name, "state": result.state, "items_total": result.items_total},
                status=status.HTTP_202_ACCEPTED,
            )
        return Response(ReleaseDetailSerializer(result).data, status=status.HTTP_201_CREATED)


class ReleaseDetailApi(APIView):
    """One release you may see: its metadata, content hash, statistics and exports."""

    @extend_schema(responses=ReleaseDetailSerializer)
    def get(self, request: Request, pk: int) -> Response:
        release = release_selectors.release_get(user=request.user, release_id=pk)
        return Response(ReleaseDetailSerializer(release).data)


class ReleaseStatisticsApi(APIView):
    """A release's statistics: SciTaT tables 2–4 and TAT-QA-style counts."""

    @extend_schema(responses=OpenApiResponse(description="SciTaT tables 2–4 and TAT-QA-style counts"))
    def get(self, request: Request, pk: int) -> Response:
        release = release_selectors.release_get(user=request.user, release_id=pk)
        return Response({"release": release.name, "version": release.version, **presented(release.statistics)})


class ReleaseItemListApi(generics.ListAPIView):
    """The frozen items of a release, in release order, paged as every list is (`?limit=`, `?offset=`)."""

    serializer_class = ReleaseItemSerializer

    def get_queryset(self):
        release = release_selectors.release_gold_get(user=self.request.user, release_id=self.kwargs["pk"])
        return ReleaseItem.objects.filter(release=release).order_by("position")


class ReleaseExportListApi(APIView):
    """List a release's exports, or ask for one in a format (built on a worker when not ready yet)."""

    @extend_schema(responses=ExportArtifactSerializer(many=True))
    def get(self, request: Request, pk: int) -> Response:
        release = release_selectors.release_get(user=request.user, release_id=pk)
        artifacts = release_selectors.exports_of(release=release).values()
        return Response(ExportArtifactSerializer(artifacts, many=True).data)

    @extend_schema(
        request=ExportRequestSerializer,
        responses={200: ExportArtifactSerializer, 202: ExportArtifactSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        release = release_selectors.release_gold_get(user=request.user, release_id=pk)
        payload = valid_input(ExportRequestSerializer, request.data)
        artifact = export_services.export_request(release=release, actor=request.user, format=payload["format"])
        code = status.HTTP_200_OK if artifact.state == ExportArtifact.State.READY else status.HTTP_202_ACCEPTED
        return Response(ExportArtifactSerializer(artifact).data, status=code)


class ReleaseExportDownloadApi(APIView):
    """Download a release's export zip (data, dataset card, checksums) in one format."""

    @extend_schema(responses={(200, "application/zip"): OpenApiResponse(description="The export zip")})
    def get(self, request: Request, pk: int, export_format: str) -> FileResponse:
        # Not named `format`: DRF reserves that URL keyword for format suffixes.
        release = release_selectors.release_gold_get(user=request.user, release_id=pk)
        path = export_services.export_file(release=release, format=export_format)
        return FileResponse(path.open("rb"), as_attachment=True, filename=f"{release.label}-{export_format}.zip")


class ImportListApi(APIView):
    """List the project's dataset imports, or import a TAT-QA, TAT-DQA, FinQA or SciTaT file. Managers only."""

    parser_classes = [MultiPartParser, FormParser, StrictJSONParser]

    @extend_schema(responses=ImportRecordSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        imports = release_selectors.imports_visible_to(user=request.user, project=project)
        return Response(ImportRecordSerializer(imports, many=True).data)

    @extend_schema(
        request={"multipart/form-data": ImportUploadSerializer},
        responses={
            201: ImportResultSerializer,
            200: ImportResultSerializer,
            202: OpenApiResponse(ImportJobSerializer, description="A big file: queued on a worker (follow `url`)"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(ImportUploadSerializer, request.data)
        upload = payload["file"]
        result = dataset_jobs.dataset_import_request(
            project=project,
            actor=request.user,
            format=payload["format"],
            source_name=upload.name,
            content=upload_read(upload),
            as_release=payload["as_release"],
        )
        if isinstance(result, ImportJob):
            return Response(ImportJobSerializer(result).data, status=status.HTTP_202_ACCEPTED)
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(result.as_dict(), status=code)


class ImportJobDetailApi(APIView):
    """A big import on a worker: its state and progress, and the import it became once done (managers only)."""

    @extend_schema(responses=ImportJobSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(ImportJobSerializer(release_selectors.import_job_get(user=request.user, job_id=pk)).data)

    @extend_schema(
        responses={204: None, 409: OpenApiResponse(description="Not failed: only a failed job is dismissed")}
    )
    def delete(self, request: Request, pk: int) -> Response:
        job = release_selectors.import_job_get(user=request.user, job_id=pk)
        dataset_jobs.import_job_dismiss(job=job, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
