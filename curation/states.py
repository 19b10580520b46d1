"""Instance statuses and the transition table: the only description of the lifecycle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


# Who starts and steers scoring runs (scoring.runs.permissions); the release page offers "Score a model" to them.
RUN_ROLES = frozenset({Role.MANAGER, Role.VERIFIER})


# Who the actor must be, relative to the instance, for a transition.
AUTHOR = "author"  # the annotator who holds / wrote the instance
NOT_AUTHOR = "not_author"  # anyone but the author
ROUND1_VERIFIER = "round1_verifier"  # the verifier who reviewed round one
ROUND2_REVIEWER = "round2_reviewer"  # the second annotator reviewing round two
ANYONE = "anyone"  # only the role matters
SYSTEM = "system"  # background jobs (lease reaper, release cut)


# The rules a move carries, by name: guards (checked before the move) and effects (created inside its transaction).
# Apps register them (`curation.services.lifecycle.transition_rule`); a move whose rule is missing is refused.
SUBMISSION_COMPLETE = "submission_complete"  # guard: question, answer, answer form/source, relevant tables agree
SUBMISSION_RECORDED = "submission_recorded"  # effect: the submitted text is kept as a revision
NOT_RESUMED = "not_resumed"  # guard: changes a verifier asked for never go back to the general queue
CHANGES_EXPLAINED = "changes_explained"  # guard: a change request carries at least one comment
CHANGES_RECORDED = "changes_recorded"  # effect: the comments are stored for the annotator
APPROVAL_RECORDED = "approval_recorded"  # effect: earlier round-one comments resolved, new ones stored
FLAG_EXPLAINED = "flag_explained"  # guard: a round-two flag says what is wrong
DISCUSSION_OPENED = "discussion_opened"  # effect: the flag opens a Discussion with the round-one verifier
DISCUSSION_OPEN = "discussion_open"  # guard: deciding a discussion needs one that is open
DISCUSSION_DECIDED = "discussion_decided"  # effect: the open discussion records the decision
# Double annotation (annotate.agreement): a selected instance waits for its second, independent version before
# round one; the verifier keeps one (or merges) before approving. Round two: nobody reviews their own work.
BOTH_VERSIONS_IN = "both_versions_in"  # guard: round one starts once the second version is in, not by its author
VERSION_CHOSEN = "version_chosen"  # guard: approval needs the verifier's keep/merge decision
# guard: round two is not done by anyone whose work is in the kept version (double annotation decides whose)
NOT_OWN_WORK = "not_own_work"
# A new project's first gold: a manager validates a draft into the exam's pool (withheld from releases).
EXAM_GOLD_POOLED = "exam_gold_pooled"  # effect: the validated draft joins the qualification exam's pool


@dataclass(frozen=True)
class Transition:
    source: str
    target: str
    roles: frozenset[str]
    relation: str
    requires_qualification: bool = False
    description: str = ""
    guards: tuple[str, ...] = ()
    effects: tuple[str, ...] = ()
    by_system: bool = False  # a background job (actor=None) may perform it too


def _t(
    source: Status,
    target: Status,
    roles: tuple[Role, ...],
    relation: str,
    why: str,
    *,
    qualified: bool = False,
    **rules: Any,
) -> Transition:
    """A row of the table in the enums' words; `rules`: its guards, effects and by_system."""
    return Transition(source.value, target.value, frozenset(r.value for r in roles), relation, qualified, why, **rules)


S = Status
NON_RELEASED = [s for s in Status if s not in (S.RELEASED, S.DISCARDED)]

