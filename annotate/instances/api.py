"""API of the instance browser: filtered, searched, paginated lists; bulk actions and batching whole papers."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.instances import services as instance_bulk
from annotate.instances.selectors import InstanceFilters, instances_listed
from curation import selectors
from curation.pagination import BoundedLimitOffsetPagination
from curation.serializers import DATABASE_ID_MAX, InstanceSerializer, database_id_field
from curation.services.assignments import instances_assign
from curation.services.instances import instances_retype
from curation.states import Status


class InstanceBrowseApi(APIView):
    """Browse the project's instances you may see, filtered by status, batch, paper, type, annotator or text."""

    pagination_class = BoundedLimitOffsetPagination  # so the schema documents the paged envelope it answers

    class InstanceBrowseFilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=Status.choices, required=False)
        batch = serializers.IntegerField(
            required=False, min_value=0, max_value=DATABASE_ID_MAX, help_text="0: instances in no batch"
        )
        paper = database_id_field(required=False)
        reasoning_type = database_id_field(required=False, help_text="a type or subtype id")
        annotator = serializers.CharField(required=False, help_text="author or assignee username")
        q = serializers.CharField(required=False, help_text="text in the question, answer or rationale")

    @extend_schema(parameters=[InstanceBrowseFilterSerializer], responses=InstanceSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        params = self.InstanceBrowseFilterSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        filters = InstanceFilters(
            status=data.get("status", ""),
            batch=data.get("batch"),
            paper=data.get("paper"),
            reasoning_type=data.get("reasoning_type"),
            annotator=data.get("annotator", ""),
            text=data.get("q", ""),
        )
        instances = instances_listed(
            user=request.user,
            project=project,
            filters=filters,
            rows=lambda rows: selectors.with_output_relations(rows).select_related("assigned_to"),
        )
        paginator = BoundedLimitOffsetPagination()
        page = paginator.paginate_queryset(instances, request, view=self)
        return paginator.get_paginated_response(InstanceSerializer(page, many=True).data)


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
        payload = self.InstanceBulkInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        ids, action = data["instance_ids"], data["action"]
        if action in ("assign", "unassign"):
            assignee = data.get("assignee") if action == "assign" else None
            changed = instances_assign(
                project=project, actor=request.user, instance_ids=ids, assignee_username=assignee
            )
        elif action == "retype":
            changed = instances_retype(
                project=project, actor=request.user, instance_ids=ids, reasoning_type_id=data["reasoning_type"]
            )
        else:
            changed = instance_bulk.instances_discard(
                project=project, actor=request.user, instance_ids=ids, reason=data["reason"]
            )
        return Response(self.InstanceBulkOutputSerializer({"action": action, "changed": changed}).data)


class PaperBatchApi(APIView):
    """Put every short context of the chosen papers, and their drafts, into a planned or open batch. Managers only."""

    class PaperBatchInputSerializer(serializers.Serializer):
        batch = serializers.IntegerField()
        papers = serializers.ListField(child=serializers.IntegerField(), allow_empty=False)

    class PaperBatchOutputSerializer(serializers.Serializer):
        contexts = serializers.IntegerField()
        drafts = serializers.IntegerField()

    @extend_schema(request=PaperBatchInputSerializer, responses=PaperBatchOutputSerializer)
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = self.PaperBatchInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        moved = instance_bulk.batch_add_papers(
            project=project,
            actor=request.user,
            batch_id=payload.validated_data["batch"],
            paper_ids=payload.validated_data["papers"],
        )
        return Response(self.PaperBatchOutputSerializer(moved).data)
