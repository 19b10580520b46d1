"""Hidden gold in the work queue: a probe is an instance of the batch, scored with the exam's EM, never released;
running EM with a Wilson interval; the alert, the audited pause and a restore; a test per role on every door."""

from __future__ import annotations

import itertools
import random
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotate.qualification.first_gold import gold_validate
from annotate.qualification.models import QualificationAttempt
from annotate.qualification.services import gold_candidates
from annotate.quality import services as quality_services
from annotate.quality.intervals import wilson_interval
from annotate.quality.models import GoldProbe, QualityDecision, QualitySettings
from annotate.quality.selectors import pause_of, paused_annotators, project_gold_figures
from annotate.quality.services import annotator_restore, gold_figure, probes_due
from annotate.work.queue import queue_claim
from curation.drafting.signals import drafts_committed
from curation.errors import InvalidInput, NotPermitted
from curation.models import Instance, Membership, TransitionEvent
from curation.states import Role, Status
from tests.annotate.quality.helpers import (
    gold_on,
    make_refined_gold,
    refine_and_submit,
    submit_probe,
    work_until_probe,
)
from tests.conftest import PASSWORD, instance_build
from tests.factories import LongContextFactory
from tests.support.clients import logged_in


def is_qualified(project, user) -> bool:
    return Membership.objects.get(project=project, user=user, role=Role.ANNOTATOR).is_qualified


def test_wilson_interval_matches_the_textbook_values():
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)  # Wilson (1927), 95 %: 8/10 → [0.490, 0.943]
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(5, 5)[1] == 1.0 and wilson_interval(5, 5)[0] > 0.5


def test_a_batch_holds_one_probe_in_every_n_instances_as_it_grows():
    for n in (2, 3, 5):
        held = [probes_due(drafts=d, probes=0, gold_every=n, batch_id=9) for d in range(200)]
        assert all(b - a in (0, 1) for a, b in itertools.pairwise(held))  # at most one more per draft
        assert abs(held[-1] - 199 / (n - 1)) <= 1  # probes are 1/n of the instances
    assert probes_due(drafts=50, probes=0, gold_every=0, batch_id=9) == 0
    assert probes_due(drafts=9, probes=9, gold_every=2, batch_id=9) == 0


def test_hidden_gold_is_off_by_default(personas, project, drafts, gold):
    for _ in range(6):
        claim = queue_claim(project_slug=project.slug, user=personas["annotator"])
        Instance.objects.filter(pk=claim.instance_id).update(status=Status.SUBMITTED)
    assert not GoldProbe.objects.exists()


def test_drafts_committed_bring_probes_numbered_among_them(personas, project, open_batch, context, gold):
    gold_on(project, personas["manager"])
    made = []
    for i in range(6):  # as drafting commits one context's drafts at a time
        made.append(instance_build(project, context, batch=open_batch, draft={"drafter": "llm", "run": 7}).pk)
        drafts_committed.send(sender=None, run=None, batch_id=open_batch.pk)
    probes = sorted(GoldProbe.objects.values_list("instance_id", flat=True))
    # Six due (one in two: a probe after each draft), four made: a batch holds one probe of each gold item at most.
    assert len(probes) == len(gold) == 4
    assert sorted(GoldProbe.objects.values_list("gold_id", flat=True)) == sorted(g.pk for g in gold)
    in_order = sorted([*made, *probes])
    assert in_order[0] in made and all(p - 1 in made for p in probes)  # each right after a draft
    shown = Instance.objects.get(pk=probes[0])
    assert shown.batch_id == open_batch.pk and shown.status == Status.DRAFTED and shown.version == 1
    assert shown.draft["run"] == 7 and shown.draft["question"] == shown.question


