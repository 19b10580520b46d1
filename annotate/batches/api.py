"""REST API of batches: assign drafts or contexts, fill from papers, the project's gating mode (managers)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.work import batches as batch_flow
from curation import selectors
from curation.errors import NotFound
from curation.serializers import BatchSerializer


class AssignSerializer(serializers.Serializer):
    instance_ids = serializers.ListField(child=serializers.IntegerField(), required=False, default=list)
    context_ids = serializers.ListField(child=serializers.IntegerField(), required=False, default=list)


class FillSerializer(serializers.Serializer):
    per_paper = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, help_text="short contexts per paper; null: all"
    )
    seed = serializers.IntegerField(required=False, default=0)
    paper_ids = serializers.ListField(
        child=serializers.IntegerField(), required=False, default=list, help_text="empty: every paper"
    )


class FillResultSerializer(serializers.Serializer):
    batch = serializers.IntegerField()
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
        batch = selectors.batches_visible_to(request.user).filter(pk=pk).first()
        if batch is None:
            raise NotFound(f"No batch {pk} that you may see.")
        payload = AssignSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        moved = batch_flow.batch_assign(batch_id=pk, actor=request.user, **payload.validated_data)
        return Response({"batch": BatchSerializer(batch).data, "moved": moved})


class BatchFillApi(APIView):
    @extend_schema(request=FillSerializer, responses=FillResultSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Put short contexts without a batch into the batch: all of the papers', or a seeded N per paper."""
        batch = selectors.batches_visible_to(request.user).filter(pk=pk).first()
        if batch is None:
            raise NotFound(f"No batch {pk} that you may see.")
        payload = FillSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        sample = batch_flow.batch_fill_from_papers(batch_id=pk, actor=request.user, **payload.validated_data)
        return Response(sample.as_dict())


class GatingApi(APIView):
    @extend_schema(request=GatingSerializer, responses=GatingSerializer)
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = GatingSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        project = batch_flow.project_gating_set(
            project=project, actor=request.user, gating=payload.validated_data["gating"]
        )
        return Response({"gating": project.gating})
