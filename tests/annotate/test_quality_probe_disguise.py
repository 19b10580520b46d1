"""Hidden gold that cannot be told from a draft: a probe opens prefilled as its gold's original draft did (imported
gold as an imported draft does), never with an item of the annotator's exam, and its row under Done reads as a real
handed-in item's does after that item has moved on."""

from __future__ import annotations

import re

from django.test import Client

from annotate.qualification.models import QualificationAttempt
from annotate.quality.models import GoldProbe
from annotate.quality.services import probe_submit
from annotate.work.probes import probe_instance
from annotate.work.queue import queue_claim
from annotate.work.workspace import marked_tables
from curation.models import Instance
from curation.services.lifecycle import instance_create
from curation.states import Status
from tests.annotate.qualification_support import GOLD
from tests.annotate.quality_helpers import DRAFTED, gold_on, make_refined_gold, refine_and_submit, work_until_probe
from tests.conftest import PASSWORD


def annotator_client() -> Client:
    client = Client()
    assert client.login(username="annotator", password=PASSWORD)
    return client


def test_a_probe_opens_with_its_gold_s_original_draft_not_the_refined_gold(personas, project, context, drafts):
    gold = make_refined_gold(project, context)
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    drafted_answer, drafted_rationale = DRAFTED[[g.pk for g in gold].index(probe.gold_id)]
    body = annotator_client().get(f"/api/instances/{probe.number}/workspace/").json()
    shown = body["instance"]
    assert shown["question"] == probe.gold.question  # the question the gold answer scores
    assert shown["answer"] == drafted_answer and shown["rationale"] == drafted_rationale
    assert (shown["answer_type"], shown["scale"]) == ("arithmetic", "percent")  # as drafted, not the gold's "span"
    assert marked_tables(probe_instance(probe))["relevant"] == set(context.tables.values_list("id", flat=True))
    assert body["draft"]["answer"] == drafted_answer and body["draft"]["question"] == probe.gold.question
    assert probe.gold.answer != drafted_answer and probe.gold.answer[0] not in str(body)
    # Handed in as opened (the draft's answer kept), it is scored as the draft's answer: wrong against the gold.
    mine = annotator_client()
    response = mine.post(
        f"/api/instances/{probe.number}/submit/",
        {"expected_version": 2, "answer_form": "short", "answer_source": "table"},  # claimed at 2, as a draft is
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    scored = GoldProbe.objects.get(pk=probe.pk)
    assert (scored.answer, scored.em) == (drafted_answer, 0.0)


def test_imported_gold_opens_as_an_imported_draft_does_question_only(personas, project, context, drafts):
    record = {"origin": "import", "format": "tatqa", "source": "gold.json"}
    for question, answer, rationale in GOLD:
        instance_create(
            project_id=project.pk,
            actor=None,
            initial_status=Status.VALIDATED,
            context=context,
            question=question,
            answer=answer,
            rationale=rationale,
            draft=record,
        )
    imported_draft = instance_create(
        project_id=project.pk, actor=None, context=context, question="Which model is best?", draft=record
    )
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    body = annotator_client().get(f"/api/instances/{probe.number}/workspace/").json()
    shown = body["instance"]
    assert shown["question"] == probe.gold.question
    assert (shown["rationale"], shown["answer"]) == (imported_draft.rationale, imported_draft.answer) == ("", [])
    assert body["draft"] == record  # what an imported draft's record reads
    assert not any(item in str(body) for item in probe.gold.answer)


def test_no_probe_repeats_an_item_of_the_annotator_s_exam(personas, project, context, drafts):
    gold = make_refined_gold(project, context)
    annotator = personas["annotator"]
    exam = [g.pk for g in gold[:3]]
    QualificationAttempt.objects.create(
        project=project, user=annotator, item_ids=exam, submitted_at=drafts[0].created_at
    )
    gold_on(project, personas["manager"])
    first = work_until_probe(project=project, user=annotator)
    assert first.gold_id == gold[3].pk  # the one gold item the exam did not show
    probe_submit(probe_id=first.pk, user=annotator, answer=["x"])
    # Every other gold item was in the exam: the queue serves drafts only from here on.
    for _ in range(6):
        claim = queue_claim(project_slug=project.slug, user=annotator)
        if claim is None:
            break
        assert claim.probe_id is None
        refine_and_submit(Instance.objects.get(pk=claim.instance_id), annotator)
    assert list(GoldProbe.objects.filter(user=annotator).values_list("gold_id", flat=True)) == [gold[3].pk]


def done_rows(page: str) -> dict[int, str]:
    done = page[page.index("<h2>Done</h2>") :]
    return {
        int(n): re.sub(r"<[^>]+>", "", cell).strip()
        for n, cell in re.findall(r"<tr><td>(\d+)</td><td>.*?</td><td>(.*?)</td></tr>", done)
    }


def test_done_reads_the_same_for_a_probe_and_a_draft_that_moved_on(personas, project, context, drafts):
    make_refined_gold(project, context)
    annotator = personas["annotator"]
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=annotator)
    probe_submit(probe_id=probe.pk, user=annotator, answer=["x"])
    gold_on(project, personas["manager"], gold_every=0)
    moved_on = refine_and_submit(
        Instance.objects.get(pk=queue_claim(project_slug=project.slug, user=annotator).instance_id), annotator
    )
    still_submitted = refine_and_submit(
        Instance.objects.get(pk=queue_claim(project_slug=project.slug, user=annotator).instance_id), annotator
    )
    Instance.objects.filter(pk=moved_on.pk).update(status=Status.VALIDATED)  # reviewed since, for real
    rows = done_rows(annotator_client().get(f"/p/{project.slug}/work/").content.decode())
    assert {probe.number, moved_on.pk, still_submitted.pk} <= set(rows)
    labels = {rows[n].split()[0:2] == ["Handed", "in"] for n in (probe.number, moved_on.pk, still_submitted.pk)}
    assert labels == {True}
    assert not any(word in " ".join(rows.values()) for word in ("Validated", "Submitted", "review"))