def test_probes_come_only_from_the_papers_of_their_batch_and_the_dashboard_names_a_batch_without_gold(
    personas, project, open_batch, context, gold
):
    elsewhere = LongContextFactory(paper__project=project, paper__title="Another paper")
    Instance.objects.filter(pk__in=[g.pk for g in gold]).update(context=elsewhere)  # no gold on the batch's paper
    gold_on(project, personas["manager"])
    for _ in range(4):
        instance_build(project, context, batch=open_batch, draft={"drafter": "llm", "run": 7})
        drafts_committed.send(sender=None, run=None, batch_id=open_batch.pk)
    assert not GoldProbe.objects.exists()  # a probe from another paper would stand out
    client = Client()
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert f'data-batch="{open_batch.pk}" data-reason="no_gold"' in page and open_batch.name in page

    Instance.objects.filter(pk=gold[0].pk).update(context=context)  # gold on the batch's paper
    instance_build(project, context, batch=open_batch, draft={"drafter": "llm", "run": 7})
    drafts_committed.send(sender=None, run=None, batch_id=open_batch.pk)
    probes = list(GoldProbe.objects.select_related("instance__context"))
    assert probes and {p.gold_id for p in probes} == {gold[0].pk}
    assert {p.instance.context.paper_id for p in probes} == {context.paper_id}
    assert 'id="batches-without-probes"' not in client.get(f"/p/{project.slug}/dashboard/").content.decode()


def test_gold_validated_after_hidden_gold_is_on_brings_the_probes_a_batch_lacked(personas, project, open_batch, drafts):
    gold_on(project, personas["manager"], gold_every=5)  # switched on in a new project: no gold to draw from
    assert not GoldProbe.objects.exists()
    figures = project_gold_figures(project)
    assert [(row["batch"], row["reason"]) for row in figures["batches_without_probes"]] == [(open_batch, "no_gold")]
    first = drafts[0]
    gold_validate(
        project=project,
        actor=personas["manager"],
        instance_id=first.pk,
        expected_version=first.version,
        fields={
            "question": "Which model is more accurate, A or B?",
            "answer": ["A"],
            "rationale": "Row A has 87.3, row B 81.0.",
            "answer_type": "span",
            "scale": "",
            "answer_form": "short",
            "answer_source": "table",
            "relevant_table_ids": list(first.context.tables.values_list("id", flat=True)),
            "is_answerable": True,
        },
    )  # as "Validate drafts as gold" does
    probes = list(GoldProbe.objects.select_related("instance"))
    assert probes and {p.gold_id for p in probes} == {first.pk}
    assert {p.instance.batch_id for p in probes} == {open_batch.pk}
    assert all(p.instance.status == Status.DRAFTED for p in probes)
    assert project_gold_figures(project)["batches_without_probes"] == []
    page = logged_in("manager").get(f"/p/{project.slug}/dashboard/").content.decode()
    assert 'id="batches-without-probes"' not in page


def test_the_card_says_why_a_batch_whose_papers_have_gold_holds_no_probe(personas, project, open_batch, context, gold):
    instance_build(project, context, batch=open_batch)  # one draft, on the paper of the gold
    # A rate at which this batch's first probe comes after more than one draft (its place is seeded by the batch).
    every = next(n for n in range(3, 100) if not probes_due(drafts=1, probes=0, gold_every=n, batch_id=open_batch.pk))
    gold_on(project, personas["manager"], gold_every=every)
    assert not GoldProbe.objects.exists()
    (row,) = project_gold_figures(project)["batches_without_probes"]
    assert (row["batch"], row["reason"], row["drafts"]) == (open_batch, "too_few_drafts", 1)
    page = logged_in("manager").get(f"/p/{project.slug}/dashboard/").content.decode()
    assert 'data-reason="too_few_drafts"' in page and "fewer than its first probe waits for" in page

    for _ in range(every):  # drafts that arrive without a drafting commit: nothing tops the batch up
        instance_build(project, context, batch=open_batch)
    (row,) = project_gold_figures(project)["batches_without_probes"]
    assert row["reason"] == "not_placed"
    assert "save hidden gold below" in logged_in("manager").get(f"/p/{project.slug}/dashboard/").content.decode()
    gold_on(project, personas["manager"], gold_every=every)  # as the card says: saving places them
    assert GoldProbe.objects.filter(instance__batch=open_batch).exists()
    assert project_gold_figures(project)["batches_without_probes"] == []


