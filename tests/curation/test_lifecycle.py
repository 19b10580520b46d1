"""The lifecycle: every legal transition by the right person, and the refusals (table, role, relation, staleness)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from django.utils import timezone

from curation.errors import Conflict, InvalidInput, NotFound, NotPermitted
from curation.models import Instance, TransitionEvent
from curation.services.lifecycle import instance_transition
from curation.states import TRANSITION_TABLE, Status
from tests.support.sources import parsed

S = Status

# What the guarded moves need (curation.states: a change request says what to change, a flag what is wrong).
DETAILS = {
    S.CHANGES_REQUESTED: {"comments": [{"field": "answer", "text": "The answer is in table 2."}]},
    S.IN_DISCUSSION: {"message": "The answer misreads the table."},
}


@pytest.fixture
def make_instance(make_instance):
    """Instances complete enough to be submitted (the submission guard refuses anything less)."""

    def make(**fields):
        fields.setdefault("answer_form", "short")
        fields.setdefault("answer_source", "text")
        fields.setdefault("answer_type", "span")
        return make_instance(**fields)

    return make


def move(instance: Instance, target: str, actor, reason: str = "", details: dict | None = None) -> Instance:
    return instance_transition(
        instance_id=instance.pk,
        target=target,
        actor=actor,
        expected_version=instance.version,
        reason=reason,
        details=DETAILS.get(target) if details is None else details,
    )


# The path to each status, as (target, persona) steps from drafted.
PATHS: dict[str, list[tuple[str, str]]] = {
    S.DRAFTED: [],
    S.IN_REFINEMENT: [(S.IN_REFINEMENT, "annotator")],
    S.SUBMITTED: [(S.IN_REFINEMENT, "annotator"), (S.SUBMITTED, "annotator")],
    S.ROUND1_REVIEW: [(S.IN_REFINEMENT, "annotator"), (S.SUBMITTED, "annotator"), (S.ROUND1_REVIEW, "verifier")],
    S.CHANGES_REQUESTED: [
        (S.IN_REFINEMENT, "annotator"),
        (S.SUBMITTED, "annotator"),
        (S.ROUND1_REVIEW, "verifier"),
        (S.CHANGES_REQUESTED, "verifier"),
    ],
    S.ROUND2_REVIEW: [
        (S.IN_REFINEMENT, "annotator"),
        (S.SUBMITTED, "annotator"),
        (S.ROUND1_REVIEW, "verifier"),
        (S.ROUND2_REVIEW, "verifier"),
    ],
    S.IN_DISCUSSION: [
        (S.IN_REFINEMENT, "annotator"),
        (S.SUBMITTED, "annotator"),
        (S.ROUND1_REVIEW, "verifier"),
        (S.ROUND2_REVIEW, "verifier"),
        (S.IN_DISCUSSION, "annotator2"),
    ],
    S.VALIDATED: [
        (S.IN_REFINEMENT, "annotator"),
        (S.SUBMITTED, "annotator"),
        (S.ROUND1_REVIEW, "verifier"),
        (S.ROUND2_REVIEW, "verifier"),
        (S.VALIDATED, "annotator2"),
    ],
    S.DISCARDED: [(S.DISCARDED, "manager")],
}
PATHS[S.RELEASED] = [*PATHS[S.VALIDATED], (S.RELEASED, "manager")]

# Who may perform each legal transition in the scenario above (the first is the one the tests use).
ALLOWED_ACTOR = {
    (S.DRAFTED, S.IN_REFINEMENT): ("annotator", "annotator2"),
    (S.DRAFTED, S.VALIDATED): "manager",  # a new project's first gold (annotate.qualification.first_gold)
    (S.IN_REFINEMENT, S.DRAFTED): "annotator",
    (S.IN_REFINEMENT, S.SUBMITTED): "annotator",
    (S.IN_REFINEMENT, S.CHANGES_REQUESTED): (),  # only the lease reaper (actor=None)
    (S.SUBMITTED, S.ROUND1_REVIEW): ("verifier", "verifier2"),
    (S.ROUND1_REVIEW, S.SUBMITTED): "verifier",
    (S.ROUND1_REVIEW, S.CHANGES_REQUESTED): "verifier",
    (S.ROUND1_REVIEW, S.ROUND2_REVIEW): "verifier",
    (S.CHANGES_REQUESTED, S.IN_REFINEMENT): "annotator",
    (S.ROUND2_REVIEW, S.ROUND2_REVIEW): "annotator2",
    (S.ROUND2_REVIEW, S.VALIDATED): "annotator2",
    (S.ROUND2_REVIEW, S.IN_DISCUSSION): "annotator2",
    (S.IN_DISCUSSION, S.VALIDATED): "verifier",
    (S.IN_DISCUSSION, S.CHANGES_REQUESTED): "verifier",
    (S.VALIDATED, S.RELEASED): "manager",
    (S.DISCARDED, S.DRAFTED): "manager",
}


def reach(make_instance, personas, status: str) -> Instance:
    instance = make_instance()
    for target, persona in PATHS[status]:
        instance = move(instance, target, personas[persona])
    assert instance.status == status
    return instance


def allowed_actors(source: str, target: str) -> tuple[str, ...]:
    allowed = "manager" if target == S.DISCARDED else ALLOWED_ACTOR[(source, target)]
    return (allowed,) if isinstance(allowed, str) else allowed


@pytest.mark.parametrize(("source", "target"), sorted(TRANSITION_TABLE))
def test_every_legal_transition_succeeds_and_is_audited(make_instance, personas, source, target):
    instance = reach(make_instance, personas, source)
    allowed = allowed_actors(source, target)
    actor = personas[allowed[0]] if allowed else None
    before = instance.version

    moved = move(instance, target, actor, reason="because")

    assert moved.status == target
    assert moved.version == before + 1
    event = TransitionEvent.objects.filter(instance=instance).latest("id")
    assert (event.actor, event.from_status, event.to_status, event.reason) == (actor, source, target, "because")


@pytest.mark.parametrize(("source", "target"), sorted(TRANSITION_TABLE))
def test_every_legal_transition_is_refused_to_everyone_else(make_instance, personas, source, target):
    instance = reach(make_instance, personas, source)
    allowed = allowed_actors(source, target)
    for name, person in personas.items():
        if name in allowed:
            continue
        # Outside the actor's projects the instance does not exist: 404 before anything else is checked.
        with pytest.raises(NotFound if name == "outsider" else NotPermitted):
            move(instance, target, person)
    assert Instance.objects.get(pk=instance.pk).status == source


ILLEGAL = [(a, b) for a in Status.values for b in Status.values if (a, b) not in TRANSITION_TABLE]


@pytest.mark.parametrize(("source", "target"), ILLEGAL)
def test_transitions_outside_the_table_are_refused(make_instance, personas, source, target):
    instance = reach(make_instance, personas, source)
    with pytest.raises(InvalidInput, match=f"from {source} to {target}"):
        move(instance, target, personas["manager"])
    assert TransitionEvent.objects.filter(instance=instance).count() == len(PATHS[source]) + 1


def test_verifier_cannot_review_own_instance(make_instance, personas, project):
    from curation.services.projects import membership_add

    membership_add(project=project, actor=None, username="verifier", role="annotator", is_qualified=True)
    instance = make_instance()
    instance = move(instance, S.IN_REFINEMENT, personas["verifier"])
    instance = move(instance, S.SUBMITTED, personas["verifier"])
    with pytest.raises(NotPermitted, match="own work"):
        move(instance, S.ROUND1_REVIEW, personas["verifier"])


def test_round_one_verifier_cannot_do_round_two(make_instance, personas, project):
    from curation.services.projects import membership_add

    membership_add(project=project, actor=None, username="verifier", role="annotator", is_qualified=True)
    instance = reach(make_instance, personas, S.ROUND2_REVIEW)
    with pytest.raises(NotPermitted, match="other than the author and the round-one verifier"):
        move(instance, S.VALIDATED, personas["verifier"])


def test_author_cannot_do_round_two_on_own_work(make_instance, personas):
    instance = reach(make_instance, personas, S.ROUND2_REVIEW)
    with pytest.raises(NotPermitted):
        move(instance, S.VALIDATED, personas["annotator"])


def test_unqualified_annotator_cannot_claim(make_instance, personas):
    with pytest.raises(NotPermitted, match="qualification"):
        move(make_instance(), S.IN_REFINEMENT, personas["novice"])


def test_resubmitted_instance_returns_to_the_same_verifier(make_instance, personas):
    instance = reach(make_instance, personas, S.CHANGES_REQUESTED)
    instance = move(instance, S.IN_REFINEMENT, personas["annotator"])
    instance = move(instance, S.SUBMITTED, personas["annotator"])
    with pytest.raises(NotPermitted, match="returns to the verifier"):
        move(instance, S.ROUND1_REVIEW, personas["verifier2"])
    assert move(instance, S.ROUND1_REVIEW, personas["verifier"]).round1_verifier == personas["verifier"]


def test_stale_version_is_a_conflict_and_writes_nothing(make_instance, personas):
    instance = make_instance()
    move(instance, S.IN_REFINEMENT, personas["annotator"])
    with pytest.raises(Conflict):
        move(instance, S.DISCARDED, personas["manager"])  # still carries version 1
    current = Instance.objects.get(pk=instance.pk)
    assert (current.status, current.version) == (S.IN_REFINEMENT, 2)


def test_claim_assigns_author_and_skip_releases_it(make_instance, personas):
    instance = move(make_instance(), S.IN_REFINEMENT, personas["annotator"])
    assert instance.author == personas["annotator"]
    instance = move(instance, S.DRAFTED, personas["annotator"], reason="not my field")
    assert instance.author is None


def test_background_jobs_only_perform_system_transitions(make_instance, personas):
    instance = move(make_instance(), S.IN_REFINEMENT, personas["annotator"])
    assert instance_transition(instance_id=instance.pk, target=S.DRAFTED, actor=None).status == S.DRAFTED
    with pytest.raises(NotPermitted):
        instance_transition(instance_id=instance.pk, target=S.DISCARDED, actor=None)


def _leftmost_name(node: ast.AST) -> str:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


# Raw SQL that sets the status column of the instance table.
RAW_STATUS_WRITE = re.compile(
    r"UPDATE\s+\"?curation_instance\"?\s+SET\b(?:(?!\bWHERE\b)[^;])*\bstatus\s*=", re.I | re.S
)


def _status_writes(path: Path) -> list[str]:
    """Places that write an Instance status: `<instance>.status = …`, `x.status = Status.…`, or
    update/create(status=…) on an Instance queryset or manager."""
    tree = parsed(path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and RAW_STATUS_WRITE.search(node.value):
            found.append(f"{path}:{node.lineno}")
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == "status":
                    owner = ast.unparse(target.value).lower()
                    if "instance" in owner or _leftmost_name(node.value) == "Status":
                        found.append(f"{path}:{node.lineno}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in {"update", "create", "get_or_create", "update_or_create", "bulk_update", "save"}:
                writes_status = any(k.arg in ("status", "defaults") for k in node.keywords) or any(
                    isinstance(a, ast.List) and "status" in ast.unparse(a) for a in node.args
                )
                receiver = ast.unparse(node.func.value).lower()
                is_instance = "instance" in receiver or any(
                    k.arg == "status" and _leftmost_name(k.value) == "Status" for k in node.keywords
                )
                update_fields = any(
                    k.arg == "update_fields" and "status" in ast.unparse(k.value) for k in node.keywords
                )
                if (writes_status and is_instance) or (update_fields and "instance" in receiver):
                    found.append(f"{path}:{node.lineno}")
    return found


def test_nothing_but_the_lifecycle_function_writes_instance_status():
    root = Path(__file__).resolve().parents[2]
    offenders = []
    for app in ("curation", "annotate", "scoring"):
        for path in (root / app).rglob("*.py"):
            if "migrations" in path.parts or path.name == "lifecycle.py":
                continue
            offenders += _status_writes(path)
    assert offenders == []


def test_status_write_detector_finds_a_direct_write(tmp_path):
    sample = tmp_path / "bad.py"
    sample.write_text(
        "Instance.objects.filter(pk=1).update(status='validated')\n"
        "instance.status = 'x'\n"
        "obj.status = Status.VALIDATED\n"
        "instance.save(update_fields=['status'])\n"
        "Instance.objects.filter(status=Status.DRAFTED).update(question='q')\n"  # a read, not a write
        "response.status = 200\n"  # not an instance
        'cursor.execute("UPDATE curation_instance SET status = %s WHERE id = %s", params)\n'
        'cursor.execute("UPDATE curation_instance SET question = %s WHERE status = %s", params)\n'  # a read
    )
    assert len(_status_writes(sample)) == 5


def test_a_hook_watching_claims_runs_for_the_single_statement_claim(monkeypatch, personas, project, drafts):
    from curation.services import lifecycle

    seen = []
    monkeypatch.setattr(lifecycle, "_AFTER_TRANSITION", [])
    lifecycle.on_transition(
        lambda instance, source, target: seen.append((instance.pk, source, target)), targets=[Status.IN_REFINEMENT]
    )
    claimed = lifecycle.instance_claim(
        project_slug=project.slug, actor=personas["annotator"], lease_expires_at=timezone.now()
    )
    assert seen == [(claimed[0], Status.DRAFTED, Status.IN_REFINEMENT)]
    instance_transition(instance_id=claimed[0], target=Status.DRAFTED, actor=personas["annotator"])
    assert len(seen) == 1  # not watching drafted


# --- The table's guards and effects hold for every caller of instance_transition ----------------------------


def test_system_transitions_are_moves_of_the_table():
    from curation.states import SYSTEM_TRANSITIONS

    assert SYSTEM_TRANSITIONS <= set(TRANSITION_TABLE)
    assert (S.IN_REFINEMENT, S.CHANGES_REQUESTED) in SYSTEM_TRANSITIONS  # the lease on resumed work


def test_nobody_returns_resumed_work_by_hand(make_instance, personas):
    instance = reach(make_instance, personas, S.CHANGES_REQUESTED)
    instance = move(instance, S.IN_REFINEMENT, personas["annotator"])
    for name, person in personas.items():
        with pytest.raises(NotFound if name == "outsider" else NotPermitted):
            move(instance, S.CHANGES_REQUESTED, person)
    assert move(instance, S.CHANGES_REQUESTED, None).status == S.CHANGES_REQUESTED


def test_an_empty_instance_cannot_be_submitted(make_instance, personas):
    instance = move(make_instance(question=" ", answer=[]), S.IN_REFINEMENT, personas["annotator"])
    with pytest.raises(InvalidInput, match="Write the question") as refused:
        move(instance, S.SUBMITTED, personas["annotator"])
    assert {p["field"] for p in refused.value.detail["problems"]} >= {"question", "answer"}
    assert Instance.objects.get(pk=instance.pk).status == S.IN_REFINEMENT
    assert not TransitionEvent.objects.filter(instance=instance, to_status=S.SUBMITTED).exists()


def test_submission_keeps_the_submitted_text_as_a_revision(make_instance, personas):
    instance = reach(make_instance, personas, S.SUBMITTED)
    assert instance.revisions.filter(kind="submit").get().fields["question"] == instance.question


def test_a_change_request_needs_a_comment_and_records_it(make_instance, personas):
    from annotate.review.models import ReviewComment

    instance = reach(make_instance, personas, S.ROUND1_REVIEW)
    for empty in ({}, {"comments": []}, {"comments": [{"field": "", "text": "   "}]}):
        with pytest.raises(InvalidInput, match="Say what to change"):
            move(instance, S.CHANGES_REQUESTED, personas["verifier"], details=empty)
    assert Instance.objects.get(pk=instance.pk).status == S.ROUND1_REVIEW
    move(instance, S.CHANGES_REQUESTED, personas["verifier"])
    assert list(ReviewComment.objects.filter(instance=instance).values_list("field", "text")) == [
        ("answer", "The answer is in table 2.")
    ]


def test_a_flag_needs_a_reason_and_opens_a_discussion(make_instance, personas):
    from annotate.review.models import Discussion

    instance = reach(make_instance, personas, S.ROUND2_REVIEW)
    with pytest.raises(InvalidInput, match="Say what is wrong"):
        move(instance, S.IN_DISCUSSION, personas["annotator2"], details={})
    assert not Discussion.objects.filter(instance=instance).exists()
    move(instance, S.IN_DISCUSSION, personas["annotator2"])
    discussion = Discussion.objects.get(instance=instance)
    assert (discussion.is_open, discussion.verifier, discussion.opened_by) == (
        True,
        personas["verifier"],
        personas["annotator2"],
    )


def test_deciding_needs_an_open_discussion_and_closes_it(make_instance, personas):
    from annotate.review.models import Discussion

    instance = reach(make_instance, personas, S.IN_DISCUSSION)
    Discussion.objects.filter(instance=instance).delete()  # a flag that somehow lost its thread
    with pytest.raises(Conflict, match="no open discussion"):
        move(instance, S.VALIDATED, personas["verifier"])
    other = reach(make_instance, personas, S.IN_DISCUSSION)
    move(other, S.VALIDATED, personas["verifier"])
    decided = Discussion.objects.get(instance=other)
    assert (decided.outcome, decided.resolution, decided.decided_by) == (
        Discussion.Outcome.REJECTED,
        Discussion.Resolution.KEPT,
        personas["verifier"],
    )


@pytest.mark.parametrize("source", [S.ROUND1_REVIEW, S.ROUND2_REVIEW, S.IN_DISCUSSION])
def test_an_emptied_instance_never_becomes_validated_or_approved(make_instance, personas, source):
    instance = reach(make_instance, personas, source)
    Instance.objects.filter(pk=instance.pk).update(question="", answer=[])  # emptied after submission
    target, persona = {
        S.ROUND1_REVIEW: (S.ROUND2_REVIEW, "verifier"),
        S.ROUND2_REVIEW: (S.VALIDATED, "annotator2"),
        S.IN_DISCUSSION: (S.VALIDATED, "verifier"),
    }[source]
    with pytest.raises(InvalidInput, match="Not ready"):
        move(instance, target, personas[persona])
    assert Instance.objects.get(pk=instance.pk).status == source


def test_a_move_whose_rule_is_not_installed_is_refused(make_instance, personas, monkeypatch):
    from curation.services import lifecycle
    from curation.states import SUBMISSION_COMPLETE

    monkeypatch.delitem(lifecycle._RULES, SUBMISSION_COMPLETE)
    instance = move(make_instance(), S.IN_REFINEMENT, personas["annotator"])
    with pytest.raises(NotPermitted, match="not installed"):
        move(instance, S.SUBMITTED, personas["annotator"])
    assert Instance.objects.get(pk=instance.pk).status == S.IN_REFINEMENT


def test_the_claim_sql_takes_every_status_and_role_from_the_states(monkeypatch):
    from types import SimpleNamespace

    from curation.models import Batch
    from curation.services import lifecycle
    from curation.states import Role

    quoted = re.compile(r"'([^']*)'")
    current = {S.DRAFTED.value, S.IN_REFINEMENT.value, S.CHANGES_REQUESTED.value, Role.ANNOTATOR.value}
    for sql in lifecycle.CLAIM_SQL.values():
        assert set(quoted.findall(sql)) <= current | {Batch.State.OPEN.value, *Batch.PanelOrder.values} - {""}

    renamed = SimpleNamespace(
        DRAFTED=SimpleNamespace(value="draft_x"),
        IN_REFINEMENT=SimpleNamespace(value="refining_x"),
        CHANGES_REQUESTED=SimpleNamespace(value="returned_x"),
    )
    monkeypatch.setattr(lifecycle, "Status", renamed)
    monkeypatch.setattr(lifecycle, "Role", SimpleNamespace(ANNOTATOR=SimpleNamespace(value="worker_x")))
    for vendor, sql in lifecycle.claim_sql().items():
        literals = set(quoted.findall(sql))
        assert literals & current == set(), vendor  # no copied value survives a rename
        assert {"draft_x", "refining_x"} <= literals, vendor
    assert {"returned_x", "worker_x"} <= set(quoted.findall(lifecycle.claim_sql()["sqlite"]))


def test_resumed_changes_never_go_back_to_the_general_queue(make_instance, personas):
    instance = reach(make_instance, personas, S.CHANGES_REQUESTED)
    instance = move(instance, S.IN_REFINEMENT, personas["annotator"])
    with pytest.raises(InvalidInput, match="cannot go back to the queue"):
        move(instance, S.DRAFTED, personas["annotator"])
    with pytest.raises(InvalidInput, match="cannot go back to the queue"):
        move(instance, S.DRAFTED, None)  # nor does the reaper send it there
    assert Instance.objects.get(pk=instance.pk).status == S.IN_REFINEMENT


def test_a_restored_instance_claimed_afresh_may_be_skipped(make_instance, personas):
    instance = reach(make_instance, personas, S.CHANGES_REQUESTED)
    instance = move(instance, S.DISCARDED, personas["manager"])
    instance = move(instance, S.DRAFTED, personas["manager"])
    instance = move(instance, S.IN_REFINEMENT, personas["annotator2"])
    assert move(instance, S.DRAFTED, personas["annotator2"]).status == S.DRAFTED


def test_an_outsider_cannot_tell_another_projects_instance_from_a_missing_id(make_instance, personas):
    instance = make_instance()
    refusals = []
    for instance_id in (instance.pk, instance.pk + 10_000):
        with pytest.raises(NotFound) as refused:
            instance_transition(
                instance_id=instance_id, target=S.DISCARDED, actor=personas["outsider"], expected_version=999
            )
        refusals.append(str(refused.value).replace(str(instance_id), "N"))
    assert refusals[0] == refusals[1]


def test_a_stale_action_tells_a_member_who_cannot_read_the_instance_nothing_of_its_state(make_instance, personas):
    instance = move(make_instance(), S.IN_REFINEMENT, personas["annotator"])
    with pytest.raises(Conflict) as refused:
        instance_transition(
            instance_id=instance.pk, target=S.SUBMITTED, actor=personas["annotator2"], expected_version=999
        )
    assert not refused.value.detail and "in_refinement" not in str(refused.value)
    with pytest.raises(Conflict) as told:  # the author, who reads it, is told what changed
        instance_transition(
            instance_id=instance.pk, target=S.SUBMITTED, actor=personas["annotator"], expected_version=999
        )
    assert told.value.detail["status"] == S.IN_REFINEMENT
