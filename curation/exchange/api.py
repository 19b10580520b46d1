"""API for drafts imported from files and the work-in-progress export (the same services as the pages)."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation import selectors
from curation.api_inputs import valid_input
from curation.exchange.draft_import import drafts_import
from curation.exchange.work_export import FORMATS, work_export
from curation.serializers import database_id_field
from curation.states import Status
from curation.uploads import upload_read


class DraftImportApi(APIView):
    """Import drafts written elsewhere (JSONL or CSV) onto the project's contexts, as queued drafts. Managers only."""

    parser_classes = [MultiPartParser]

    class DraftImportInputSerializer(serializers.Serializer):
        file = serializers.FileField()
        file_format = serializers.ChoiceField(choices=["jsonl", "csv"])
        batch = serializers.IntegerField(required=False, help_text="default: each context's batch")

    class DraftImportOutputSerializer(serializers.Serializer):
        created = serializers.IntegerField()
        instance_ids = serializers.ListField(child=serializers.IntegerField())

    @extend_schema(request=DraftImportInputSerializer, responses={201: DraftImportOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(self.DraftImportInputSerializer, request.data)
        upload = payload["file"]
        created = drafts_import(
            project=project,
            actor=request.user,
            content=upload_read(upload),
            file_format=payload["file_format"],
            source_name=upload.name,
            batch_id=payload.get("batch"),
        )
        data = {"created": len(created), "instance_ids": [i.pk for i in created]}
        return Response(self.DraftImportOutputSerializer(data).data, status=status.HTTP_201_CREATED)


class WorkExportApi(APIView):
    """Download the project's work in progress (any status, not a release) as JSONL or CSV."""

    class WorkExportFilterSerializer(serializers.Serializer):
        # Not `format`: DRF reads that query parameter to pick a renderer.
        file_format = serializers.ChoiceField(choices=list(FORMATS))
        status = serializers.ListField(child=serializers.ChoiceField(choices=Status.choices), required=False)
        batch = database_id_field(required=False)

    @extend_schema(
        parameters=[WorkExportFilterSerializer],
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(OpenApiTypes.STR, description="JSONL; not a release"),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV; not a release"),
        },
    )
    def get(self, request: Request, slug: str) -> StreamingHttpResponse:
        project = selectors.project_get(user=request.user, slug=slug)
        params = valid_input(
            self.WorkExportFilterSerializer,
            {**request.query_params.dict(), "status": request.query_params.getlist("status")},
        )
        export = work_export(
            user=request.user,
            project=project,
            file_format=params["file_format"],
            statuses=params.get("status", []),
            batch_id=params.get("batch"),
        )
        response = StreamingHttpResponse(export.lines, content_type=export.content_type)
        response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
        return response
