"""API for the queue and the refinement workspace: everything the workspace page does."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.work import queue, workspace
from annotate.work import selectors as work_selectors
from curation import selectors
from curation.answer_types import ANSWER_TYPES, SCALES
from curation.api_inputs import valid_input
from curation.models import Instance
from curation.serializers import InstanceSerializer, ParagraphSerializer, TableSerializer
from curation.toolkit.answer_form import answer_form


class QueueCountsSerializer(serializers.Serializer):
    available = serializers.IntegerField(help_text="Drafts you may claim, counted up to 1,000.")
    available_capped = serializers.BooleanField(help_text="True when more than 1,000 drafts wait (available is 1,000).")
    changes_requested = serializers.IntegerField()
    held = serializers.IntegerField()
    submitted = serializers.IntegerField()


class QueueApi(APIView):
    """What waits for you in the work queue: drafts you may claim, your change requests, what you hold."""

    @extend_schema(responses=QueueCountsSerializer)
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        return Response(queue.queue_counts(project=project, user=request.user))


class ClaimSerializer(serializers.Serializer):
    instance = serializers.SerializerMethodField(help_text="The instance claimed; null for a queue item without one.")
    version = serializers.IntegerField(help_text="Send it back as expected_version with the first autosave.")
    status = serializers.CharField()
    lease_expires_at = serializers.DateTimeField()
    how = serializers.ChoiceField(
        choices=["held", "resumed", "claimed"],
        help_text="held: the lease you already had; resumed: changes a verifier asked of you; claimed: a new draft.",
    )
    workspace = serializers.SerializerMethodField(help_text="API URL of everything the workspace shows.")
    page = serializers.SerializerMethodField(help_text="The workspace page in the browser.")

    def get_instance(self, claim: queue.Claim) -> int | None:
        return claim.instance_id or None

    def get_workspace(self, claim: queue.Claim) -> str:
        if claim.copy_id is not None:
            return reverse("api-double-copy", args=[claim.copy_id])
        return reverse("api-workspace", args=[claim.instance_id])

    def get_page(self, claim: queue.Claim) -> str:
        if claim.copy_id is not None:
            return reverse("double-copy", args=[self.context["slug"], claim.copy_id])
        return reverse("workspace", args=[self.context["slug"], claim.instance_id])


class QueueNextApi(APIView):
    @extend_schema(request=None, responses={200: ClaimSerializer, 204: None})
    def post(self, request: Request, slug: str) -> Response:
        """Claim the next instance (or get the lease already held); 204 when the queue is empty.

        The answer is the claim; the instance itself, with its context, comes from `workspace`.
        """
        claim = queue.queue_claim(project_slug=slug, user=request.user)
        if claim is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(ClaimSerializer(claim, context={"slug": slug}).data)


class ResumeApi(APIView):
    @extend_schema(request=None, responses=ClaimSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Open this instance a verifier sent back to you, even while you hold a draft (which stays yours)."""
        instance = selectors.instance_get(user=request.user, instance_id=pk)
        claim = queue.queue_resume(instance_id=pk, user=request.user)
        return Response(ClaimSerializer(claim, context={"slug": instance.project.slug}).data)


class AutosaveSerializer(serializers.Serializer):
    expected_version = serializers.IntegerField(min_value=1)
    question = serializers.CharField(required=False, allow_blank=True)
    rationale = serializers.CharField(required=False, allow_blank=True)
    answer = serializers.ListField(child=serializers.CharField(allow_blank=True, trim_whitespace=False), required=False)
    answer_form = serializers.ChoiceField(choices=Instance.AnswerForm.choices, required=False, allow_blank=True)
    answer_source = serializers.ChoiceField(choices=Instance.AnswerSource.choices, required=False, allow_blank=True)
    answer_type = serializers.ChoiceField(choices=ANSWER_TYPES, required=False, allow_blank=True)
    scale = serializers.ChoiceField(choices=SCALES, required=False, allow_blank=True, allow_null=True)
    reasoning_type_id = serializers.IntegerField(required=False, allow_null=True)
    is_answerable = serializers.BooleanField(required=False)
    unanswerable_reason = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    relevant_table_ids = serializers.ListField(child=serializers.IntegerField(), required=False)
    excluded_table_ids = serializers.ListField(child=serializers.IntegerField(), required=False)
    excluded_paragraph_ids = serializers.ListField(child=serializers.IntegerField(), required=False)
    note = serializers.CharField(required=False, allow_blank=True, max_length=500)


class SuggestionsSerializer(serializers.Serializer):
    """What keeps the held instance from submission, and its suggested answer form, type and scale (with evidence)."""

    problems = serializers.ListField(child=serializers.DictField())
    suggested_form = serializers.CharField()
    suggested_type = serializers.CharField()
    suggested_scale = serializers.CharField(allow_null=True)
    suggested_type_evidence = serializers.CharField()
    suggested_scale_evidence = serializers.CharField()


class SaveResultSerializer(SuggestionsSerializer):
    instance = InstanceSerializer()


def _shown(instance: Instance) -> dict:
    """An instance as the API returns it."""
    return InstanceSerializer(selectors.instance_for_output(instance.pk)).data