def test_the_card_says_when_no_current_annotator_can_be_served_the_placed_probes(personas, project, drafts, gold):
    """A team of two where one wrote every gold item and the other reviewed it: the claim passes over every probe for
    both, and the card says so, counted by the claim's own rule (a third annotator qualifying is served them)."""
    first, second = personas["annotator"], personas["annotator2"]
    Instance.objects.filter(pk__in=[g.pk for g in gold]).update(author=first, round1_verifier=second)
    gold_on(project, personas["manager"], drafts=drafts)
    placed = GoldProbe.objects.count()
    assert placed
    (row,) = project_gold_figures(project)["batches_without_probes"]
    assert (row["batch"].pk, row["reason"], row["probes"]) == (drafts[0].batch_id, "unservable", placed)
    card = _hidden_gold_card(logged_in("manager").get(f"/p/{project.slug}/dashboard/").content.decode())
    assert 'data-reason="unservable"' in card
    assert f"{placed} probes in" in card and "cannot be served to any current annotator" in card
    for user in (first, second):  # as the card says: neither is ever served one
        while (claim := queue_claim(project_slug=project.slug, user=user)) is not None:
            assert not GoldProbe.objects.filter(instance_id=claim.instance_id).exists()
            refine_and_submit(Instance.objects.get(pk=claim.instance_id), user)
    Membership.objects.filter(project=project, user=personas["novice"]).update(is_qualified=True)
    assert project_gold_figures(project)["batches_without_probes"] == []
    assert work_until_probe(project=project, user=personas["novice"]).instance.status == Status.IN_REFINEMENT


def test_switching_hidden_gold_on_and_off_adds_and_withdraws_unclaimed_probes(personas, project, drafts, gold):
    gold_on(project, personas["manager"], drafts=drafts)
    probes = list(GoldProbe.objects.select_related("instance"))
    assert len(probes) == min(len(drafts), len(gold))  # one in two, each gold item once in the batch at most
    for probe in probes:
        assert probe.instance.batch_id == drafts[0].batch_id and probe.instance.status == Status.DRAFTED
        event = TransitionEvent.objects.get(instance=probe.instance)
        assert (event.from_status, event.to_status, event.version) == ("", "drafted", 1)
        assert event.reason == TransitionEvent.objects.filter(instance=drafts[0]).first().reason
    held = work_until_probe(project=project, user=personas["annotator"])
    gold_on(project, personas["manager"], drafts=drafts, gold_every=0)
    assert list(GoldProbe.objects.values_list("pk", flat=True)) == [held.pk]  # the one in someone's hands stays
    assert Instance.objects.filter(pk=held.instance_id, status=Status.IN_REFINEMENT).exists()


class _FirstPlace(random.Random):
    """A seeded generator whose every `randrange` is the first place."""

    def randrange(self, *args, **kwargs) -> int:
        return 0


def test_switched_on_late_probes_take_ids_and_drafting_times_among_the_unclaimed_drafts(
    personas, project, open_batch, context, drafts, gold, monkeypatch
):
    monkeypatch.setattr(quality_services.random, "Random", _FirstPlace)  # the ids of a run seed the places: fix them
    claimed = queue_claim(project_slug=project.slug, user=personas["annotator2"]).instance_id  # keeps its id
    Instance.objects.filter(batch=open_batch).update(created_at=timezone.now() - timedelta(days=2))
    table = context.tables.first()
    for draft in Instance.objects.filter(batch=open_batch):
        draft.relevant_tables.set([table])
    switched_on = timezone.now()
    gold_on(project, personas["manager"], drafts=drafts)
    rows = list(Instance.objects.filter(batch=open_batch).order_by("pk").values_list("pk", "created_at"))
    probes = set(GoldProbe.objects.values_list("instance_id", flat=True))
    draft_ids = [pk for pk, _ in rows if pk not in probes]
    assert claimed in draft_ids and len(probes) == min(len(drafts), len(gold))  # each gold once at most
    assert min(probes) < max(draft_ids)  # among the drafts, not after them
    assert [at for _, at in rows] == sorted(at for _, at in rows)  # times rise with ids
    assert all(at < switched_on for _, at in rows)
    for pk in draft_ids:  # a renumbered draft keeps its table choices (rows pointing at it follow it)
        assert list(Instance.objects.get(pk=pk).relevant_tables.all()) == [table]
    for pk in [pk for pk, _ in rows]:  # every instance kept its one drafted event, from before the switch
        (event,) = TransitionEvent.objects.filter(instance_id=pk, from_status="")
        assert event.to_status == Status.DRAFTED and event.created_at < switched_on


