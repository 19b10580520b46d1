"""Instance statuses and the transition table: the only description of the lifecycle."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models


class Status(models.TextChoices):
    DRAFTED = "drafted", "Drafted"
    IN_REFINEMENT = "in_refinement", "In refinement"
    SUBMITTED = "submitted", "Submitted"
    ROUND1_REVIEW = "round1_review", "Round 1 review"
    CHANGES_REQUESTED = "changes_requested", "Changes requested"
    ROUND2_REVIEW = "round2_review", "Round 2 review"
    IN_DISCUSSION = "in_discussion", "In discussion"
    VALIDATED = "validated", "Validated"
    RELEASED = "released", "Released"
    DISCARDED = "discarded", "Discarded"


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    VERIFIER = "verifier", "Verifier"
    MANAGER = "manager", "Manager"


# Who the actor must be, relative to the instance, for a transition.
AUTHOR = "author"  # the annotator who holds / wrote the instance
NOT_AUTHOR = "not_author"  # anyone but the author
ROUND1_VERIFIER = "round1_verifier"  # the verifier who reviewed round one
ROUND2_REVIEWER = "round2_reviewer"  # the second annotator reviewing round two
ANYONE = "anyone"  # only the role matters
SYSTEM = "system"  # background jobs (lease reaper, release cut)


@dataclass(frozen=True)
class Transition:
    source: str
    target: str
    roles: frozenset[str]
    relation: str
    requires_qualification: bool = False
    description: str = ""


def _t(source: Status, target: Status, roles: tuple[Role, ...], relation: str, qualified: bool = False, why: str = ""):
    return Transition(source.value, target.value, frozenset(r.value for r in roles), relation, qualified, why)


S = Status
NON_RELEASED = [s for s in Status if s not in (S.RELEASED, S.DISCARDED)]

TRANSITIONS: tuple[Transition, ...] = (
    _t(S.DRAFTED, S.IN_REFINEMENT, (Role.ANNOTATOR,), ANYONE, True, "claim a draft"),
    _t(S.IN_REFINEMENT, S.DRAFTED, (Role.ANNOTATOR,), AUTHOR, False, "skip or release the lease"),
    _t(S.IN_REFINEMENT, S.SUBMITTED, (Role.ANNOTATOR,), AUTHOR, True, "submit refined work"),
    _t(S.SUBMITTED, S.ROUND1_REVIEW, (Role.VERIFIER,), NOT_AUTHOR, False, "claim for round-one review"),
    _t(S.ROUND1_REVIEW, S.SUBMITTED, (Role.VERIFIER,), ROUND1_VERIFIER, False, "release the review"),
    _t(S.ROUND1_REVIEW, S.CHANGES_REQUESTED, (Role.VERIFIER,), ROUND1_VERIFIER, False, "request changes"),
    _t(S.ROUND1_REVIEW, S.ROUND2_REVIEW, (Role.VERIFIER,), ROUND1_VERIFIER, False, "approve in round one"),
    _t(S.CHANGES_REQUESTED, S.IN_REFINEMENT, (Role.ANNOTATOR,), AUTHOR, True, "resume work on requested changes"),
    # A self-transition: taking a round-two review changes no status, but it is claimed and audited like one.
    _t(S.ROUND2_REVIEW, S.ROUND2_REVIEW, (Role.ANNOTATOR,), ROUND2_REVIEWER, True, "take a round-two review"),
    _t(S.ROUND2_REVIEW, S.VALIDATED, (Role.ANNOTATOR,), ROUND2_REVIEWER, True, "confirm in round two"),
    _t(S.ROUND2_REVIEW, S.IN_DISCUSSION, (Role.ANNOTATOR,), ROUND2_REVIEWER, True, "flag an error in round two"),
    _t(S.IN_DISCUSSION, S.VALIDATED, (Role.VERIFIER,), ROUND1_VERIFIER, False, "resolve the discussion"),
    _t(S.IN_DISCUSSION, S.CHANGES_REQUESTED, (Role.VERIFIER,), ROUND1_VERIFIER, False, "accept the flag"),
    _t(S.VALIDATED, S.RELEASED, (Role.MANAGER,), ANYONE, False, "included in a release"),
    _t(S.DISCARDED, S.DRAFTED, (Role.MANAGER,), ANYONE, False, "restore a discarded instance"),
    *(_t(s, S.DISCARDED, (Role.MANAGER,), ANYONE, False, "discard") for s in NON_RELEASED),
)

TRANSITION_TABLE: dict[tuple[str, str], Transition] = {(t.source, t.target): t for t in TRANSITIONS}

# Transitions a background job may perform without a human actor.
SYSTEM_TRANSITIONS: frozenset[tuple[str, str]] = frozenset(
    {
        (S.IN_REFINEMENT.value, S.DRAFTED.value),  # lease expired
        (S.IN_REFINEMENT.value, S.CHANGES_REQUESTED.value),  # lease on a change request expired
        (S.ROUND1_REVIEW.value, S.SUBMITTED.value),  # review lease expired
        (S.ROUND2_REVIEW.value, S.ROUND2_REVIEW.value),  # round-two lease expired: the reviewer is released
        (S.VALIDATED.value, S.RELEASED.value),
    }
)


def allowed_targets(source: str) -> list[str]:
    """Statuses reachable from `source` by some actor."""
    return [t.target for t in TRANSITIONS if t.source == source]
