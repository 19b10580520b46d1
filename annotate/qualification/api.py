"""REST API of the qualification exam and the guidelines (interfaces only: services and selectors decide)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.qualification import guidelines as guidelines_services
from annotate.qualification import selectors, services
from annotate.qualification.models import Guidelines, QualificationAttempt, QualificationSettings
from annotate.rendering import render_markdown
from curation.api_inputs import valid_input
from curation.models import Project, Table
from curation.selectors import project_get, roles_of
from curation.states import Role


class TableOutput(serializers.ModelSerializer):
    class Meta:
        model = Table
        fields = ["id", "order", "number", "label", "caption", "cells", "grid", "spans"]


class ParagraphOutput(serializers.Serializer):
    id = serializers.IntegerField()
    section = serializers.CharField()
    text = serializers.CharField()


class ExamItemOutput(serializers.Serializer):
    instance_id = serializers.IntegerField()
    number = serializers.IntegerField()
    question = serializers.CharField()
    paper_title = serializers.CharField()
    paragraphs = ParagraphOutput(many=True)
    tables = TableOutput(many=True)


class AttemptSummaryOutput(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    item_count = serializers.SerializerMethodField()
    seconds_taken = serializers.SerializerMethodField()

    class Meta:
        model = QualificationAttempt
        fields = [
            "id",
            "project",
            "username",
            "started_at",
            "deadline_at",
            "submitted_at",
            "seconds_taken",
            "item_count",
            "score",
            "passed",
        ]

    def get_item_count(self, attempt: QualificationAttempt) -> int:
        return len(attempt.item_ids)

    def get_seconds_taken(self, attempt: QualificationAttempt) -> float | None:
        return None if attempt.seconds_taken is None else round(attempt.seconds_taken, 1)


def attempt_detail(attempt: QualificationAttempt) -> dict[str, Any]:
    """An attempt with its items; results (gold answers) only once it is submitted."""
    data = dict(AttemptSummaryOutput(attempt).data)
    data["answers"] = attempt.answers or {}
    data["items"] = ExamItemOutput(selectors.gold_items_shown(attempt.item_ids), many=True).data
    data["results"] = attempt.results if attempt.submitted_at else None  # as scored (`services._item_result`)
    return data


def _ranged(field: type[serializers.Field], low: float, high: float, said: str, **options: Any) -> serializers.Field:
    """An optional number field whose refusal of a value out of range says the whole range (`said`), both ends: the
    page shows it beside its field."""
    refusal = dict.fromkeys(("min_value", "max_value"), said)
    return field(required=False, min_value=low, max_value=high, error_messages=refusal, **options)


class QualificationSettingsApi(APIView):
    """Read the project's exam settings (managers also see its items), or change them (managers)."""

    class SettingsInput(serializers.Serializer):
        threshold = _ranged(serializers.FloatField, 0.01, 1.0, "Give a share between 0.01 and 1, e.g. 0.95.")
        size = _ranged(
            serializers.IntegerField, 1, services.MAX_EXAM_SIZE, f"From 1 to {services.MAX_EXAM_SIZE} items."
        )
        time_limit_minutes = _ranged(
            serializers.IntegerField, 1, 1440, "From 1 to 1,440 minutes; empty for none.", allow_null=True
        )
        retry_delay_hours = _ranged(serializers.IntegerField, 0, 24 * 365, "From 0 to 8,760 hours (a year).")
        instance_ids = serializers.ListField(child=serializers.IntegerField(), required=False)
        auto_pick = serializers.BooleanField(required=False, default=False)

    @staticmethod
    def output(exam: QualificationSettings, project: Project, user) -> dict[str, Any]:
        links = list(exam.item_links.select_related("instance").order_by("order")) if exam.pk else []
        data: dict[str, Any] = {
            "project": project.slug,
            "threshold": exam.threshold,
            "size": exam.size,
            "time_limit_minutes": exam.time_limit_minutes,
            "retry_delay_hours": exam.retry_delay_hours,
            "item_count": len(links),
            "is_configured": bool(links),
        }
        roles = roles_of(user=user, project=project)
        if Role.MANAGER in roles:
            data["items"] = [
                {
                    "instance_id": link.instance_id,
                    "order": link.order,
                    "question": link.instance.question,
                    "answer": link.instance.answer,
                }
                for link in links
            ]
        if Role.ANNOTATOR in roles:
            status_ = selectors.candidate_status(user=user, project=project)
            membership = status_["membership"]
            data["me"] = {
                "is_qualified": bool(membership and membership.is_qualified),
                "open_attempt": status_["open_attempt"].pk if status_["open_attempt"] else None,
                "retry_at": status_["retry_at"],
                "attempts": len(status_["past_attempts"]),
            }
        return data

    @extend_schema(responses=dict)
    def get(self, request: Request, slug: str) -> Response:
        project = project_get(user=request.user, slug=slug)
        exam = selectors.exam_settings_get(user=request.user, project=project)
        return Response(self.output(exam, project, request.user))

    @extend_schema(request=SettingsInput, responses=dict)
    def put(self, request: Request, slug: str) -> Response:
        project = project_get(user=request.user, slug=slug)
        values = valid_input(self.SettingsInput, request.data)
        return Response(
            self.output(exam_configure(project=project, actor=request.user, values=values), project, request.user)
        )