def test_a_managers_link_to_a_reissued_draft_leads_to_its_new_id_and_is_not_found_for_anyone_else(
    personas, project, context, drafts, gold, monkeypatch
):
    # The probes' places are seeded by ids, which differ from run to run; placed first, every unclaimed draft is
    # reissued by both placements, so a draft reissued twice is certain (a probe placed last reissues no draft).
    monkeypatch.setattr(quality_services.random, "Random", _FirstPlace)
    first_ids = [draft.pk for draft in drafts]
    gold_on(project, personas["manager"], drafts=drafts)
    make_refined_gold(project, context, variant=" in the appendix")  # more gold: saving again places more probes
    second_ids = [draft.pk for draft in drafts]
    gold_on(project, personas["manager"], drafts=drafts)
    assert any(a != b != c for a, b, c in zip(first_ids, second_ids, [d.pk for d in drafts], strict=True))
    manager, verifier = logged_in("manager"), logged_in("verifier")
    for old, draft in zip(first_ids, drafts, strict=True):
        if old == draft.pk:
            continue
        response = manager.get(f"/p/{project.slug}/history/{old}/")  # reissued twice: to the latest id
        assert (response.status_code, response["Location"]) == (302, f"/p/{project.slug}/history/{draft.pk}/")
        # A verifier sees drafts too, but an old id is not found for them, as an id that never was: which old ids
        # lead where would tell the new ids no old one leads to, the probes.
        assert verifier.get(f"/p/{project.slug}/history/{old}/").status_code == 404
        assert verifier.get(f"/p/{project.slug}/history/{draft.pk}/").status_code == 200
    assert manager.get(f"/p/{project.slug}/history/{max(second_ids) + 10_000}/").status_code == 404


def test_a_probe_is_scored_then_reviewed_as_a_draft_and_never_released_or_gold(personas, project, drafts, gold):
    gold_on(project, personas["manager"], drafts=drafts)
    before = {g.pk: (g.status, g.version, list(g.answer)) for g in Instance.objects.filter(pk__in=[g.pk for g in gold])}
    probe = work_until_probe(project=project, user=personas["annotator"])
    # Served again while held, whatever "Next" is pressed.
    assert queue_claim(project_slug=project.slug, user=personas["annotator"]).instance_id == probe.instance_id
    answer = [item.upper() for item in probe.gold.answer][::-1]  # case and order do not matter to EM
    scored = submit_probe(probe, personas["annotator"], answer)
    assert scored.em == 1.0 and scored.user == personas["annotator"] and scored.submitted_at is not None
    after = {g.pk: (g.status, g.version, list(g.answer)) for g in Instance.objects.filter(pk__in=[g.pk for g in gold])}
    assert after == before  # the gold itself is never touched
    # Then it goes where a submitted draft goes: round one, as any other.
    assert Instance.objects.get(pk=probe.instance_id).status == Status.SUBMITTED
    Instance.objects.filter(pk=probe.instance_id).update(status=Status.VALIDATED)  # as round one would
    # One rule keeps it out of releases, exams, gold for probes, agreement and draft costs.
    assert not Instance.objects.without_probes().filter(pk=probe.instance_id).exists()
    assert probe.instance_id not in {g.pk for g in gold_candidates(project)}
    assert Instance.objects.without_probes().filter(pk=drafts[0].pk).exists()


def test_no_probe_of_gold_the_annotator_answered_or_saw_in_an_exam(personas, project, drafts, gold):
    annotator = personas["annotator"]
    QualificationAttempt.objects.create(project=project, user=annotator, item_ids=[gold[0].pk, gold[1].pk])
    gold_on(project, personas["manager"], drafts=drafts)
    served = []
    while (claim := queue_claim(project_slug=project.slug, user=annotator)) is not None:
        probe = GoldProbe.objects.filter(instance_id=claim.instance_id).first()
        if probe is not None:
            served.append(probe.gold_id)
            submit_probe(probe, annotator, ["x"])
        else:
            refine_and_submit(Instance.objects.get(pk=claim.instance_id), annotator)
    assert served and len(served) == len(set(served))  # never the same gold twice
    assert not {gold[0].pk, gold[1].pk} & set(served)  # never gold of their exam
    # Others are served what this annotator passed over.
    other = work_until_probe(project=project, user=personas["annotator2"])
    assert other.instance.status == Status.IN_REFINEMENT


