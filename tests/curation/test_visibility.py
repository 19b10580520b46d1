"""Visibility is written once (curation.visibility): every selector's rows, per model × role, and the operator rule."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from annotate.review import selectors as review_selectors
from curation import selectors
from curation.drafting import endpoints as endpoint_services
from curation.endpoints.models import ModelEndpoint
from curation.errors import NotFound, NotPermitted
from curation.models import Batch, Context, Instance, Paper, Project
from curation.papers import selectors as paper_selectors
from curation.releases import selectors as release_selectors
from curation.services.lifecycle import instance_transition
from curation.services.projects import membership_add
from curation.states import Role, Status
from curation.visibility import is_operator
from scoring.models import Prediction, ScoringRun
from scoring.runs import selectors as scoring_selectors
from scoring.runs.uploads import upload_run_create
from tests.conftest import context_build, instance_build, paper_build, personas_build, project_build, user_build
from tests.factories import BatchFactory, ModelEndpointFactory, ProjectFactory
from tests.scoring.run_support import endpoint_for, small_release
from tests.support.shared_world import shared_world, world_copy
from tests.support.sources import parsed

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PEOPLE = ["annotator", "annotator2", "novice", "verifier", "manager", "outsider", "operator", "staff"]


def _scoring_rows(project, name):
    release = small_release(project, questions=1, name=name)
    uid = release.items.first().uid
    content = json.dumps({"uid": uid, "answer": ["2019"]}).encode()
    run = upload_run_create(release=release, actor=None, format="jsonl", name="p.jsonl", content=content)
    return release, run, Prediction.objects.get(run=run, uid=uid)


@pytest.fixture(scope="module")
def _world(django_db_setup, django_db_blocker):
    """Built once for the module; each test runs in a savepoint rolled back after it (tests/support/shared_world.py)."""
    from scoring.runs import tasks

    with shared_world(django_db_blocker) as monkeypatch:
        monkeypatch.setattr(tasks.run_chunk_task, "apply_async", lambda *a, **k: None)
        project = project_build()
        personas = personas_build(project)
        context = context_build(project, paper_build(project))
        yield _world_build(project, personas, context)


@pytest.fixture
def world(_world, db):
    return world_copy(_world)


def _world_build(project, personas, context):
    def make_instance(**fields):
        return instance_build(project, context, **fields)

    people = dict(personas)
    people["operator"] = user_build("operator", is_superuser=True)
    people["staff"] = user_build("staff", is_staff=True)
    other = ProjectFactory(name="Other", slug="other")
    membership_add(project=other, actor=None, username="outsider", role=Role.MANAGER)
    rows = {}
    for key, proj in (("mine", project), ("theirs", other)):
        release, run, prediction = _scoring_rows(proj, f"r-{key}")
        rows[key] = {
            "release": release,
            "run": run,
            "prediction": prediction,
            "endpoint": endpoint_for(proj, "http://127.0.0.1:9/v1", name=f"e-{key}"),
            "batch": BatchFactory(project=proj, name=f"b-{key}"),
        }
    written = make_instance(author=people["annotator"], question="Mine?")
    reviewed = make_instance(author=people["annotator2"], round2_reviewer=people["annotator"], question="R2?")
    theirs = make_instance(author=people["annotator2"], question="Theirs?")
    rows["instances"] = {"written": written, "reviewed": reviewed, "theirs": theirs}
    rows["global"] = ModelEndpointFactory(project=None, name="Global")
    return {"project": project, "other": other, "people": people, "rows": rows, "context": context}


def _ids(qs):
    return set(qs.values_list("pk", flat=True))


def _project_rows(world, model):
    return {
        "mine": _ids(model.objects.filter(project=world["project"])),
        "theirs": _ids(model.objects.filter(project=world["other"])),
    }


# Which of the two projects' rows each person sees, per selector. The outsider manages the other project.
MEMBERS = {"annotator", "annotator2", "novice", "verifier", "manager"}
CURATORS = {"verifier", "manager"}


def _expected(person, allowed_here):
    if person == "operator":
        return {"mine", "theirs"}
    if person == "outsider":
        return {"theirs"}
    return {"mine"} if person in allowed_here else set()


@pytest.mark.parametrize("person", PEOPLE)
@pytest.mark.parametrize(
    ("name", "select", "model", "allowed"),
    [
        ("project", lambda u: selectors.projects_visible_to(u), None, MEMBERS),
        ("paper", lambda u: selectors.papers_visible_to(u), Paper, CURATORS),
        ("batch", lambda u: selectors.batches_visible_to(u), Batch, MEMBERS),
    ],
)
def test_project_scoped_selectors_by_role(world, person, name, select, model, allowed):
    user = world["people"][person]
    seen = _ids(select(user))
    if model is None:
        rows = {"mine": {world["project"].pk}, "theirs": {world["other"].pk}}
    else:
        rows = _project_rows(world, model)
    expected = set().union(*(rows[key] for key in _expected(person, allowed)))
    assert seen == expected and all(rows[key] for key in rows)


@pytest.mark.parametrize("person", PEOPLE)
@pytest.mark.parametrize("kind", ["release", "run", "prediction"])
def test_release_run_and_prediction_gets_by_role(world, person, kind):
    """Members see releases, runs (and gold readers predictions) of their project; other projects' are 'not found'."""
    user = world["people"][person]
    getter = {
        "release": lambda pk: release_selectors.release_get(user=user, release_id=pk),
        "run": lambda pk: scoring_selectors.run_get(user=user, run_id=pk),
        "prediction": lambda pk: scoring_selectors.prediction_get(user=user, prediction_id=pk),
    }[kind]
    expected = _expected(person, MEMBERS)
    for key in ("mine", "theirs"):
        row = world["rows"][key][kind]
        if key not in expected:
            with pytest.raises(NotFound):
                getter(row.pk)
        elif kind == "prediction" and person == "novice":  # a member, but predictions sit beside gold answers
            with pytest.raises(NotPermitted):
                getter(row.pk)
        else:
            assert getter(row.pk).pk == row.pk