def exam_configure(*, project: Project, actor: Any, values: dict[str, Any]) -> QualificationSettings:
    """`qualification_configure` given the settings input (the API's and the set-up page's): a number left out is
    unchanged (a null time limit: none), and the items too unless they are given or auto-picked."""
    values = dict(values)
    auto = values.pop("auto_pick")
    instance_ids = values.pop("instance_ids", None)
    values.setdefault("time_limit_minutes", services.UNSET)
    return services.qualification_configure(
        project=project, actor=actor, instance_ids=instance_ids, keep_items=instance_ids is None and not auto, **values
    )


class AttemptListApi(APIView):
    """List exam attempts (annotators their own, managers all), or start (or resume) your own attempt."""

    @extend_schema(responses=AttemptSummaryOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = project_get(user=request.user, slug=slug)
        attempts = selectors.attempts_visible_to(user=request.user, project=project)
        return Response(AttemptSummaryOutput(attempts, many=True).data)

    @extend_schema(request=None, responses={201: dict, 200: dict})
    def post(self, request: Request, slug: str) -> Response:
        project = project_get(user=request.user, slug=slug)
        before = QualificationAttempt.objects.filter(project=project, user=request.user, submitted_at=None).first()
        attempt = services.attempt_start(project=project, user=request.user)
        code = status.HTTP_200_OK if before is not None and before.pk == attempt.pk else status.HTTP_201_CREATED
        return Response(attempt_detail(attempt), status=code)


class AttemptDetailApi(APIView):
    """Read your exam attempt (its items, answers and deadline), or save answers while it is open."""

    class AnswersInput(serializers.Serializer):
        answers = serializers.DictField()

    @extend_schema(responses=dict)
    def get(self, request: Request, pk: int) -> Response:
        attempt = selectors.attempt_get(user=request.user, attempt_id=pk)
        if services.attempts_close_expired(attempts=[attempt]):  # a reader never sees an expired attempt as open
            attempt.refresh_from_db()
        return Response(attempt_detail(attempt))

    @extend_schema(request=AnswersInput, responses=dict)
    def patch(self, request: Request, pk: int) -> Response:
        payload = valid_input(self.AnswersInput, request.data)
        attempt = services.attempt_save(attempt_id=pk, user=request.user, answers=payload["answers"])
        return Response({"id": attempt.pk, "answers": attempt.answers, "deadline_at": attempt.deadline_at})


class AttemptSubmitApi(APIView):
    """Hand in your exam attempt (with last answers); it is scored and may qualify you."""

    class SubmitInput(serializers.Serializer):
        answers = serializers.DictField(required=False)

    @extend_schema(request=SubmitInput, responses=dict)
    def post(self, request: Request, pk: int) -> Response:
        payload = valid_input(self.SubmitInput, request.data)
        attempt = services.attempt_submit(attempt_id=pk, user=request.user, answers=payload.get("answers"))
        return Response(attempt_detail(attempt))


class GuidelinesOutput(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", default=None)
    html = serializers.SerializerMethodField()

    class Meta:
        model = Guidelines
        fields = ["version", "note", "text", "html", "created_by", "created_at"]

    def get_html(self, guidelines: Guidelines) -> str:
        return render_markdown(guidelines.text)


class GuidelinesApi(APIView):
    """Read the project's annotation guidelines, current and past versions, or publish a new one (managers)."""

    class PublishInput(serializers.Serializer):
        text = serializers.CharField(trim_whitespace=False)
        note = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")

    @extend_schema(responses=dict)
    def get(self, request: Request, slug: str) -> Response:
        project = project_get(user=request.user, slug=slug)
        guidelines_services.guidelines_ensure_default(project=project)
        versions = list(selectors.guidelines_versions(user=request.user, project=project))
        current = versions[0]
        is_read = current.reads.filter(user=request.user).exists()
        return Response(
            {
                "project": project.slug,
                "current": GuidelinesOutput(current).data,
                "is_read": is_read,
                "versions": [
                    {"version": v.version, "note": v.note, "created_at": v.created_at, "text": v.text} for v in versions
                ],
            }
        )

    @extend_schema(request=PublishInput, responses={201: GuidelinesOutput})
    def post(self, request: Request, slug: str) -> Response:
        project = project_get(user=request.user, slug=slug)
        payload = valid_input(self.PublishInput, request.data)
        guidelines = guidelines_services.guidelines_publish(project=project, actor=request.user, **payload)
        return Response(GuidelinesOutput(guidelines).data, status=status.HTTP_201_CREATED)


class GuidelinesReadApi(APIView):
    """Mark the project's current (or a given) guidelines version as read by you."""

    class ReadInput(serializers.Serializer):
        version = serializers.IntegerField(required=False, min_value=1)

    @extend_schema(request=ReadInput, responses=dict)
    def post(self, request: Request, slug: str) -> Response:
        project = project_get(user=request.user, slug=slug)
        payload = valid_input(self.ReadInput, request.data)
        read = guidelines_services.guidelines_mark_read(
            project=project, user=request.user, version=payload.get("version")
        )
        return Response({"version": read.guidelines.version, "read_at": read.read_at})