def test_no_gold_is_served_when_no_real_draft_waits(personas, project, open_batch, gold):
    gold_on(project, personas["manager"], gold_every=2)
    for _ in range(4):
        assert queue_claim(project_slug=project.slug, user=personas["annotator"]) is None
    assert not GoldProbe.objects.exists()


def test_below_the_threshold_over_the_minimum_sample_pauses_and_a_manager_restores(personas, project, drafts, gold):
    gold_on(project, personas["manager"], drafts=drafts, gold_threshold=0.9, gold_min_sample=2, is_pause_on_fail=True)
    annotator = personas["annotator"]
    first = work_until_probe(project=project, user=annotator)
    submit_probe(first, annotator, ["wrong"])
    assert is_qualified(project, annotator)  # one item is below the minimum sample
    second = work_until_probe(project=project, user=annotator)
    submit_probe(second, annotator, ["wrong again"])
    assert not is_qualified(project, annotator)
    decision = QualityDecision.objects.get(project=project, user=annotator)
    assert decision.action == "paused" and decision.sample == 2 and decision.em == 0.0 and decision.actor is None
    with pytest.raises(NotPermitted):
        queue_claim(project_slug=project.slug, user=annotator)
    with pytest.raises(NotPermitted):
        annotator_restore(project=project, actor=personas["verifier"], user_id=annotator.pk, reason="fine")
    with pytest.raises(InvalidInput):
        annotator_restore(project=project, actor=personas["manager"], user_id=annotator.pk, reason="  ")
    restored = annotator_restore(
        project=project, actor=personas["manager"], user_id=annotator.pk, reason="Talked it through"
    )
    assert restored.action == "restored" and restored.actor == personas["manager"]
    assert is_qualified(project, annotator)
    assert gold_figure(project=project, user_id=annotator.pk)["n"] == 0  # a fresh record after the restore
    with pytest.raises(InvalidInput):  # not paused any more
        annotator_restore(project=project, actor=personas["manager"], user_id=annotator.pk, reason="again")


def test_without_pause_on_fail_the_annotator_keeps_working(personas, project, drafts, gold):
    gold_on(project, personas["manager"], drafts=drafts, gold_threshold=0.9, gold_min_sample=1)
    probe = work_until_probe(project=project, user=personas["annotator"])
    submit_probe(probe, personas["annotator"], ["wrong"])
    assert is_qualified(project, personas["annotator"])
    assert not QualityDecision.objects.exists()


# --- API: role × action -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("manager", 200), ("verifier", 403), ("annotator", 403), ("outsider", 404), (None, 401)],
)
def test_quality_settings_api_per_role(personas, project, api_client_for, persona, expected):
    client = api_client_for(personas[persona] if persona else None)
    url = f"/api/projects/{project.slug}/quality/"
    assert client.get(url).status_code == expected
    response = client.patch(url, {"gold_every": 5}, format="json")
    assert response.status_code == expected
    assert QualitySettings.objects.filter(project=project, gold_every=5).exists() == (expected == 200)


