"""API for two-round validation, discussions, comments and history diffs, and the steps of an instance's history."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.instances import services as instance_services
from annotate.review import selectors as review_selectors
from annotate.review import services as review
from annotate.review.models import Discussion, DiscussionMessage, ReviewComment
from annotate.work.queue import lease_renew
from annotate.work.workspace import work_ping
from curation import selectors
from curation.answer_types import ANSWER_TYPES, SCALES
from curation.api_inputs import valid_input
from curation.errors import DomainError, NotFound, NotPermitted
from curation.models import Instance
from curation.serializers import InstanceSerializer
from curation.services.instances import instance_revision_restore

# --- Serializers ----------------------------------------------------------------------------------------------


class CommentInputSerializer(serializers.Serializer):
    field = serializers.ChoiceField(choices=ReviewComment.Field.values, required=False, allow_blank=True, default="")
    text = serializers.CharField(max_length=review.MAX_COMMENT_LENGTH, label="Comment")


class CommentSerializer(serializers.ModelSerializer):
    author = serializers.SlugRelatedField(slug_field="username", read_only=True)
    resolved_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = ReviewComment
        fields = "__all__"


class MessageSerializer(serializers.ModelSerializer):
    author = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = DiscussionMessage
        fields = ["id", "author", "text", "created_at"]


class DiscussionSerializer(serializers.ModelSerializer):
    opened_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    verifier = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    decided_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    is_open = serializers.BooleanField(read_only=True)
    # Plain strings: the input's "outcome" choices differ (no "open"), and one enum name must not mean both.
    outcome = serializers.CharField(read_only=True)
    resolution = serializers.CharField(read_only=True)

    class Meta:
        model = Discussion
        fields = "__all__"


class DiscussionDetailSerializer(DiscussionSerializer):
    messages = MessageSerializer(many=True, read_only=True)


class VersionSerializer(serializers.Serializer):
    expected_version = serializers.IntegerField(min_value=1)


class DecisionSerializer(VersionSerializer):
    comments = CommentInputSerializer(many=True, required=False, default=list)


class FlagSerializer(DecisionSerializer):
    message = serializers.CharField(required=False, allow_blank=True, default="", max_length=review.MAX_COMMENT_LENGTH)


class ReplySerializer(serializers.Serializer):
    text = serializers.CharField(max_length=review.MAX_COMMENT_LENGTH)


class EditFieldsSerializer(serializers.Serializer):
    question = serializers.CharField(required=False, allow_blank=True)
    rationale = serializers.CharField(required=False, allow_blank=True)
    answer = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False)
    answer_form = serializers.ChoiceField(choices=["", "short", "free"], required=False)
    answer_source = serializers.ChoiceField(choices=["", "text", "table", "table-text"], required=False)
    answer_type = serializers.ChoiceField(choices=ANSWER_TYPES, required=False)
    scale = serializers.ChoiceField(
        choices=SCALES, required=False, allow_null=True, help_text='null: not chosen; "": none'
    )
    relevant_table_ids = serializers.ListField(child=serializers.IntegerField(), required=False)


class ResolveSerializer(VersionSerializer):
    outcome = serializers.ChoiceField(choices=["accepted", "rejected"])
    action = serializers.ChoiceField(choices=["", "edit", "send_back"], required=False, default="")
    fields = EditFieldsSerializer(required=False)
    message = serializers.CharField(required=False, allow_blank=True, default="", max_length=review.MAX_COMMENT_LENGTH)


class DiscardSerializer(VersionSerializer):
    reason = serializers.CharField(max_length=500)


class RestoreSerializer(VersionSerializer):
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class RevisionRestoreSerializer(VersionSerializer):
    revision = serializers.IntegerField(min_value=1, help_text="The number of the revision to restore")


class PingSerializer(serializers.Serializer):
    activity = serializers.ChoiceField(choices=["review1", "review2", "discussion"])


class PkListField(serializers.ListField):
    """A list of objects (instances, discussions) given as their ids."""

    child = serializers.IntegerField()

    def to_representation(self, data: list) -> list[int]:
        return [item.pk for item in data]


class ReviewQueueSerializer(serializers.Serializer):
    held = PkListField()
    returning = PkListField()
    waiting = serializers.IntegerField(source="waiting_count", help_text="How many wait, counted up to 1,000.")
    waiting_capped = serializers.BooleanField(help_text="True when more than 1,000 wait (waiting is 1,000).")
    discussions = PkListField()


class Round2QueueSerializer(serializers.Serializer):
    held = PkListField()
    available = serializers.IntegerField(help_text="Instances you may take for round two, counted up to 1,000.")
    available_capped = serializers.BooleanField(help_text="True when more than 1,000 wait (available is 1,000).")
    discussions = PkListField()


class DiffRowSerializer(serializers.Serializer):
    field = serializers.CharField()
    changed = serializers.BooleanField()
    parts = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))


class RevisionDiffSerializer(serializers.Serializer):
    a = serializers.IntegerField(allow_null=True)
    b = serializers.IntegerField(allow_null=True)
    revisions = serializers.ListField(child=serializers.IntegerField())
    diff = DiffRowSerializer(many=True)


@contextmanager
def _attempted(request: Request, pk: int) -> Iterator[None]:
    """For actions anyone in the project may attempt (claims, steps): the service decides, but an instance the person
    may not see answers exactly as a missing one (404), whatever the service refuses, so no status tells a hidden
    item from an absent id. Validate the body before: a bad body is a 400 for both alike."""
    missing = NotFound(f"No instance {pk} in your projects.")
    if not Instance.objects.filter(pk=pk, project__in=selectors.projects_visible_to(request.user)).exists():
        raise missing
    try:
        yield
    except DomainError:
        if selectors.instances_visible_to(request.user).filter(pk=pk).exists():
            raise
        raise missing from None


# --- Steps both rounds share: one class per action, given the round's service by the URLconf (as_view(...)) ----


class RoundNextApi(APIView):
    """Take the next review of a round, or get the one already held; 204 when nothing waits (round two never
    offers one's own work nor an instance one verified in round one)."""

    take: Callable[..., Instance | None] | None = None  # the round's service, given by the URLconf

    @extend_schema(request=None, responses={200: InstanceSerializer, 204: None})
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        instance = self.take(project=project, user=request.user)
        if instance is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(InstanceSerializer(instance).data)


class RoundClaimApi(APIView):
    """Claim this instance for the round's review (409 when someone else was first)."""

    claim: Callable[..., Instance] | None = None  # the round's service, given by the URLconf

    @extend_schema(request=None, responses=InstanceSerializer)
    def post(self, request: Request, pk: int) -> Response:
        with _attempted(request, pk):
            instance = self.claim(instance_id=pk, user=request.user)
        return Response(InstanceSerializer(instance).data)


class InstanceStep(NamedTuple):
    """A version-checked step on one instance: its route under `instances/<pk>/`, its service and input serializer
    (the history page posts the same), the operation's description, and the service's keyword for the actor (the
    review rounds' services say `user`, those of the instance's lifecycle `actor`)."""

    route: str
    step: Callable[..., Instance]
    description: str
    input_serializer: type[serializers.Serializer] = VersionSerializer
    actor_keyword: str = "user"


# URL name → step, served by RoundVersionedStepApi (the URLconf makes one route of each).
INSTANCE_STEPS = {
    "api-review-release": InstanceStep(
        "review/release/", review.review_release, "Give a held round-one review back to the pile."
    ),
    "api-review-approve": InstanceStep(
        "review/approve/", review.review_approve, "Approve in round one: on to round two.", DecisionSerializer
    ),
    "api-review-request-changes": InstanceStep(
        "review/request-changes/",
        review.review_request_changes,
        "Send back to the annotator with comments (on the instance or on fields).",
        DecisionSerializer,
    ),
    "api-round2-confirm": InstanceStep(
        "round2/confirm/", review.round2_confirm, "Confirm in round two: the instance is validated."
    ),
    "api-round2-release": InstanceStep(
        "round2/release/",
        review.round2_release,
        "Give a held round-two review back; it waits for the next taker again.",
    ),
    "api-instance-discard": InstanceStep(
        "discard/",
        instance_services.instance_discard,
        "A manager discards an instance (a state; nothing is deleted).",
        DiscardSerializer,
        "actor",
    ),
    "api-instance-restore": InstanceStep(
        "restore/",
        instance_services.instance_restore,
        "A manager restores a discarded instance as a draft.",
        RestoreSerializer,
        "actor",
    ),
    "api-revision-restore": InstanceStep(
        "revisions/restore/",
        instance_revision_restore,
        "Undo: restore an earlier revision as a new one (whoever may edit the instance now; 409 when "
        "expected_version is stale).",
        RevisionRestoreSerializer,
        "actor",
    ),
}


class RoundVersionedStepApi(APIView):
    """A step on one instance that needs the version its actor saw, plus what its input serializer asks for
    (comments, a reason): round one's approve, request changes and give back, round two's confirm and give back, a
    manager's discard and restore, restoring a revision. The URLconf gives each its `InstanceStep`."""

    instance_step: InstanceStep | None = None  # given by the URLconf

    @property
    def description(self) -> str:
        """The operation's description in the schema (AutoSchema reads it)."""
        return self.instance_step.description

    def get_serializer(self, *args: object, **kwargs: object) -> serializers.Serializer:
        """The input serializer: the schema documents the request body from it."""
        return self.instance_step.input_serializer(*args, **kwargs)

    @extend_schema(responses=InstanceSerializer)
    def post(self, request: Request, pk: int) -> Response:
        step = self.instance_step
        fields = valid_input(step.input_serializer, request.data)
        with _attempted(request, pk):
            instance = step.step(instance_id=pk, **{step.actor_keyword: request.user}, **fields)
        return Response(InstanceSerializer(instance).data)


# --- Round one ------------------------------------------------------------------------------------------------


class ReviewQueueApi(APIView):
    @extend_schema(responses=ReviewQueueSerializer)
    def get(self, request: Request, slug: str) -> Response:
        """The verifier's round-one pile: held reviews, resubmissions returning to them, and the waiting count."""
        project = selectors.project_get(user=request.user, slug=slug)
        review.require_verifier(project=project, user=request.user)
        return Response(ReviewQueueSerializer(review_selectors.review_queue(project=project, user=request.user)).data)


class ReviewPingApi(APIView):
    @extend_schema(request=PingSerializer, responses={200: None})
    def post(self, request: Request, pk: int) -> Response:
        """A review page is in use: count active time, and renew the lease its reviewer holds (either round)."""
        instance = selectors.instance_get(user=request.user, instance_id=pk)
        activity = valid_input(PingSerializer, request.data)["activity"]
        involved = {
            "review1": instance.round1_verifier_id,
            "review2": instance.round2_reviewer_id,
            "discussion": instance.round1_verifier_id,  # who decides its open discussion (a take makes it so)
        }[activity]
        if involved != request.user.pk:
            raise NotPermitted("You are not reviewing this instance.")
        seconds = work_ping(instance_id=pk, user=request.user, activity=activity)
        lease_renew(instance_id=pk, user=request.user)  # a discussion holds no lease: nothing to renew
        return Response({"active_seconds": seconds})


# --- Round two ------------------------------------------------------------------------------------------------


class Round2QueueApi(APIView):
    """What waits for you in round two: held reviews, how many are available, your discussions."""

    @extend_schema(responses=Round2QueueSerializer)
    def get(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        review.require_round2_annotator(project_id=project.pk, user=request.user)
        return Response(Round2QueueSerializer(review_selectors.round2_queue(project=project, user=request.user)).data)


class Round2FlagApi(APIView):
    @extend_schema(request=FlagSerializer, responses={201: DiscussionDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        """Flag errors: opens a discussion with the round-one verifier."""
        payload = valid_input(FlagSerializer, request.data)
        with _attempted(request, pk):
            discussion = review.round2_flag(instance_id=pk, user=request.user, **payload)
        return Response(DiscussionDetailSerializer(discussion).data, status=status.HTTP_201_CREATED)


# --- Comments, discussions, history ---------------------------------------------------------------------------


class InstanceCommentsApi(APIView):
    """The review comments on an instance you may see, field by field."""

    @extend_schema(responses=CommentSerializer(many=True))
    def get(self, request: Request, pk: int) -> Response:
        instance = selectors.instance_get(user=request.user, instance_id=pk)
        return Response(CommentSerializer(review_selectors.comments_of(instance), many=True).data)


class CommentResolveApi(APIView):
    """Mark a review comment as dealt with (its author, the instance's annotator or a manager)."""

    @extend_schema(request=None, responses=CommentSerializer)
    def post(self, request: Request, pk: int) -> Response:
        comment = ReviewComment.objects.filter(pk=pk).first()
        if comment is None:
            raise NotFound(f"No comment {pk}.")
        selectors.instance_get(user=request.user, instance_id=comment.instance_id)  # else 404
        return Response(CommentSerializer(review.comment_resolve(comment_id=pk, user=request.user)).data)


class DiscussionListApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("open", bool, required=False)], responses=DiscussionSerializer(many=True)
    )
    def get(self, request: Request, slug: str) -> Response:
        """Threads the viewer is involved in (all of the project's for managers); ?open=true for undecided ones."""
        project = selectors.project_get(user=request.user, slug=slug)
        is_open = request.query_params.get("open") == "true"
        threads = review_selectors.discussions_visible_to(request.user, project, open_only=is_open)
        return Response(DiscussionSerializer(threads, many=True).data)


class DiscussionDetailApi(APIView):
    """One round-two discussion you may see, with its messages."""

    @extend_schema(responses=DiscussionDetailSerializer)
    def get(self, request: Request, pk: int) -> Response:
        discussion = review_selectors.discussion_get(user=request.user, discussion_id=pk)
        return Response(DiscussionDetailSerializer(discussion).data)


class DiscussionReplyApi(APIView):
    """Add a message to a round-two discussion you take part in."""

    @extend_schema(request=ReplySerializer, responses={201: MessageSerializer})
    def post(self, request: Request, pk: int) -> Response:
        review_selectors.discussion_get(user=request.user, discussion_id=pk)
        payload = valid_input(ReplySerializer, request.data)
        message = review.discussion_reply(discussion_id=pk, user=request.user, text=payload["text"])
        return Response(MessageSerializer(message).data, status=status.HTTP_201_CREATED)


class DiscussionResolveApi(APIView):
    @extend_schema(request=ResolveSerializer, responses=DiscussionDetailSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """The round-one verifier decides: reject (validated), or accept and edit (validated) or send back."""
        review_selectors.discussion_get(user=request.user, discussion_id=pk)
        data = valid_input(ResolveSerializer, request.data)
        discussion = review.discussion_resolve(discussion_id=pk, user=request.user, **data)
        return Response(DiscussionDetailSerializer(discussion).data)


class DiscussionHandApi(APIView):
    """Give a discussion back (its deciding verifier), or take a given-back one (a verifier who may decide it)."""

    step: Callable[..., Discussion] | None = None

    @extend_schema(request=None, responses=DiscussionDetailSerializer)
    def post(self, request: Request, pk: int) -> Response:
        review_selectors.discussion_get(user=request.user, discussion_id=pk)
        return Response(DiscussionDetailSerializer(self.step(discussion_id=pk, user=request.user)).data)


class DiscussionNextApi(APIView):
    @extend_schema(request=None, responses={200: DiscussionDetailSerializer, 204: None})
    def post(self, request: Request, slug: str) -> Response:
        """Your next discussion: one you hold, else the oldest given-back one you may take (204: none waits)."""
        project = selectors.project_get(user=request.user, slug=slug)
        discussion = review.discussion_next(project=project, user=request.user)
        if discussion is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(DiscussionDetailSerializer(discussion).data)


class RevisionDiffApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("a", int, required=False), OpenApiParameter("b", int, required=False)],
        responses=RevisionDiffSerializer,
    )
    def get(self, request: Request, pk: int) -> Response:
        """Word diff between two revisions (by number; default the last two)."""
        numbers = {"first": request.query_params.get("a"), "second": request.query_params.get("b")}
        data = review_selectors.history_data(user=request.user, instance_id=pk, **numbers)
        pair = data["pair"]
        return Response(
            {
                "a": pair[0].number if pair else None,
                "b": pair[1].number if pair else None,
                "revisions": [r.number for r in data["revisions"]],
                "diff": data["diff"] or [],
            }
        )
