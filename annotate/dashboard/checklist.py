"""The manager's checklist of a first release: each step of the pipeline, whether the project has done it, and the
page where the next thing to do is (shown on the project page)."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from annotate.qualification.services import exam_pool_capacity, settings_of
from curation.members.selectors import qualified_annotators
from curation.models import Batch, Membership, Project, TransitionEvent
from curation.releases.models import Release
from curation.states import Role, Status

# The moves that pass a review, read from the audit trail: where an instance is now says nothing of how it got there
# (a manager's `drafted → validated` makes exam gold without any review, and an import starts as validated).
PASSED_ROUND_ONE = {"from_status": Status.ROUND1_REVIEW, "to_status": Status.ROUND2_REVIEW}  # a verifier's approval
# Confirmed in round two, or flagged there and validated by the discussion that followed.
PASSED_ROUND_TWO = {"from_status__in": (Status.ROUND2_REVIEW, Status.IN_DISCUSSION), "to_status": Status.VALIDATED}


def _has_members(p: Project) -> bool:
    roles = list(Membership.objects.filter(project=p).values_list("role", flat=True))
    return Role.VERIFIER in roles and roles.count(Role.ANNOTATOR) >= 2


def _has_passed(p: Project, move: dict[str, object]) -> bool:
    return TransitionEvent.objects.filter(instance__project=p, **move).exists()


@dataclass(frozen=True)
class Done:
    """A step done for a reason its link says, in place of "open"."""

    said: str


def _exam_ready(p: Project) -> bool | str | Done:
    """Done when the gold pool holds one attempt of the configured size, or, said so, when nobody needs the exam to
    start (an annotator is qualified: vouched or passed); otherwise what the pool lacks."""
    capacity = exam_pool_capacity(settings_of(p))
    if capacity["attempts"] >= 1:
        return True
    if qualified_annotators(project=p).exists():
        return Done(f"not needed yet: annotators are qualified ({capacity['pool']} of {capacity['size']} items chosen)")
    return f"Choose the exam's gold ({capacity['pool']} of the {capacity['size']} items one attempt needs)"


# key, label, url name, what the link does, whether the project has done it (or, instead of False, what is missing,
# said on the link in place of what it does)
STEPS = (
    ("papers", "Papers", "papers-upload", "Upload papers", lambda p: p.papers.exists()),
    (
        "batch",
        "An open batch",
        "batches",
        "Put contexts in a batch and open it",
        lambda p: p.batches.filter(state=Batch.State.OPEN).exists(),
    ),
    ("drafts", "Drafts", "drafting", "Run drafting", lambda p: p.instances.exists()),
    (
        "qualified",
        "Gold or vouched annotators",
        "qualification-manage",
        "Qualify the first annotators",
        lambda p: qualified_annotators(project=p).exists(),
    ),
    (
        "exam",
        "Exam",
        "qualification-manage",
        "Choose the exam's gold",
        _exam_ready,
    ),
    ("members", "Members (a verifier and two annotators)", "members", "Add members", _has_members),
    (
        "round1",
        "Round one",
        "review-home",
        "Review in round one",
        lambda p: _has_passed(p, PASSED_ROUND_ONE),
    ),
    (
        "round2",
        "Round two",
        "round2-home",
        "Review in round two",
        lambda p: _has_passed(p, PASSED_ROUND_TWO),
    ),
    ("release", "Release", "releases", "Cut a release", lambda p: Release.objects.filter(project=p).exists()),
)


@dataclass(frozen=True)
class Step:
    key: str
    label: str
    done: bool
    url: str
    action: str  # what the link does, said on it ("open" once done, or why it counts as done)


def first_release_steps(*, project: Project) -> list[Step]:
    """STEPS in order, each done or not, with a link to its page. For a caller that has checked the viewer is a
    manager."""
    slug = {"slug": project.slug}
    steps = []
    for key, label, url, action, check in STEPS:
        result = check(project)
        if isinstance(result, Done):
            done, said = True, result.said
        elif isinstance(result, str):  # what is missing
            done, said = False, result
        else:
            done, said = bool(result), "open" if result else action
        steps.append(Step(key, label, done, reverse(url, kwargs=slug), said))
    return steps