def _suggestions(problems: list[dict], form: str, suggested: dict) -> dict:
    """`SuggestionsSerializer`'s fields: the problems, the suggested form, and the suggested answer type and scale with
    their evidence (a scale of None is "", no suggestion is null)."""
    return {
        "problems": problems,
        "suggested_form": form,
        "suggested_type": suggested["answer_type"],
        "suggested_scale": suggested["scale"] if suggested["has_scale"] else None,
        "suggested_type_evidence": suggested["answer_type_evidence"],
        "suggested_scale_evidence": suggested["scale_evidence"],
    }


class AutosaveApi(APIView):
    @extend_schema(request=AutosaveSerializer, responses=SaveResultSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Save the holder's edit (409 with the current version when it changed elsewhere)."""
        fields = valid_input(AutosaveSerializer, request.data)
        expected_version = fields.pop("expected_version")
        note = fields.pop("note", "")
        instance = workspace.workspace_autosave(
            instance_id=pk, user=request.user, expected_version=expected_version, fields=fields, note=note
        )
        suggested = workspace.suggested_answer_kind(instance)
        problems = workspace.submission_problems(instance)
        return Response(
            {"instance": _shown(instance), **_suggestions(problems, answer_form(instance.answer), suggested)}
        )


class SubmitApi(APIView):
    @extend_schema(request=AutosaveSerializer, responses=InstanceSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Submit for round-one review; 400 lists what is missing."""
        fields = valid_input(AutosaveSerializer, request.data)
        expected_version = fields.pop("expected_version")
        fields.pop("note", None)
        instance = workspace.workspace_submit(
            instance_id=pk, user=request.user, expected_version=expected_version, fields=fields or None
        )
        return Response(_shown(instance))


class SkipSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500)


class SkipApi(APIView):
    """Give back an item you hold, with a reason; it returns to the queue."""

    @extend_schema(request=SkipSerializer, responses=InstanceSerializer)
    def post(self, request: Request, pk: int) -> Response:
        payload = valid_input(SkipSerializer, request.data)
        instance = workspace.workspace_skip(instance_id=pk, user=request.user, reason=payload["reason"])
        return Response(InstanceSerializer(instance).data)


class PingResultSerializer(serializers.Serializer):
    active_seconds = serializers.FloatField()
    lease_expires_at = serializers.DateTimeField(allow_null=True)


class PingApi(APIView):
    @extend_schema(request=None, responses=PingResultSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """The workspace is in use: count active time and renew the lease."""
        workspace.instance_held(pk, request.user)
        seconds = workspace.work_ping(instance_id=pk, user=request.user, activity="refine")
        deadline = queue.lease_renew(instance_id=pk, user=request.user)
        return Response({"active_seconds": seconds, "lease_expires_at": deadline})


class WorkspaceSerializer(SuggestionsSerializer):
    instance = InstanceSerializer()
    draft = serializers.DictField()
    context_kind = serializers.CharField(allow_null=True)
    tables = TableSerializer(many=True)
    context_table_ids = serializers.ListField(child=serializers.IntegerField())
    paragraphs = ParagraphSerializer(many=True, help_text="the context's own (a long context's: the whole paper)")
    context_paragraph_ids = serializers.ListField(child=serializers.IntegerField())
    paper_paragraphs = serializers.DictField(help_text="the paper's paragraph count and the URL that pages them")
    excluded_table_ids = serializers.ListField(child=serializers.IntegerField())
    excluded_paragraph_ids = serializers.ListField(child=serializers.IntegerField())


class PageSerializer(serializers.Serializer):
    page = serializers.IntegerField(default=1, help_text="1 to the number of pages")


class PaperParagraphsSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    paragraphs = ParagraphSerializer(many=True)


class InstancePaperApi(APIView):
    @extend_schema(responses=PaperParagraphsSerializer, parameters=[PageSerializer])
    def get(self, request: Request, pk: int) -> Response:
        """The paragraphs of the held instance's paper, a page at a time (`?page=N`), for its holder."""
        number = valid_input(PageSerializer, request.query_params)["page"]
        data = work_selectors.paper_paragraphs_page(user=request.user, instance_id=pk, page=number)
        return Response({**data, "paragraphs": ParagraphSerializer(data["paragraphs"], many=True).data})


class WorkspaceApi(APIView):
    @extend_schema(responses=WorkspaceSerializer)
    def get(self, request: Request, pk: int) -> Response:
        """The held instance with its context's own paragraphs and tables; the rest of the paper is paged on demand
        (`paper_paragraphs.url`), so a claim-and-open reads what it shows whatever the paper's size."""
        data = work_selectors.workspace_read(user=request.user, instance_id=pk, whole_paper=False)
        body = {
            "instance": InstanceSerializer(data["instance"]).data,  # read with its output relations
            "draft": data["instance"].draft or {},
            "context_kind": data["context"].kind if data["context"] else None,
            "tables": TableSerializer(data["context_tables"], many=True).data,
            "context_table_ids": sorted(t.pk for t in data["context_tables"]),
            "paragraphs": ParagraphSerializer(data["all_paragraphs"], many=True).data,
            "context_paragraph_ids": sorted(p.pk for p in data["context_paragraphs"]),
            "paper_paragraphs": {
                "count": data["paper_paragraph_count"],
                "url": reverse("api-instance-paper", args=[pk]) + "?page=1",
            },
            "excluded_table_ids": sorted(data["excluded_table_ids"]),
            "excluded_paragraph_ids": sorted(data["excluded_paragraph_ids"]),
            **_suggestions(data["problems"], data["suggested_form"], data["suggested"]),
        }
        return Response(body)