@pytest.mark.parametrize(
    "body",
    [{"gold_every": -1}, {"gold_every": 1}, {"gold_threshold": 1.5}, {"gold_min_sample": 0}, {"gold_every": "often"}],
)
def test_bad_quality_settings_are_a_400_naming_the_field_and_save_nothing(personas, project, api_client_for, body):
    client = api_client_for(personas["manager"])
    response = client.patch(
        f"/api/projects/{project.slug}/quality/",
        {**body, "gold_min_sample": 3} if "gold_min_sample" not in body else body,
        format="json",
    )
    assert response.status_code == 400
    assert next(iter(body)) in str(response.json())
    assert not QualitySettings.objects.filter(project=project).exclude(gold_every=0, gold_min_sample=10).exists()


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("manager", 200), ("verifier", 403), ("annotator", 403), ("annotator2", 403), ("outsider", 404)],
)
def test_gold_figures_api_per_role(personas, project, drafts, gold, api_client_for, persona, expected):
    gold_on(project, personas["manager"], drafts=drafts)
    probe = work_until_probe(project=project, user=personas["annotator"])
    submit_probe(probe, personas["annotator"], list(probe.gold.answer))
    response = api_client_for(personas[persona]).get(f"/api/projects/{project.slug}/quality/gold/")
    assert response.status_code == expected
    if expected == 200:
        (row,) = response.json()
        assert row["user"] == "annotator" and row["n"] == 1 and row["em"] == 1.0
        assert 0.2 < row["low"] < 0.21 and row["high"] == 1.0  # Wilson for 1/1


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("manager", 200), ("verifier", 403), ("annotator", 403), ("annotator2", 403), ("outsider", 404)],
)
def test_restore_api_per_role(personas, project, drafts, gold, api_client_for, persona, expected):
    gold_on(project, personas["manager"], drafts=drafts, gold_threshold=0.9, gold_min_sample=1, is_pause_on_fail=True)
    probe = work_until_probe(project=project, user=personas["annotator2"])
    submit_probe(probe, personas["annotator2"], ["wrong"])
    assert not is_qualified(project, personas["annotator2"])
    response = api_client_for(personas[persona]).post(
        f"/api/projects/{project.slug}/quality/restore/",
        {"user": personas["annotator2"].pk, "reason": "Re-read the guidelines together"},
        format="json",
    )
    assert response.status_code == expected
    assert is_qualified(project, personas["annotator2"]) == (expected == 200)


# --- pages ----------------------------------------------------------------------------------------------------------


def test_dashboard_alerts_a_manager_and_restores_from_the_page(personas, project, drafts, gold):
    gold_on(project, personas["manager"], drafts=drafts, gold_threshold=0.9, gold_min_sample=1, is_pause_on_fail=True)
    probe = work_until_probe(project=project, user=personas["annotator"])
    submit_probe(probe, personas["annotator"], ["wrong"])
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert 'id="hidden-gold"' in page and "below the threshold" in page and "paused" in page
    # Listed as a probe here only: the manager's quality figures name its instance, gold and score.
    assert f'data-probe="{probe.instance_id}"' in page and f"#{probe.gold_id}" in page
    response = client.post(f"/p/{project.slug}/quality/restore/{personas['annotator'].pk}/", {"reason": "ok now"})
    assert response.status_code == 302
    assert is_qualified(project, personas["annotator"])


def test_a_hidden_gold_setting_out_of_range_is_refused_in_the_words_of_its_label(personas, project, client):
    client.force_login(personas["manager"])
    url = f"/p/{project.slug}/quality/settings/"
    response = client.post(url, {"gold_every": "5", "gold_threshold": "2", "gold_min_sample": "3"}, follow=True)
    assert "Alert below EM: Ensure this value is less than or equal to 1." in response.content.decode()
    response = client.post(url, {"gold_every": "2.5", "gold_threshold": "0.5", "gold_min_sample": "3"}, follow=True)
    assert "1 in N claims (0: off): A valid integer is required." in response.content.decode()
    assert not QualitySettings.objects.filter(project=project, gold_every=5).exists()  # nothing partial kept


def _hidden_gold_card(page: str) -> str:
    return page.split('id="hidden-gold"', 1)[1].split("</section>", 1)[0]


def test_the_hidden_gold_forms_say_what_they_did_in_the_card_they_return_to(personas, project, client):
    """The forms send the manager back to the dashboard at #hidden-gold, so their message is said there, in view,
    not at the top of the page above it."""
    client.force_login(personas["manager"])
    url = f"/p/{project.slug}/quality/settings/"
    response = client.post(url, {"gold_every": "5", "gold_threshold": "0.5", "gold_min_sample": "3"})
    assert response.status_code == 302 and response["Location"].endswith("/dashboard/#hidden-gold")
    page = client.get(response["Location"]).content.decode()
    assert "Hidden-gold settings saved." in _hidden_gold_card(page)
    assert page.count("Hidden-gold settings saved.") == 1  # not at the top as well
    refused = client.post(url, {"gold_every": "5", "gold_threshold": "2", "gold_min_sample": "3"}, follow=True)
    assert "Alert below EM: Ensure this value" in _hidden_gold_card(refused.content.decode())


