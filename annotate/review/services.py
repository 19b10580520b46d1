"""Two-round validation: round-one claims and decisions, round-two claims and decisions, discussions and comments.

Every status change goes through `instance_transition` (table, role, relation, compare-and-set); a lost race is a
Conflict and writes nothing. Content edits go through `instance_edit` (version-checked revisions).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from annotate.agreement.services import awaiting_second_q, own_work_q, second_annotator_q
from annotate.review.models import Discussion, DiscussionMessage, ReviewComment
from annotate.work.leases import lease_expire
from annotate.work.queue import lease_deadline, lease_renew
from annotate.work.workspace import work_ping
from curation.errors import Conflict, InvalidInput, NotFound, NotPermitted
from curation.members.selectors import is_qualified_annotator
from curation.models import Instance, Project, TransitionEvent
from curation.services.instances import instance_edit
from curation.services.lifecycle import instance_transition, set_aside_since
from curation.services.projects import require_role
from curation.states import Role, Status
from curation.visibility import roles_in

CLAIM_CANDIDATES = 25
# The order round one's pile is served in, by Next and by every list of it: resubmissions to their verifier first,
# then the oldest. It is the order of the index `instance_round1_pile`, so a list reads its first rows only, however
# many wait (a list ordered by `updated_at` alone was sorted whole: the planner does not take `IS NULL` as an
# equality).
ROUND1_ORDER = (F("round1_verifier").asc(nulls_last=True), "updated_at", "id")
MAX_COMMENT_LENGTH = 5000
COMMENT_FIELDS = tuple(ReviewComment.Field.values)


def _instance(instance_id: int) -> Instance:
    instance = Instance.objects.filter(pk=instance_id).first()
    if instance is None:
        raise NotFound(f"Instance {instance_id} does not exist.")
    return instance


def _clean_comments(comments: Iterable[dict[str, Any]] | None) -> list[dict[str, str]]:
    cleaned = []
    for comment in comments or []:
        field = str(comment.get("field") or "")
        text = str(comment.get("text") or "").strip()
        if field not in COMMENT_FIELDS:
            raise InvalidInput(
                f"{field!r} is not a field one can comment on; use one of {', '.join(f for f in COMMENT_FIELDS if f)}.",
                detail={"field": field},
            )
        if len(text) > MAX_COMMENT_LENGTH:
            raise InvalidInput(f"A comment is limited to {MAX_COMMENT_LENGTH} characters.", detail={"field": field})
        if text:
            cleaned.append({"field": field, "text": text})
    return cleaned


def _comments_resolve(comments: QuerySet[ReviewComment], actor: AbstractBaseUser | None) -> None:
    comments.filter(is_resolved=False).update(is_resolved=True, resolved_by=actor, resolved_at=timezone.now())


def _comments_add(
    *, instance: Instance, author: AbstractBaseUser, round_number: int, comments: list[dict[str, str]]
) -> list[ReviewComment]:
    return [
        ReviewComment.objects.create(
            instance=instance,
            author=author,
            round=round_number,
            field=c["field"],
            text=c["text"],
            instance_version=instance.version,
        )
        for c in comments
    ]


# --- Round one -----------------------------------------------------------------------------------------------


def require_verifier(*, project: Project, user: AbstractBaseUser) -> None:
    """Refuse anyone but a verifier of the project."""
    require_role(user=user, project=project, roles=(Role.VERIFIER,), action="review in round one")


def review_candidates(*, project: Project, user: AbstractBaseUser):
    """Submitted instances this verifier may claim: never their own, and resubmissions only to their first verifier."""
    return (
        Instance.objects.filter(project=project, status=Status.SUBMITTED)
        .exclude(author=user)
        .filter(Q(round1_verifier__isnull=True) | Q(round1_verifier=user))
        .exclude(awaiting_second_q())
        .exclude(second_annotator_q(user))
    )


def _given_back_recently(user: AbstractBaseUser) -> Exists:
    """The instance was given back by this verifier within TATCURATE_SET_ASIDE_HOURS: their Next serves it only
    once nothing else waits for them (others take it first; with one verifier it comes back to them)."""
    return Exists(
        TransitionEvent.objects.filter(
            instance_id=OuterRef("pk"),
            actor=user,
            from_status=Status.ROUND1_REVIEW,
            to_status=Status.SUBMITTED,
            created_at__gt=set_aside_since(),
        )
    )


@transaction.atomic
def review_claim(*, instance_id: int, user: AbstractBaseUser, expected_version: int | None = None) -> Instance:
    """Claim one submitted instance for round-one review under a lease; the lifecycle refuses the author."""
    instance = _instance(instance_id)
    if instance.status == Status.ROUND1_REVIEW and instance.round1_verifier_id == user.pk:
        lease_renew(instance_id=instance_id, user=user)
        return _instance(instance_id)
    return instance_transition(
        instance_id=instance_id,
        target=Status.ROUND1_REVIEW,
        actor=user,
        expected_status=Status.SUBMITTED,
        expected_version=instance.version if expected_version is None else expected_version,
        reason="claimed for round-one review",
        assignments={"lease_expires_at": lease_deadline()},
    )


def review_next(*, project: Project, user: AbstractBaseUser) -> Instance | None:
    """The verifier's next review: the one they hold, else instances returning to them, else the oldest submitted;
    what they gave back lately comes last (`_given_back_recently`); it never strands.
    Others' expired reviews are returned by the periodic reaper (annotate.leases_reap), never here."""
    require_verifier(project=project, user=user)
    held = Instance.objects.filter(project=project, status=Status.ROUND1_REVIEW, round1_verifier=user).first()
    if held is not None:
        return review_claim(instance_id=held.pk, user=user)  # renews the lease they hold

    def pick(lost: set[int]) -> list[Instance]:
        qs = review_candidates(project=project, user=user).exclude(pk__in=lost)
        qs = qs.annotate(set_aside=_given_back_recently(user))
        if connection.vendor == "postgresql":
            qs = qs.select_for_update(skip_locked=True, of=("self",))
        return list(qs.order_by("set_aside", *ROUND1_ORDER).only("id", "version")[:CLAIM_CANDIDATES])

    return _claim_first(pick, lambda c: review_claim(instance_id=c.pk, user=user, expected_version=c.version))


