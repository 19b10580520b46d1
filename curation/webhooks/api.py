"""API of webhooks: register, list, change and remove hooks; reveal a secret; send a test event; list and replay
deliveries. Managers only; lists never carry a secret, which only creation and the reveal return."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation.api_inputs import valid_input
from curation.errors import InvalidInput
from curation.selectors import managed_project_get
from curation.webhooks import selectors as webhook_selectors
from curation.webhooks import services as webhook_services
from curation.webhooks.models import EVENT_NAMES, Webhook, WebhookAttempt, WebhookDelivery


class WebhookSerializer(serializers.ModelSerializer):
    """A hook as lists show it: never its secret."""

    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_NAMES))

    class Meta:
        model = Webhook
        fields = ["id", "url", "events", "description", "is_active", "created_at"]


class WebhookAttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookAttempt
        fields = ["number", "started_at", "status_code", "duration_ms", "response_headers", "error"]


class WebhookDeliverySerializer(serializers.ModelSerializer):
    attempts = WebhookAttemptSerializer(many=True, source="attempt_rows")
    attempt_count = serializers.IntegerField(source="attempts")
    webhook = serializers.IntegerField(source="webhook_id")
    replay_of = serializers.IntegerField(source="replay_of_id", allow_null=True)

    class Meta:
        model = WebhookDelivery
        fields = [
            "id", "uid", "webhook", "event", "state", "attempt_count", "next_attempt_at", "created_at", "finished_at",
            "error", "replay_of", "body", "attempts",
        ]  # fmt: skip


class WebhookListApi(APIView):
    """List the project's webhooks, or register one (its signing secret is shown once). Managers only."""

    class WebhookCreateInputSerializer(serializers.Serializer):
        url = serializers.CharField(max_length=500)
        events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_NAMES), allow_empty=False)
        description = serializers.CharField(max_length=200, required=False, allow_blank=True)

    class WebhookCreatedSerializer(WebhookSerializer):
        secret = serializers.CharField(help_text="Shown only in this answer (and to a manager who reveals it)")

        class Meta(WebhookSerializer.Meta):
            fields = [*WebhookSerializer.Meta.fields, "secret"]

    @extend_schema(responses=WebhookSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = managed_project_get(user=request.user, slug=slug, action="use its webhooks")
        hooks = webhook_selectors.webhooks_of(user=request.user, project=project)
        return Response(WebhookSerializer(hooks, many=True).data)

    @extend_schema(request=WebhookCreateInputSerializer, responses={201: WebhookCreatedSerializer})
    def post(self, request: Request, slug: str) -> Response:
        project = managed_project_get(user=request.user, slug=slug, action="register webhooks")
        payload = valid_input(self.WebhookCreateInputSerializer, request.data)
        hook, _ = webhook_services.webhook_create(project=project, actor=request.user, **payload)
        return Response(self.WebhookCreatedSerializer(hook).data, status=status.HTTP_201_CREATED)


class WebhookDetailApi(APIView):
    """Read, change (URL, events, description, active) or delete one webhook. Managers only."""

    class WebhookUpdateInputSerializer(WebhookListApi.WebhookCreateInputSerializer):  # read partially: any of them
        is_active = serializers.BooleanField(required=False)

    def _hook(self, request: Request, slug: str, pk: int) -> Webhook:
        project = managed_project_get(user=request.user, slug=slug, action="use its webhooks")
        return webhook_selectors.webhook_get(user=request.user, project=project, webhook_id=pk)

    @extend_schema(responses=WebhookSerializer)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        return Response(WebhookSerializer(self._hook(request, slug, pk)).data)

    @extend_schema(request=WebhookUpdateInputSerializer, responses=WebhookSerializer)
    def patch(self, request: Request, slug: str, pk: int) -> Response:
        hook = self._hook(request, slug, pk)
        payload = valid_input(self.WebhookUpdateInputSerializer, request.data, partial=True)
        if not payload:
            raise InvalidInput("Send at least one of url, events, description, is_active.")
        hook = webhook_services.webhook_update(project=hook.project, actor=request.user, webhook_id=hook.pk, **payload)
        return Response(WebhookSerializer(hook).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, slug: str, pk: int) -> Response:
        hook = self._hook(request, slug, pk)
        webhook_services.webhook_delete(project=hook.project, actor=request.user, webhook_id=hook.pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookSecretApi(APIView):
    """Reveal a webhook's signing secret. Managers only."""

    class WebhookSecretSerializer(serializers.Serializer):
        secret = serializers.CharField()

    @extend_schema(request=None, responses=WebhookSecretSerializer, summary="Reveal a hook's secret (managers)")
    def post(self, request: Request, slug: str, pk: int) -> Response:
        project = managed_project_get(user=request.user, slug=slug, action="see webhook secrets")
        secret = webhook_services.webhook_secret_reveal(project=project, actor=request.user, webhook_id=pk)
        return Response(self.WebhookSecretSerializer({"secret": secret}).data)


class WebhookTestApi(APIView):
    """Send a webhook.test event to a webhook now. Managers only."""

    @extend_schema(request=None, responses={202: WebhookDeliverySerializer}, summary="Send a webhook.test event")
    def post(self, request: Request, slug: str, pk: int) -> Response:
        project = managed_project_get(user=request.user, slug=slug, action="send test events")
        delivery = webhook_services.webhook_test_send(project=project, actor=request.user, webhook_id=pk)
        delivery = webhook_selectors.delivery_get(user=request.user, project=project, delivery_id=delivery.pk)
        return Response(WebhookDeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)


class WebhookDeliveryListApi(APIView):
    """The 50 most recent webhook deliveries of the project, with their attempts. Managers only."""

    @extend_schema(
        parameters=[OpenApiParameter("webhook", int, description="Only this hook's deliveries")],
        responses=WebhookDeliverySerializer(many=True),
        summary="The 50 most recent deliveries with their attempts",
    )
    def get(self, request: Request, slug: str) -> Response:
        project = managed_project_get(user=request.user, slug=slug, action="use its webhooks")
        webhook_id = raw = request.query_params.get("webhook")
        if raw is not None:
            try:
                webhook_id = serializers.IntegerField(min_value=1, max_value=2**63 - 1).run_validation(raw)
            except serializers.ValidationError as error:
                raise InvalidInput(f"webhook: {error.detail[0]}", detail={"field": "webhook"}) from None
        deliveries = webhook_selectors.deliveries_of(user=request.user, project=project, webhook_id=webhook_id)
        return Response(WebhookDeliverySerializer(deliveries, many=True).data)


class WebhookDeliveryReplayApi(APIView):
    """Send a webhook delivery again, as a new delivery. Managers only."""

    @extend_schema(request=None, responses={202: WebhookDeliverySerializer}, summary="Send a delivery again")
    def post(self, request: Request, slug: str, pk: int) -> Response:
        project = managed_project_get(user=request.user, slug=slug, action="replay webhook deliveries")
        replay = webhook_services.delivery_replay(project=project, actor=request.user, delivery_id=pk)
        replay = webhook_selectors.delivery_get(user=request.user, project=project, delivery_id=replay.pk)
        return Response(WebhookDeliverySerializer(replay).data, status=status.HTTP_202_ACCEPTED)