@pytest.mark.parametrize("persona", ["annotator", "verifier", "outsider"])
def test_only_managers_change_hidden_gold_from_the_page(personas, project, persona):
    client = Client()
    assert client.login(username=persona, password=PASSWORD)
    response = client.post(f"/p/{project.slug}/quality/settings/", {"gold_every": "5", "gold_min_sample": "3"})
    assert response.status_code in (403, 404)
    assert not QualitySettings.objects.filter(project=project, gold_every=5).exists()


def test_a_probe_marked_not_answerable_is_submitted_like_a_draft_and_scores_zero(
    personas, project, drafts, gold, api_client_for
):
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    mine = api_client_for(personas["annotator"])
    url = f"/api/instances/{probe.instance_id}/"
    refused = mine.post(f"{url}submit/", {"expected_version": 2, "is_answerable": False}, format="json")
    assert refused.status_code == 400 and "unanswerable_reason" in str(refused.json())  # the draft's rule
    body = {"expected_version": 2, "is_answerable": False, "unanswerable_reason": "No table gives it.", "answer": []}
    response = mine.post(f"{url}submit/", body, format="json")
    assert response.status_code == 200 and response.json()["status"] == "submitted"
    assert GoldProbe.objects.get(pk=probe.pk).em == 0.0


def test_a_pause_older_than_the_audit_list_still_counts_on_the_dashboard_and_in_the_vouch_form(personas, project):
    annotator, other = personas["annotator"], personas["annotator2"]
    Membership.objects.filter(project=project, user=annotator).update(is_qualified=False)
    QualityDecision.objects.create(project=project, user=annotator, action="paused", reason="EM 0.2 on 10")
    for action in ["paused", "restored"] * 110:  # another annotator's later decisions fill the audit list
        QualityDecision.objects.create(project=project, user=other, action=action, reason="x", actor=None)
    figures = project_gold_figures(project)
    assert annotator.pk not in {decision.user_id for decision in figures["decisions"]}  # the list shows 200
    (row,) = [row for row in figures["gold_rows"] if row["user_id"] == annotator.pk]
    assert row["is_paused"]
    assert paused_annotators(project=project) == {annotator.pk}
    assert pause_of(project=project, user=annotator).reason == "EM 0.2 on 10"


def test_the_gold_table_reads_every_annotators_probes_in_the_same_queries_for_2_and_8_annotators(
    personas, project, make_instance, make_user
):
    """One read of the project's scored probes, not three queries per annotator; each figure counts only the probes
    scored since the annotator's latest qualification, and `total` every scored probe."""
    from curation.services.projects import membership_add
    from tests.support.queries import count_queries

    gold = make_instance(question="Which is gold?")
    now = timezone.now()

    def team_of(size: int) -> None:
        for n in range(Membership.objects.filter(project=project, role=Role.ANNOTATOR).count(), size):
            user = make_user(f"probed{n}")
            membership_add(project=project, actor=None, username=user.username, role=Role.ANNOTATOR, is_qualified=True)
            Membership.objects.filter(project=project, user=user).update(qualified_at=now)
            for ago, em in ((timedelta(days=1), 0.0), (-timedelta(minutes=1), 1.0), (-timedelta(minutes=2), 0.0)):
                GoldProbe.objects.create(project=project, gold=gold, user=user, submitted_at=now - ago, em=em)

    def figure_queries() -> tuple[int, dict]:
        with count_queries() as executed:
            figures = project_gold_figures(project)
        return len(executed), {row["user"]: row for row in figures["gold_rows"]}

    team_of(2)
    few, _ = figure_queries()
    team_of(8)
    many, rows = figure_queries()
    assert many == few
    assert rows["probed7"]["n"] == 2 and rows["probed7"]["em"] == 0.5 and rows["probed7"]["total"] == 3