def _claim_first(pick: Callable[[set[int]], list[Instance]], claim: Callable[[Instance], Instance]) -> Instance | None:
    """Claim the first candidate `pick` offers that nobody else wins: each claim is one compare-and-set, a lost race
    moves on to the next. None when nothing waits."""
    lost: set[int] = set()
    while True:
        with transaction.atomic():
            candidates = pick(lost)
            if not candidates:
                return None
            for candidate in candidates:
                try:
                    return claim(candidate)
                except (Conflict, NotPermitted):
                    lost.add(candidate.pk)


# round → (the status a held review is in, where giving it back moves it, the audited reason)
_GIVE_BACK = {
    1: (Status.ROUND1_REVIEW, Status.SUBMITTED, "review released by the verifier"),
    2: (Status.ROUND2_REVIEW, Status.ROUND2_REVIEW, "round-two review given back"),
}


@transaction.atomic
def give_back(*, round: int, instance_id: int, user: AbstractBaseUser, expected_version: int | None = None) -> Instance:
    """Give a held review of either round back to the pile, audited as a move by its holder (the lifecycle refuses
    anyone else). Round one's lifecycle unassigns it: other verifiers' Next serves it as before, this verifier's
    only after everything else for TATCURATE_SET_ASIDE_HOURS (`review_next`). Round two stays in its status and is
    unassigned here, so the holder's own Next serves it after older ones (`round2_next` goes by `updated_at`)."""
    held, target, reason = _GIVE_BACK[round]
    instance = instance_transition(
        instance_id=instance_id,
        target=target,
        actor=user,
        expected_status=held,
        expected_version=expected_version,  # None: the version it has now
        reason=reason,
    )
    if round == 2:
        Instance.objects.filter(pk=instance_id).update(round2_reviewer=None, lease_expires_at=None)
        instance = _instance(instance_id)
    return instance


review_release = partial(give_back, round=1)
round2_release = partial(give_back, round=2)


@transaction.atomic
def review_approve(
    *, instance_id: int, user: AbstractBaseUser, expected_version: int, comments: list[dict[str, Any]] | None = None
) -> Instance:
    """Round one passes: the instance goes to round two. Only the verifier holding the review may approve."""
    reason = "approved in round one"
    return _decide(1, instance_id, user, expected_version, Status.ROUND2_REVIEW, reason, comments=comments or [])