TRANSITIONS: tuple[Transition, ...] = (
    _t(
        S.DRAFTED,
        S.VALIDATED,
        (Role.MANAGER,),
        NOT_AUTHOR,
        "validate a draft as exam gold",
        guards=(SUBMISSION_COMPLETE,),
        effects=(EXAM_GOLD_POOLED,),
    ),
    _t(S.DRAFTED, S.IN_REFINEMENT, (Role.ANNOTATOR,), ANYONE, "claim a draft", qualified=True),
    # By the holder: skip; by the reaper: the lease on a fresh draft expired.
    _t(
        S.IN_REFINEMENT,
        S.DRAFTED,
        (Role.ANNOTATOR,),
        AUTHOR,
        "skip or release the lease",
        guards=(NOT_RESUMED,),
        by_system=True,
    ),
    _t(
        S.IN_REFINEMENT,
        S.SUBMITTED,
        (Role.ANNOTATOR,),
        AUTHOR,
        "submit refined work",
        qualified=True,
        guards=(SUBMISSION_COMPLETE,),
        effects=(SUBMISSION_RECORDED,),
    ),
    # Only the reaper: the lease on resumed work (changes a verifier asked for) expired; it goes back to its author.
    _t(S.IN_REFINEMENT, S.CHANGES_REQUESTED, (), SYSTEM, "return resumed work", by_system=True),
    _t(
        S.SUBMITTED,
        S.ROUND1_REVIEW,
        (Role.VERIFIER,),
        NOT_AUTHOR,
        "claim for round-one review",
        guards=(BOTH_VERSIONS_IN,),
    ),
    _t(S.ROUND1_REVIEW, S.SUBMITTED, (Role.VERIFIER,), ROUND1_VERIFIER, "release the review", by_system=True),
    _t(
        S.ROUND1_REVIEW,
        S.CHANGES_REQUESTED,
        (Role.VERIFIER,),
        ROUND1_VERIFIER,
        "request changes",
        guards=(CHANGES_EXPLAINED,),
        effects=(CHANGES_RECORDED,),
    ),
    _t(
        S.ROUND1_REVIEW,
        S.ROUND2_REVIEW,
        (Role.VERIFIER,),
        ROUND1_VERIFIER,
        "approve in round one",
        guards=(SUBMISSION_COMPLETE, VERSION_CHOSEN),
        effects=(APPROVAL_RECORDED,),
    ),
    _t(
        S.CHANGES_REQUESTED,
        S.IN_REFINEMENT,
        (Role.ANNOTATOR,),
        AUTHOR,
        "resume work on requested changes",
        qualified=True,
    ),
    # A self-transition: taking a round-two review changes no status, but it is claimed and audited like one
    # (the reaper performs it too, to release a reviewer whose lease expired).
    _t(
        S.ROUND2_REVIEW,
        S.ROUND2_REVIEW,
        (Role.ANNOTATOR,),
        ROUND2_REVIEWER,
        "take a round-two review",
        qualified=True,
        guards=(NOT_OWN_WORK,),
        by_system=True,
    ),
    _t(
        S.ROUND2_REVIEW,
        S.VALIDATED,
        (Role.ANNOTATOR,),
        ROUND2_REVIEWER,
        "confirm in round two",
        qualified=True,
        guards=(NOT_OWN_WORK, SUBMISSION_COMPLETE),
    ),
    _t(
        S.ROUND2_REVIEW,
        S.IN_DISCUSSION,
        (Role.ANNOTATOR,),
        ROUND2_REVIEWER,
        "flag an error in round two",
        qualified=True,
        guards=(NOT_OWN_WORK, FLAG_EXPLAINED),
        effects=(DISCUSSION_OPENED,),
    ),
    _t(
        S.IN_DISCUSSION,
        S.VALIDATED,
        (Role.VERIFIER,),
        ROUND1_VERIFIER,
        "resolve the discussion",
        guards=(DISCUSSION_OPEN, SUBMISSION_COMPLETE),
        effects=(DISCUSSION_DECIDED,),
    ),
    _t(
        S.IN_DISCUSSION,
        S.CHANGES_REQUESTED,
        (Role.VERIFIER,),
        ROUND1_VERIFIER,
        "accept the flag",
        guards=(DISCUSSION_OPEN,),
        effects=(DISCUSSION_DECIDED,),
    ),
    _t(S.VALIDATED, S.RELEASED, (Role.MANAGER,), ANYONE, "included in a release", by_system=True),
    _t(S.DISCARDED, S.DRAFTED, (Role.MANAGER,), ANYONE, "restore a discarded instance"),
    *(_t(s, S.DISCARDED, (Role.MANAGER,), ANYONE, "discard") for s in NON_RELEASED),
)

TRANSITION_TABLE: dict[tuple[str, str], Transition] = {(t.source, t.target): t for t in TRANSITIONS}

# Transitions a background job may perform without a human actor (lease expiry, release cut).
SYSTEM_TRANSITIONS: frozenset[tuple[str, str]] = frozenset(key for key, t in TRANSITION_TABLE.items() if t.by_system)

# The statuses in which an instance is held under a lease (claim, review); see annotate.work.leases.
LEASED_STATUSES: tuple[str, ...] = (S.IN_REFINEMENT.value, S.ROUND1_REVIEW.value, S.ROUND2_REVIEW.value)