@pytest.mark.parametrize("person", PEOPLE)
def test_runs_and_predictions_lists_are_scoped(world, person):
    user = world["people"][person]
    seen = _ids(ScoringRun.objects.visible_to(user))
    expected = {world["rows"][key]["run"].pk for key in _expected(person, MEMBERS)}
    assert seen == expected
    assert _ids(Prediction.objects.visible_to(user)) == {
        world["rows"][key]["prediction"].pk for key in _expected(person, MEMBERS)
    }


INSTANCE_RULE = {
    "annotator": {"written", "reviewed"},
    "annotator2": {"reviewed", "theirs"},
    "novice": set(),
    "verifier": {"written", "reviewed", "theirs"},
    "manager": {"written", "reviewed", "theirs"},
    "outsider": set(),
    "operator": {"written", "reviewed", "theirs"},
    "staff": set(),
}


@pytest.mark.parametrize("person", PEOPLE)
def test_instances_and_their_contexts_by_role(world, person):
    user = world["people"][person]
    instances = world["rows"]["instances"]
    expected = {instances[key].pk for key in INSTANCE_RULE[person]}
    ours = {instance.pk for instance in instances.values()}
    assert _ids(selectors.instances_visible_to(user)) & ours == expected
    # Inside one project the rule is resolved for the viewer first (visible_in): the same rows, every role.
    in_project = _ids(selectors.instances_visible_to(user, world["project"]))
    assert in_project == _ids(selectors.instances_visible_to(user).filter(project=world["project"]))
    assert in_project & ours == expected
    for key, instance in instances.items():
        if key in INSTANCE_RULE[person]:
            assert selectors.instance_get(user=user, instance_id=instance.pk).pk == instance.pk
        else:
            with pytest.raises(NotFound):
                selectors.instance_get(user=user, instance_id=instance.pk)
    contexts = _ids(paper_selectors.contexts_visible_to(user, world["project"]))
    all_contexts = _ids(Context.objects.filter(project=world["project"]))
    if person in ("verifier", "manager", "operator"):
        assert contexts == all_contexts
    elif INSTANCE_RULE[person]:
        assert contexts == {world["context"].pk}
    else:
        assert contexts == set()


ENDPOINTS_SEEN = {  # the same on the scoring and the drafting side: managers and verifiers of the project
    "annotator": set(),
    "novice": set(),
    "verifier": {"mine", "global"},
    "manager": {"mine", "global"},
    "outsider": set(),
    "operator": {"mine", "global"},
    "staff": set(),
}


@pytest.mark.parametrize("person", sorted(ENDPOINTS_SEEN))
def test_one_answer_to_who_sees_an_endpoint(world, person):
    """Scoring and drafting read one rule (curation.visibility): the same endpoints for the same person."""
    user = world["people"][person]
    project = world["project"]
    names = {world["rows"]["mine"]["endpoint"].pk: "mine", world["rows"]["global"].pk: "global"}
    seen = ENDPOINTS_SEEN[person]
    if person in ("outsider", "staff"):
        with pytest.raises(NotFound):
            scoring_selectors.endpoints_for(user=user, project=project)
    else:
        assert {names[pk] for pk in _ids(scoring_selectors.endpoints_for(user=user, project=project))} == seen
    assert {names[pk] for pk in _ids(endpoint_services.endpoints_visible_to(user, project))} == seen
    theirs = world["rows"]["theirs"]["endpoint"]
    everywhere = _ids(ModelEndpoint.objects.visible_to(user))
    assert (theirs.pk in everywhere) == (person in ("outsider", "operator"))
    mine = world["rows"]["mine"]["endpoint"]
    if seen:
        assert endpoint_services.endpoint_get(user=user, endpoint_id=mine.pk).pk == mine.pk
    else:
        with pytest.raises(NotFound if person in ("outsider", "staff") else NotPermitted):
            endpoint_services.endpoint_get(user=user, endpoint_id=mine.pk)