@transaction.atomic
def review_request_changes(
    *, instance_id: int, user: AbstractBaseUser, expected_version: int, comments: list[dict[str, Any]]
) -> Instance:
    """Send the instance back to its annotator with at least one comment; it heads their queue on return."""
    summary = "; ".join(f"{c['field'] or 'instance'}: {c['text']}" for c in _clean_comments(comments))
    reason = f"changes requested — {summary}"[:1000]
    return _decide(1, instance_id, user, expected_version, Status.CHANGES_REQUESTED, reason, comments=comments)


def _decide(
    stage: int,
    instance_id: int,
    user: AbstractBaseUser,
    expected_version: int,
    target: str,
    reason: str,
    **details: Any,
) -> Instance:
    """A reviewer's decision on the review of round `stage` (1 or 2) they hold, counted as their review time."""
    instance = instance_transition(
        instance_id=instance_id,
        target=target,
        actor=user,
        expected_status=_GIVE_BACK[stage][0],
        expected_version=expected_version,
        reason=reason,
        details=details,
    )
    work_ping(instance_id=instance_id, user=user, activity=f"review{stage}")
    return instance


# --- Round two -----------------------------------------------------------------------------------------------


def require_round2_annotator(*, project_id: int, user: AbstractBaseUser) -> None:
    """Refuse anyone but a qualified annotator of the project (the one selector, `is_qualified_annotator`)."""
    if not is_qualified_annotator(project=project_id, user=user):
        raise NotPermitted("Only qualified annotators review in round two: pass the qualification exam first.")


# Who round two bars from an instance: whoever wrote its kept version (the author, a second annotator, both when
# the verifier merged them) and its round-one verifier. At most this many people, so a project with more qualified
# annotators always has someone left for every instance.
ROUND2_BARRED_AT_MOST = 3


def round2_barred_q(user: AbstractBaseUser) -> Q:
    """Round-two instances this person may not review: their work is in the kept version, or they verified it.
    For `exclude` only: with no double annotation its decision is NULL, so `filter` would miss the author."""
    return own_work_q(user) | Q(round1_verifier_id=user.pk)


def round2_open_to(*, project: Project, user: AbstractBaseUser):
    """Round-two instances this person is not barred from (`round2_barred_q`), held or not."""
    return Instance.objects.filter(project=project, status=Status.ROUND2_REVIEW).exclude(round2_barred_q(user))


def round2_candidates(*, project: Project, user: AbstractBaseUser):
    """Round-two instances this annotator may take: open to them (`round2_open_to`), not held by another."""
    now = timezone.now()
    return round2_open_to(project=project, user=user).filter(
        Q(round2_reviewer__isnull=True)
        | Q(round2_reviewer=user)
        | Q(lease_expires_at__isnull=False, lease_expires_at__lt=now)
    )


@transaction.atomic
def round2_claim(*, instance_id: int, user: AbstractBaseUser) -> Instance:
    """Take a round-two review under a lease: a self-transition of the lifecycle, so it is checked and audited.

    The lifecycle refuses the author, the round-one verifier and anyone while another reviewer holds it; the
    lease reaper releases a reviewer whose lease ran out.
    """
    instance = _instance(instance_id)
    require_round2_annotator(project_id=instance.project_id, user=user)
    if instance.status != Status.ROUND2_REVIEW:
        raise Conflict(
            f"This instance is {instance.get_status_display().lower()}, not waiting for round two.",
            detail={"status": instance.status, "version": instance.version},
        )
    if instance.round2_reviewer_id == user.pk:
        lease_renew(instance_id=instance_id, user=user)
        return _instance(instance_id)
    if instance.round2_reviewer_id is not None:
        if instance.lease_expires_at and instance.lease_expires_at > timezone.now():
            raise Conflict("Another annotator is reviewing this instance in round two.")
        # The previous reviewer's lease ran out: return it the one way leases return, then take over.
        lease_expire(instance=instance)
        instance = _instance(instance_id)
    return instance_transition(
        instance_id=instance_id,
        target=Status.ROUND2_REVIEW,
        actor=user,
        expected_status=Status.ROUND2_REVIEW,
        expected_version=instance.version,
        reason="took the round-two review",
        assignments={"lease_expires_at": lease_deadline()},
    )


