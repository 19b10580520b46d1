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


@dataclass(frozen=True)
class Step:
    key: str
    label: str
    done: bool
    url: str
    action: str  # what the link does, said on it


def first_release_steps(*, project: Project) -> list[Step]:
    """The nine steps in order (papers, batch, drafts, qualified annotators, exam, members, round one, round two,
    release), each done or not, with a link to its page. For a caller that has checked the viewer is a manager."""
    slug = {"slug": project.slug}
    instances = project.instances.all()
    roles = set(Membership.objects.filter(project=project).values_list("role", flat=True))
    qualified = qualified_annotators(project=project).exists()
    return [
        Step("papers", "Papers", project.papers.exists(), reverse("papers-upload", kwargs=slug), "Upload papers"),
        Step(
            "batch",
            "An open batch",
            project.batches.filter(state=Batch.State.OPEN).exists(),
            reverse("batches", kwargs=slug),
            "Put contexts in a batch and open it",
        ),
        Step("drafts", "Drafts", instances.exists(), reverse("drafting", kwargs=slug), "Run drafting"),
        Step(
            "qualified",
            "Gold or vouched annotators",
            qualified,
            reverse("qualification-manage", kwargs=slug),
            "Qualify the first annotators",
        ),
        Step(
            "exam",
            "Exam",
            QualificationItem.objects.filter(settings__project=project).exists(),
            reverse("qualification-manage", kwargs=slug),
            "Choose the exam's gold",
        ),
        Step(
            "members",
            "Members (a verifier and two annotators)",
            Role.VERIFIER in roles and Membership.objects.filter(project=project, role=Role.ANNOTATOR).count() >= 2,
            reverse("members", kwargs=slug),
            "Add members",
        ),
        Step(
            "round1",
            "Round one",
            instances.filter(status__in=PAST_ROUND_ONE).exists(),
            reverse("review-home", kwargs=slug),
            "Review in round one",
        ),
        Step(
            "round2",
            "Round two",
            instances.filter(status__in=PAST_ROUND_TWO).exists(),
            reverse("round2-home", kwargs=slug),
            "Review in round two",
        ),
        Step(
            "release",
            "Release",
            Release.objects.filter(project=project).exists(),
            reverse("releases", kwargs=slug),
            "Cut a release",
        ),
    ]
