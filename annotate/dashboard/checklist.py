"""The manager's checklist of a first release: each step of the pipeline, whether the project has done it, and the
page where the next thing to do is (shown on the project page)."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from annotate.qualification.models import QualificationItem
from curation.members.selectors import qualified_annotators
from curation.models import Batch, Membership, Project
from curation.releases.models import Release
from curation.states import Role, Status

PAST_ROUND_ONE = (Status.ROUND2_REVIEW, Status.IN_DISCUSSION, Status.VALIDATED, Status.RELEASED)
PAST_ROUND_TWO = (Status.VALIDATED, Status.RELEASED)


def _has_members(p: Project) -> bool:
    roles = list(Membership.objects.filter(project=p).values_list("role", flat=True))
    return Role.VERIFIER in roles and roles.count(Role.ANNOTATOR) >= 2


# key, label, url name, what the link does, whether the project has done it
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
        lambda p: QualificationItem.objects.filter(settings__project=p).exists(),
    ),
    ("members", "Members (a verifier and two annotators)", "members", "Add members", _has_members),
    (
        "round1",
        "Round one",
        "review-home",
        "Review in round one",
        lambda p: p.instances.filter(status__in=PAST_ROUND_ONE).exists(),
    ),
    (
        "round2",
        "Round two",
        "round2-home",
        "Review in round two",
        lambda p: p.instances.filter(status__in=PAST_ROUND_TWO).exists(),
    ),
    ("release", "Release", "releases", "Cut a release", lambda p: Release.objects.filter(project=p).exists()),
)


@dataclass(frozen=True)
class Step:
    key: str
    label: str
    done: bool
    url: str
    action: str  # what the link does, said on it


def first_release_steps(*, project: Project) -> list[Step]:
    """STEPS in order, each done or not, with a link to its page. For a caller that has checked the viewer is a
    manager."""
    slug = {"slug": project.slug}
    return [
        Step(key, label, done(project), reverse(url, kwargs=slug), action) for key, label, url, action, done in STEPS
    ]