def test_the_operator_rule_is_the_same_in_the_lifecycle(world):
    """A superuser counts as a manager everywhere, including moves only managers make; staff status alone does not."""
    people = world["people"]
    assert is_operator(people["operator"]) and not is_operator(people["staff"])
    draft = world["rows"]["instances"]["theirs"]
    with pytest.raises(NotFound):  # staff outside the project: the instance does not exist for them
        instance_transition(instance_id=draft.pk, target=Status.DISCARDED, actor=people["staff"])
    moved = instance_transition(instance_id=draft.pk, target=Status.DISCARDED, actor=people["operator"])
    assert moved.status == Status.DISCARDED
    assert Role.MANAGER.value in selectors.roles_of(user=people["operator"], project=world["other"])
    assert review_selectors.discussions_visible_to(people["staff"]).count() == 0


def test_no_selector_decides_visibility_by_hand():
    """Selectors start from `.visible_to()`: none filters Membership or reads is_superuser itself."""
    offenders = []
    for app in ("curation", "annotate", "scoring"):
        for path in sorted((ROOT / app).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if "migrations" in path.parts or name == "curation/visibility.py":
                continue
            source = path.read_text()
            for node in ast.walk(parsed(path, source)):
                text = ast.unparse(node) if isinstance(node, ast.Attribute) else ""
                if text.endswith(".is_superuser") or text.endswith(".is_staff"):
                    offenders.append(f"{name}: {text} (the operator rule lives in curation.visibility)")
            # Reads of the team itself, not of scoped rows: the exam page reads the candidate's own membership (their
            # qualification); the members page lists a project's members after a manager check; the instance
            # browser offers staff the qualified annotators to assign to; the hidden-gold figures list a project's
            # annotators after a manager check.
            team_reads = {
                "annotate/qualification/selectors.py",
                "annotate/quality/selectors.py",
                "curation/members/selectors.py",
                "annotate/instances/selectors.py",
            }
            if "selectors" in name and "Membership.objects" in source and name not in team_reads:
                offenders.append(f"{name}: filters Membership by hand")
            if "Q(project=project) | Q(project__isnull=True)" in source:
                offenders.append(f"{name}: decides which endpoints a project uses (ModelEndpoint.objects.usable_in)")
    assert offenders == []


# Selector reads that need no viewer scope, and why: the caller checked access, or the rows are the viewer's own
# exam (whose gold items the viewer may *not* see through visible_to, by design), or an aggregate of a checked project.
_UNSCOPED_READS = {
    ("curation/selectors.py", "instance_for_output"),
    ("curation/selectors.py", "status_counts"),
    # What the queue could hand this annotator: counted (an aggregate), never listed; the claim checks the role.
    ("curation/selectors.py", "claimable_drafts"),
    ("curation/papers/selectors.py", "context_counts"),
    # The viewer's own exam items and hidden-gold probe (question and context only), read by id.
    ("annotate/qualification/selectors.py", "gold_items_shown"),
    # A run's error sample: the caller read the run through visible_to; the sampled predictions (with gold) are read
    # only after can_see_predictions, or by an operator command (user=None).
    ("scoring/runs/selectors.py", "error_sample_report"),
    # How many instances wait for a second annotator: a count of a project whose page checked the viewer's role
    # (round-one home: verifiers and managers; dashboard: managers), never a list.
    ("annotate/agreement/selectors.py", "awaiting_second_count"),
    # The cut form's validated count per batch: a cached whole-project count (figures cache), shown to managers only
    # (the releases page asks it only for a manager); the batches themselves are read through batches_visible_to.
    ("curation/releases/selectors.py", "batches_to_release"),
    ("curation/releases/selectors.py", "validated_per_batch"),
}
_SCOPED_MODELS = ("Instance", "Paper", "Batch", "Context", "Release", "ScoringRun", "ModelEndpoint", "Prediction")


def test_every_selector_read_of_a_scoped_model_starts_from_visible_to():
    offenders = []
    for path in sorted(ROOT.glob("*/**/*selectors.py")):
        name = path.relative_to(ROOT).as_posix()
        for function in ast.walk(parsed(path)):
            if not isinstance(function, ast.FunctionDef) or (name, function.name) in _UNSCOPED_READS:
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Attribute):
                    continue
                manager = node.value
                model = manager.value.id if isinstance(manager.value, ast.Name) else ""
                is_scoped_manager = manager.attr == "objects" and model in _SCOPED_MODELS
                if is_scoped_manager and node.attr != "visible_to":
                    offenders.append(f"{name}::{function.name}: {ast.unparse(node)}")
    assert offenders == []


def test_every_scoped_model_uses_the_one_queryset():
    from annotate.review.models import Discussion
    from curation.releases.models import Release
    from curation.visibility import ProjectScopedQuerySet

    for model in (Project, Paper, Batch, Context, Instance, Release, ScoringRun, ModelEndpoint, Prediction, Discussion):
        assert isinstance(model.objects.all(), ProjectScopedQuerySet), model
