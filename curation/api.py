"""Core REST API: projects, members, taxonomy, batches, papers, instances (edit, transition, history)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation import selectors, serializers
from curation.api_inputs import valid_input
from curation.batches import services as batch_services
from curation.members import selectors as member_selectors
from curation.models import Membership, ReasoningType
from curation.papers import selectors as paper_selectors
from curation.services import instances as instance_services
from curation.services import lifecycle
from curation.services import projects as project_services
from curation.states import Role


class TokenObtainApi(ObtainAuthToken):
    """Exchange your username and password for your API token (then send `Authorization: Token <token>`)."""


class ProjectListApi(APIView):
    """List the projects you belong to, with your roles in each, or create a project (you become its manager)."""

    @extend_schema(responses=serializers.ProjectSerializer(many=True))
    def get(self, request: Request) -> Response:
        roles: dict[int, set[str]] = {}
        for project_id, role in Membership.objects.filter(user=request.user).values_list("project_id", "role"):
            roles.setdefault(project_id, set()).add(role)
        projects = selectors.projects_visible_to(request.user)
        return Response(serializers.ProjectSerializer(projects, many=True, context={"roles": roles}).data)

    @extend_schema(request=serializers.ProjectCreateSerializer, responses={201: serializers.ProjectSerializer})
    def post(self, request: Request) -> Response:
        payload = valid_input(serializers.ProjectCreateSerializer, request.data)
        project = project_services.project_create(creator=request.user, **payload)
        context = {"roles": {project.pk: {Role.MANAGER.value}}}
        return Response(serializers.ProjectSerializer(project, context=context).data, status=status.HTTP_201_CREATED)


class ProjectDetailApi(APIView):
    """One project you belong to, with your roles in it."""

    @extend_schema(responses=serializers.ProjectSerializer)
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        roles = {project.pk: selectors.roles_of(user=request.user, project=project)}
        return Response(serializers.ProjectSerializer(project, context={"roles": roles}).data)


class MembershipListApi(APIView):
    """List a project's members and their roles, or add an existing user to it. Managers only."""

    @extend_schema(responses=serializers.MembershipSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        members = member_selectors.members_of(user=request.user, project=project)
        return Response(serializers.MembershipSerializer(members, many=True).data)

    @extend_schema(request=serializers.MembershipCreateSerializer, responses={201: serializers.MembershipSerializer})
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(serializers.MembershipCreateSerializer, request.data)
        membership = project_services.membership_add(project=project, actor=request.user, **payload)
        return Response(serializers.MembershipSerializer(membership).data, status=status.HTTP_201_CREATED)


class ReasoningTypeListApi(APIView):
    """The project's reasoning-type taxonomy (types and subtypes) with their target shares."""

    @extend_schema(responses=serializers.ReasoningTypeSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        types = selectors.reasoning_types_of(user=request.user, project=project)
        return Response(serializers.ReasoningTypeSerializer(types, many=True).data)


class ReasoningTypeDetailApi(APIView):
    """Change a reasoning type's name, description or target share (named by its code). Managers only."""

    @extend_schema(request=serializers.ReasoningTypeUpdateSerializer, responses=serializers.ReasoningTypeSerializer)
    def patch(self, request: Request, slug: str, code: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        reasoning_type = get_object_or_404(ReasoningType, project=project, code=code)
        payload = valid_input(serializers.ReasoningTypeUpdateSerializer, request.data)
        updated = project_services.reasoning_type_update(reasoning_type=reasoning_type, actor=request.user, **payload)
        return Response(serializers.ReasoningTypeSerializer(updated).data)


class BatchListApi(APIView):
    """List the batches you may see (`?project=` to narrow), or create a batch in a project you manage."""

    @extend_schema(responses=serializers.BatchSerializer(many=True))
    def get(self, request: Request) -> Response:
        batches = selectors.batches_visible_to(request.user).select_related("project")
        slug = request.query_params.get("project")
        if slug:
            batches = batches.filter(project__slug=slug)
        return Response(serializers.BatchSerializer(batches, many=True).data)

    @extend_schema(request=serializers.BatchCreateSerializer, responses={201: serializers.BatchSerializer})
    def post(self, request: Request) -> Response:
        payload = valid_input(serializers.BatchCreateSerializer, request.data)
        project = selectors.project_get(user=request.user, slug=payload["project"])
        batch = batch_services.batch_create(project=project, actor=request.user, name=payload["name"])
        return Response(serializers.BatchSerializer(batch).data, status=status.HTTP_201_CREATED)


class BatchOpenApi(APIView):
    """Open a batch: its drafts enter the annotators' queue. Managers only."""

    @extend_schema(request=None, responses=serializers.BatchSerializer)
    def post(self, request: Request, pk: int) -> Response:
        batch = selectors.batch_get(user=request.user, batch_id=pk)
        batch = batch_services.batch_open(batch_id=batch.pk, actor=request.user)
        return Response(serializers.BatchSerializer(batch).data)


class PaperListApi(generics.ListAPIView):
    """List the papers you may see (`?project=` to narrow)."""

    serializer_class = serializers.PaperSerializer

    def get_queryset(self):
        papers = selectors.papers_visible_to(self.request.user).select_related("project")
        slug = self.request.query_params.get("project")
        return papers.filter(project__slug=slug) if slug else papers


class PaperDetailApi(APIView):
    """One paper you may see, with its tables, paragraphs and which tables each paragraph mentions."""

    @extend_schema(responses=serializers.PaperDetailSerializer)
    def get(self, request: Request, pk: int) -> Response:
        paper = paper_selectors.paper_get(user=request.user, project=None, paper_id=pk)
        return Response(serializers.PaperDetailSerializer(paper).data)


class InstanceListApi(generics.ListAPIView):
    """List the instances you may see, in id order (`?project=` and `?status=` to narrow)."""

    serializer_class = serializers.InstanceSerializer

    def get_queryset(self):
        instances = selectors.with_output_relations(selectors.instances_visible_to(self.request.user))
        slug = self.request.query_params.get("project")
        if slug:
            instances = instances.filter(project__slug=slug)
        wanted = self.request.query_params.get("status")
        # In id order (the pk index): the model's ordering sorts by project name, which sorts every visible row
        # to answer one page.
        return (instances.filter(status=wanted) if wanted else instances).order_by("id")


class InstanceDetailApi(APIView):
    """Read one instance you may see, or edit its fields (with `expected_version`) as your role allows."""

    @extend_schema(responses=serializers.InstanceSerializer)
    def get(self, request: Request, pk: int) -> Response:
        instance = selectors.instance_get(user=request.user, instance_id=pk)
        return Response(serializers.InstanceSerializer(instance).data)

    @extend_schema(request=serializers.InstanceEditSerializer, responses=serializers.InstanceSerializer)
    def patch(self, request: Request, pk: int) -> Response:
        selectors.instance_get(user=request.user, instance_id=pk)
        fields = valid_input(serializers.InstanceEditSerializer, request.data)
        expected_version = fields.pop("expected_version")
        instance = instance_services.instance_edit(
            instance_id=pk, actor=request.user, expected_version=expected_version, fields=fields
        )
        return Response(serializers.InstanceSerializer(instance).data)


class InstanceTransitionApi(APIView):
    """Any move of the transition table, through the same guards and effects as the step pages and their API."""

    @extend_schema(request=serializers.TransitionSerializer, responses=serializers.InstanceSerializer)
    def post(self, request: Request, pk: int) -> Response:
        selectors.instance_get(user=request.user, instance_id=pk)
        move = valid_input(serializers.TransitionSerializer, request.data)
        details = {"comments": move.pop("comments", []), "message": move.pop("message", "")}
        instance = lifecycle.instance_transition(instance_id=pk, actor=request.user, details=details, **move)
        return Response(serializers.InstanceSerializer(instance).data)


class InstanceHistoryApi(APIView):
    """An instance's history: every revision of its fields and every status change, with who and when."""

    @extend_schema(responses=serializers.HistorySerializer)
    def get(self, request: Request, pk: int) -> Response:
        history = selectors.instance_history_get(user=request.user, instance_id=pk)
        return Response(serializers.HistorySerializer(history).data)