def round2_next(*, project: Project, user: AbstractBaseUser) -> Instance | None:
    """The annotator's next round-two review: the one they hold, else the oldest one they may take."""
    require_round2_annotator(project_id=project.pk, user=user)
    held = Instance.objects.filter(project=project, status=Status.ROUND2_REVIEW, round2_reviewer=user).first()
    if held is not None:
        return round2_claim(instance_id=held.pk, user=user)
    return _claim_first(
        lambda lost: list(
            round2_candidates(project=project, user=user)
            .exclude(pk__in=lost)
            .order_by("updated_at", "id")[:CLAIM_CANDIDATES]
        ),
        lambda c: round2_claim(instance_id=c.pk, user=user),
    )


@transaction.atomic
def round2_confirm(*, instance_id: int, user: AbstractBaseUser, expected_version: int) -> Instance:
    """The second annotator finds nothing wrong: the instance is validated (and its batch may be complete)."""
    return _decide(2, instance_id, user, expected_version, Status.VALIDATED, "confirmed in round two")


@transaction.atomic
def round2_flag(
    *,
    instance_id: int,
    user: AbstractBaseUser,
    expected_version: int,
    comments: list[dict[str, Any]],
    message: str = "",
) -> Discussion:
    """The second annotator flags errors: the instance goes into discussion with its round-one verifier."""
    reason = "flagged in round two"
    instance = _decide(
        2, instance_id, user, expected_version, Status.IN_DISCUSSION, reason, comments=comments, message=message
    )
    return Discussion.objects.get(instance=instance, outcome=Discussion.Outcome.OPEN)


# --- Discussions ---------------------------------------------------------------------------------------------


def discussion_participant(*, discussion: Discussion, user: AbstractBaseUser) -> bool:
    """Who takes part in a thread: the second annotator, the round-one verifier, and the project's managers."""
    if user.pk in (discussion.opened_by_id, discussion.verifier_id):
        return True
    return Role.MANAGER in roles_in(user=user, project_id=discussion.instance.project_id)


def _discussion(discussion_id: int) -> Discussion:
    discussion = Discussion.objects.select_related("instance").filter(pk=discussion_id).first()
    if discussion is None:
        raise NotFound(f"Discussion {discussion_id} does not exist.")
    return discussion


@transaction.atomic
def discussion_reply(*, discussion_id: int, user: AbstractBaseUser, text: str) -> DiscussionMessage:
    """Add a message to an open thread; only its participants may write (the text as `ReplySerializer` checks it,
    which the API and the page share)."""
    discussion = _discussion(discussion_id)
    if not discussion_participant(discussion=discussion, user=user):
        raise NotPermitted("Only the second annotator, the round-one verifier and managers take part in this thread.")
    if not discussion.is_open:
        raise Conflict("This discussion has been decided; it is closed for replies.")
    return DiscussionMessage.objects.create(discussion=discussion, author=user, text=text)


@transaction.atomic
def discussion_resolve(
    *,
    discussion_id: int,
    user: AbstractBaseUser,
    outcome: str,
    expected_version: int,
    action: str = "",
    fields: dict[str, Any] | None = None,
    message: str = "",
) -> Discussion:
    """The round-one verifier decides a flag: reject (validated as is), or accept and edit (validated) or send back.

    The decision, who took it and when are recorded on the discussion; the status change is one compare-and-set, so
    a concurrent decision or discard makes this one a Conflict with nothing written.
    """
    discussion = _discussion(discussion_id)
    instance = discussion.instance
    if not discussion.is_open:
        raise Conflict("This discussion has already been decided.")
    if discussion.verifier_id is None:
        raise Conflict("This discussion was given back; take it before you decide it.")
    if user.pk != discussion.verifier_id:
        raise NotPermitted("Only the verifier who holds this discussion decides it.")
    decision = _DECISIONS.get((outcome, action if outcome == Discussion.Outcome.ACCEPTED else ""))
    if decision is None:
        raise InvalidInput("Choose: reject the flag, or accept it and either edit the instance or send it back.")
    resolution, target, reason = decision
    if resolution == Discussion.Resolution.EDITED:
        if not fields:
            raise InvalidInput("Accepting with an edit needs the corrected fields.")
        edited = instance_edit(
            instance_id=instance.pk,
            actor=user,
            expected_version=expected_version,
            fields=fields,
            kind="edit",
            note="edited by the verifier to resolve a round-two flag",
        )
        # The transition's guard holds the edit to the submission rule (answer type, scale chosen, …).
        expected_version = edited.version
    instance_transition(
        instance_id=instance.pk,
        target=target,
        actor=user,
        expected_status=Status.IN_DISCUSSION,
        expected_version=expected_version,
        reason=reason,
        details={"resolution": resolution, "message": message},
    )
    discussion.refresh_from_db()
    return discussion


