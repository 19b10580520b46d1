"""API of the instance browser: filtered, searched, paginated lists; bulk actions and batching whole papers."""

from __future__ import annotations

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from django_filters.utils import translate_validation
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.instances import services as instance_bulk
from annotate.instances.filters import InstanceFilterSet
from annotate.instances.selectors import instances_filtered
from curation import selectors
from curation.api_inputs import valid_input
from curation.batches.services import batch_add_papers
from curation.models import Instance
from curation.pagination import BoundedLimitOffsetPagination
from curation.serializers import InstanceSerializer, database_id_field


class InstanceBrowseApi(ListAPIView):
    """Browse the project's instances you may see, filtered by status, batch, paper, type, annotator or text."""

    serializer_class = InstanceSerializer
    pagination_class = BoundedLimitOffsetPagination
    filter_backends = [DjangoFilterBackend]
    filterset_class = InstanceFilterSet

    def get_queryset(self) -> QuerySet[Instance]:
        # The schema generator's rows; a request's come from filter_queryset (the page's own filters, for the viewer).
        return Instance.objects.none()

    def filter_queryset(self, queryset: QuerySet[Instance]) -> QuerySet[Instance]:
        """The page's filters for this viewer (`instances_filtered`: the panel's k is a manager's filter only)."""
        project = selectors.project_get(user=self.request.user, slug=self.kwargs["slug"])
        filters = instances_filtered(user=self.request.user, project=project, data=self.request.query_params)
        if not filters.is_valid():
            raise translate_validation(filters.errors)
        return selectors.with_output_relations(filters.qs).select_related("assigned_to")


class InstanceBulkApi(APIView):
    """Assign, unassign, retype or discard many instances of the project at once. Managers only."""

    class InstanceBulkInputSerializer(serializers.Serializer):
        action = serializers.ChoiceField(choices=["assign", "unassign", "retype", "discard"])
        instance_ids = serializers.ListField(child=database_id_field(), allow_empty=False)
        assignee = serializers.CharField(required=False, help_text="username, for assign")
        reasoning_type = database_id_field(required=False, help_text="reasoning type id, for retype")
        reason = serializers.CharField(required=False, help_text="why, for discard")

        def validate(self, data: dict) -> dict:
            needed = {"assign": "assignee", "retype": "reasoning_type", "discard": "reason"}.get(data["action"])
            if needed and not data.get(needed):
                raise serializers.ValidationError({needed: f"{data['action']} needs {needed}."})
            return data

    class InstanceBulkOutputSerializer(serializers.Serializer):
        action = serializers.CharField()
        changed = serializers.IntegerField()

    @extend_schema(request=InstanceBulkInputSerializer, responses=InstanceBulkOutputSerializer)
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        data = valid_input(self.InstanceBulkInputSerializer, request.data)
        changed = instance_bulk.instances_bulk(project=project, actor=request.user, **data)
        return Response(self.InstanceBulkOutputSerializer({"action": data["action"], "changed": changed}).data)


class PaperBatchApi(APIView):
    """Put every short context of the chosen papers, and their drafts, into a planned or open batch. Managers only."""

    class PaperBatchInputSerializer(serializers.Serializer):
        batch = serializers.IntegerField(source="batch_id")
        papers = serializers.ListField(child=serializers.IntegerField(), allow_empty=False, source="paper_ids")

    class PaperBatchOutputSerializer(serializers.Serializer):
        contexts = serializers.IntegerField()
        drafts = serializers.IntegerField()

    @extend_schema(request=PaperBatchInputSerializer, responses=PaperBatchOutputSerializer)
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(self.PaperBatchInputSerializer, request.data)
        moved = batch_add_papers(project=project, actor=request.user, **payload)
        return Response(self.PaperBatchOutputSerializer(moved).data)
