"""API of hidden gold: the managers' doors (a probe is worked on through the workspace API, as a draft)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.quality import selectors as quality_selectors
from annotate.quality import services as quality_services
from curation import selectors
from curation.api_inputs import valid_input


class QualitySettingsSerializer(serializers.Serializer):
    """Hidden gold's settings, labelled as the dashboard's form names them (its refusals say the label)."""

    gold_every = serializers.IntegerField(min_value=0, max_value=1000, required=False, label="1 in N claims (0: off)")
    gold_threshold = serializers.FloatField(min_value=0, max_value=1, required=False, label="Alert below EM")
    gold_min_sample = serializers.IntegerField(min_value=1, max_value=10_000, required=False, label="Minimum sample")
    is_pause_on_fail = serializers.BooleanField(required=False)


class QualitySettingsApi(APIView):
    @extend_schema(responses=QualitySettingsSerializer)
    def get(self, request: Request, slug: str) -> Response:
        """The project's hidden-gold settings (managers)."""
        project = selectors.project_get(user=request.user, slug=slug)
        return Response(
            QualitySettingsSerializer(quality_selectors.quality_settings_get(user=request.user, project=project)).data
        )

    @extend_schema(request=QualitySettingsSerializer, responses=QualitySettingsSerializer)
    def patch(self, request: Request, slug: str) -> Response:
        """Change hidden gold: how often, the alert threshold and sample, and whether to pause (managers)."""
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(QualitySettingsSerializer, request.data)
        quality = quality_services.quality_configure(project=project, actor=request.user, **payload)
        return Response(QualitySettingsSerializer(quality).data)


class GoldFiguresApi(APIView):
    class GoldFigureOutputSerializer(serializers.Serializer):
        user_id = serializers.IntegerField()
        user = serializers.CharField()
        n = serializers.IntegerField(help_text="Scored gold items since the annotator last qualified (or was restored)")
        total = serializers.IntegerField(help_text="Scored gold items in all")
        em = serializers.FloatField(allow_null=True)
        low = serializers.FloatField(help_text="95 % Wilson interval, low end")
        high = serializers.FloatField(help_text="95 % Wilson interval, high end")
        is_below = serializers.BooleanField(help_text="Below the threshold over the minimum sample: the alert")
        is_paused = serializers.BooleanField()

    @extend_schema(responses=GoldFigureOutputSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        """Running hidden-gold EM per annotator (managers)."""
        project = selectors.project_get(user=request.user, slug=slug)
        data = quality_selectors.gold_figures(user=request.user, project=project)
        return Response(self.GoldFigureOutputSerializer(data["gold_rows"], many=True).data)


class RestoreApi(APIView):
    class RestoreInputSerializer(serializers.Serializer):
        user = serializers.IntegerField(help_text="The paused annotator's user id")
        reason = serializers.CharField(max_length=500)

    class RestoreOutputSerializer(serializers.Serializer):
        user = serializers.IntegerField(source="user_id")
        action = serializers.CharField()
        reason = serializers.CharField()
        created_at = serializers.DateTimeField()

    @extend_schema(request=RestoreInputSerializer, responses=RestoreOutputSerializer)
    def post(self, request: Request, slug: str) -> Response:
        """Reverse a hidden-gold pause, with a reason (managers; audited)."""
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(self.RestoreInputSerializer, request.data)
        decision = quality_services.annotator_restore(
            project=project, actor=request.user, user_id=payload["user"], reason=payload["reason"]
        )
        return Response(self.RestoreOutputSerializer(decision).data)