def may_take_discussion(discussion: Discussion, user: AbstractBaseUser) -> bool:
    """A given-back discussion is for any verifier of the project but the flag's two sides (nobody decides a flag
    on their own work)."""
    instance = discussion.instance
    if user.pk in (instance.author_id, discussion.opened_by_id):
        return False
    return Role.VERIFIER.value in roles_in(user=user, project_id=instance.project_id)


@transaction.atomic
def discussion_give_back(*, discussion_id: int, user: AbstractBaseUser) -> Discussion:
    """The deciding verifier hands an open discussion back: it waits for any verifier who may decide it (the same
    one too, when the project has one), and `discussion_next` serves it."""
    discussion = _discussion(discussion_id)
    if discussion.verifier_id != user.pk:
        raise NotPermitted("Only the verifier who holds this discussion may give it back.")
    if not Discussion.objects.filter(pk=discussion.pk, outcome="", verifier=user).update(verifier=None):
        raise Conflict("This discussion has been decided meanwhile.")
    DiscussionMessage.objects.create(
        discussion=discussion, author=None, text=f"Given back by {user.get_username()}; any verifier may take it."
    )
    discussion.refresh_from_db()
    return discussion


@transaction.atomic
def discussion_take(*, discussion_id: int, user: AbstractBaseUser) -> Discussion:
    """A verifier takes a given-back discussion and decides it from then on; they become the instance's round-one
    verifier (who decides its flag, and reviews it again if they send it back)."""
    discussion = _discussion(discussion_id)
    if discussion.verifier_id == user.pk and discussion.is_open:
        return discussion
    if not may_take_discussion(discussion, user):
        raise NotPermitted("Only a verifier of this project who is not a side of the flag may take this discussion.")
    if not Discussion.objects.filter(pk=discussion.pk, outcome="", verifier__isnull=True).update(verifier=user):
        raise Conflict("Another verifier took this discussion first, or it has been decided.")
    Instance.objects.filter(pk=discussion.instance_id).update(round1_verifier=user, version=F("version") + 1)
    DiscussionMessage.objects.create(discussion=discussion, author=None, text=f"Taken by {user.get_username()}.")
    discussion.refresh_from_db()
    return discussion


def discussion_next(*, project: Project, user: AbstractBaseUser) -> Discussion | None:
    """The verifier's next discussion: one they hold, else the oldest given-back one they may take (None: none)."""
    require_verifier(project=project, user=user)
    held = Discussion.objects.filter(instance__project=project, outcome="", verifier=user).order_by("opened_at")
    waiting = (  # given back, which this verifier may take (`may_take_discussion`), oldest first
        Discussion.objects.filter(instance__project=project, outcome="", verifier__isnull=True)
        .exclude(instance__author=user)
        .exclude(opened_by=user)
        .select_related("instance")
        .order_by("opened_at", "id")
    )
    for discussion in [*held[:1], *waiting[:5]]:
        try:
            return discussion_take(discussion_id=discussion.pk, user=user)
        except Conflict:
            continue  # taken by someone else meanwhile: the next one
    return None


# (outcome, action) → (resolution, target, reason) of a verifier's decision on a flag.
_DECISIONS = {
    (Discussion.Outcome.REJECTED, ""): (Discussion.Resolution.KEPT, Status.VALIDATED, "flag rejected by the verifier"),
    (Discussion.Outcome.ACCEPTED, "edit"): (
        Discussion.Resolution.EDITED,
        Status.VALIDATED,
        "flag accepted; verifier edited",
    ),
    (Discussion.Outcome.ACCEPTED, "send_back"): (
        Discussion.Resolution.SENT_BACK,
        Status.CHANGES_REQUESTED,
        "flag accepted; sent back to the annotator",
    ),
}


# --- The transition table's rules for review moves (registered in AnnotateConfig.ready) ----------------------
# They run inside `instance_transition` whichever door moved the instance: these pages and their API, the generic
# POST /api/instances/<id>/transition/, commands and tasks.


