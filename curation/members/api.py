"""API of member management: create an account with a one-time password, change a member's role, remove one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation import selectors
from curation.api_inputs import valid_input
from curation.members import services as member_services
from curation.serializers import MembershipSerializer
from curation.states import Role


class MemberCreateApi(APIView):
    """Create a new user account as a member of the project; its first password is shown once. Managers only."""

    class MemberCreateInputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        email = serializers.EmailField(required=False, allow_blank=True)
        role = serializers.ChoiceField(choices=Role.choices)

    class MemberCreateOutputSerializer(serializers.Serializer):
        member = MembershipSerializer()
        initial_password = serializers.CharField(help_text="Shown once; only its hash is stored")

    @extend_schema(request=MemberCreateInputSerializer, responses={201: MemberCreateOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(self.MemberCreateInputSerializer, request.data)
        membership, password = member_services.member_create(project=project, actor=request.user, **payload)
        data = self.MemberCreateOutputSerializer({"member": membership, "initial_password": password}).data
        return Response(data, status=status.HTTP_201_CREATED)


class MembershipDetailApi(APIView):
    """Change a member's role, or remove the member from the project. Managers only."""

    class MemberRoleSerializer(serializers.Serializer):
        role = serializers.ChoiceField(choices=Role.choices)

    @extend_schema(request=MemberRoleSerializer, responses=MembershipSerializer)
    def patch(self, request: Request, slug: str, pk: int) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(self.MemberRoleSerializer, request.data)
        membership = member_services.membership_set_role(
            project=project, actor=request.user, membership_id=pk, role=payload["role"]
        )
        return Response(MembershipSerializer(membership).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, slug: str, pk: int) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        member_services.membership_remove(project=project, actor=request.user, membership_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