def changes_explained(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """Guard of round1_review → changes_requested: the verifier says what to change."""
    if not _clean_comments(details.get("comments")):
        raise InvalidInput("Say what to change: write a comment on the instance or on a field.")


def changes_recorded(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """Effect of a change request: its comments are stored for the annotator."""
    _comments_add(instance=instance, author=actor, round_number=1, comments=_clean_comments(details.get("comments")))


def approval_recorded(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """Effect of a round-one approval: earlier round-one comments count as dealt with; new ones are stored."""
    cleaned = _clean_comments(details.get("comments"))
    _comments_resolve(ReviewComment.objects.filter(instance=instance, round=1), actor)
    _comments_add(instance=instance, author=actor, round_number=1, comments=cleaned)


def flag_explained(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """Guard of round2_review → in_discussion: the second annotator says what is wrong."""
    if not _clean_comments(details.get("comments")) and not str(details.get("message") or "").strip():
        raise InvalidInput("Say what is wrong: write a comment on the instance or on a field.")


def discussion_opened(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """Effect of a round-two flag: the Discussion with the round-one verifier, opened by the flag's comments."""
    cleaned = _clean_comments(details.get("comments"))
    message = str(details.get("message") or "").strip()
    _comments_add(instance=instance, author=actor, round_number=2, comments=cleaned)
    # One open discussion per instance: the status compare-and-set and the discard's close make a second impossible.
    discussion = Discussion.objects.create(instance=instance, opened_by=actor, verifier_id=instance.round1_verifier_id)
    lines = [f"{ReviewComment.Field(c['field']).label}: {c['text']}" for c in cleaned]
    if message:
        lines.append(message)
    DiscussionMessage.objects.create(discussion=discussion, author=actor, text="\n".join(lines))


def discussion_closed_on_discard(instance: Instance, source: str, target: str) -> None:
    """A discarded instance's open discussion is closed: nobody will decide it, so it no longer waits on anyone's
    badge, and the instance, once restored, can be flagged again (one open discussion per instance)."""
    if source == Status.IN_DISCUSSION:
        Discussion.objects.filter(instance=instance, outcome=Discussion.Outcome.OPEN).update(
            outcome=Discussion.Outcome.CLOSED, decided_at=timezone.now()
        )


def discussion_open(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """Guard of deciding a discussion: the instance has one that is open."""
    if not Discussion.objects.filter(instance=instance, outcome=Discussion.Outcome.OPEN).exists():
        raise Conflict("This instance has no open discussion to decide.")


def discussion_decided(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """Effect of leaving in_discussion: the open discussion records the decision (by default: validated keeps the
    instance as it was, changes_requested sends it back), with the verifier's message."""
    if instance.status == Status.VALIDATED:
        resolution = details.get("resolution") or Discussion.Resolution.KEPT
    else:
        resolution = Discussion.Resolution.SENT_BACK
    outcome = Discussion.Outcome.REJECTED if resolution == Discussion.Resolution.KEPT else Discussion.Outcome.ACCEPTED
    discussion = Discussion.objects.filter(instance=instance, outcome=Discussion.Outcome.OPEN).first()
    # Only one decision gets here: the instance's compare-and-set lets one leave in_discussion.
    Discussion.objects.filter(pk=discussion.pk).update(
        outcome=outcome, resolution=resolution, decided_by=actor, decided_at=timezone.now()
    )
    message = str(details.get("message") or "").strip()
    if message:
        DiscussionMessage.objects.create(discussion=discussion, author=actor, text=message)
    DiscussionMessage.objects.create(
        discussion=discussion,
        author=None,
        text=f"{Discussion.Outcome(outcome).label}: {Discussion.Resolution(resolution).label}.",
    )
    if instance.status == Status.VALIDATED:
        _comments_resolve(ReviewComment.objects.filter(instance=instance, round=2), actor)


@transaction.atomic
def comment_resolve(*, comment_id: int, user: AbstractBaseUser) -> ReviewComment:
    """Mark a comment as dealt with: its author, the instance's annotator, or a manager may do so."""
    comment = ReviewComment.objects.select_related("instance").filter(pk=comment_id).first()
    if comment is None:
        raise NotFound(f"Comment {comment_id} does not exist.")
    if user.pk not in (comment.author_id, comment.instance.author_id) and Role.MANAGER not in roles_in(
        user=user, project_id=comment.instance.project_id
    ):
        raise NotPermitted("Only the commenter, the instance's annotator or a manager may resolve this comment.")
    _comments_resolve(ReviewComment.objects.filter(pk=comment_id), user)
    comment.refresh_from_db()
    return comment
