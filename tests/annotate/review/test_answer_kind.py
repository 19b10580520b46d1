"""Answer type and scale: suggested, edited, required to submit, shown in review, frozen and exported."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pyarrow.parquet as pq
import pytest

from annotate.review import services as review
from annotate.work.workspace import submission_problems, workspace_autosave, workspace_submit
from curation.errors import InvalidInput
from curation.exports import write_export_zip
from curation.models import Instance
from curation.releases.services.cut import release_cut
from curation.states import Status
from tests.annotate.review.helpers import COMPLETE, submit, to_round2
from tests.annotate.work.helpers import queue_next
from tests.support.clients import logged_in


@pytest.fixture
def held(personas, project, drafts):
    return queue_next(project=project, user=personas["annotator"])


def test_autosave_keeps_answer_type_and_scale_in_the_instance_and_its_revision(personas, held):
    saved = workspace_autosave(
        instance_id=held.pk,
        user=personas["annotator"],
        expected_version=held.version,
        fields={"answer_type": "arithmetic", "scale": "percent"},
    )
    assert (saved.answer_type, saved.scale) == ("arithmetic", "percent")
    fields = saved.revisions.order_by("-number").first().fields
    assert (fields["answer_type"], fields["scale"]) == ("arithmetic", "percent")


@pytest.mark.parametrize("fields", [{"answer_type": "guess"}, {"scale": "dozens"}])
def test_an_unknown_answer_type_or_scale_is_refused_and_nothing_is_written(personas, held, fields):
    with pytest.raises(InvalidInput):
        workspace_autosave(
            instance_id=held.pk, user=personas["annotator"], expected_version=held.version, fields=fields
        )
    assert Instance.objects.get(pk=held.pk).version == held.version


def test_submission_requires_an_answer_type(personas, project, held):
    body = {**COMPLETE, "answer_type": "", "relevant_table_ids": list(held.context.tables.values_list("id", flat=True))}
    with pytest.raises(InvalidInput) as error:
        workspace_submit(instance_id=held.pk, user=personas["annotator"], expected_version=held.version, fields=body)
    assert [p["field"] for p in error.value.detail["problems"]] == ["answer_type"]
    instance = Instance.objects.get(pk=held.pk)
    assert instance.status == Status.IN_REFINEMENT
    instance = workspace_autosave(
        instance_id=held.pk,
        user=personas["annotator"],
        expected_version=instance.version,
        fields={**body, "answer_type": "span"},
    )
    assert submission_problems(instance) == []


def test_autosave_api_suggests_type_and_scale_from_answer_rationale_and_table(personas, held, api_client_for):
    held.context.tables.update(caption="Accuracy (%) by model.")
    client = api_client_for(personas["annotator"])
    body = {"expected_version": held.version, "answer": ["6.3"], "rationale": "87.3 - 81.0 = 6.3"}
    body["relevant_table_ids"] = list(held.context.tables.values_list("id", flat=True))
    data = client.post(f"/api/instances/{held.pk}/autosave/", body, format="json").json()
    # A caption's "%" alone is no evidence: the scale is left to the annotator, and the reason is given.
    assert (data["suggested_type"], data["suggested_scale"]) == ("arithmetic", None)
    assert data["suggested_type_evidence"] == "the rationale computes the answer"
    assert "no unit" in data["suggested_scale_evidence"] or "no cell" in data["suggested_scale_evidence"]
    body = {"expected_version": data["instance"]["version"], "answer": ["A", "B"]}
    data = client.post(f"/api/instances/{held.pk}/autosave/", body, format="json").json()
    assert (data["suggested_type"], data["suggested_scale"]) == ("multi-span", "")
    refused = client.post(
        f"/api/instances/{held.pk}/autosave/",
        {"expected_version": data["instance"]["version"], "answer_type": "guess"},
        format="json",
    )
    assert refused.status_code == 400


def test_workspace_api_gives_the_suggestions(personas, held, api_client_for):
    data = api_client_for(personas["annotator"]).get(f"/api/instances/{held.pk}/workspace/").json()
    assert (data["suggested_type"], data["suggested_scale"]) == ("span", "")
    assert data["instance"]["answer_type"] == "" and "answer_type" in {p["field"] for p in data["problems"]}


def test_workspace_page_offers_answer_type_and_scale_with_their_shortcuts(personas, project, held):
    page = logged_in("annotator").get(f"/p/{project.slug}/work/{held.pk}/").content.decode()
    for value in ("span", "multi-span", "arithmetic", "count"):
        assert f'name="answer_type" value="{value}"' in page
    assert 'id="f-scale"' in page and '<option value="million"' in page
    assert "Focus the answer type" in page and "Focus the scale" in page  # shortcuts move focus only
    assert 'id="type-hint" data-value="span"' in page  # the draft's answer ["A"] reads as a span
    assert "one answer item, not computed" in page  # beside the control, the evidence


def test_review_pages_show_the_answer_type_and_scale(personas, project, drafts):
    instance = submit(project, personas["annotator"], drafts[0], answer_type="count", scale="thousand")
    review.review_claim(instance_id=instance.pk, user=personas["verifier"])
    page = logged_in("verifier").get(f"/p/{project.slug}/review/{instance.pk}/").content.decode()
    assert 'id="v-type">count · scale thousand' in page
    approved = to_round2(project, personas, drafts[1])
    review.round2_claim(instance_id=approved.pk, user=personas["annotator2"])
    page = logged_in("annotator2").get(f"/p/{project.slug}/round2/{approved.pk}/").content.decode()
    assert 'id="v-type">span · scale none' in page  # chosen: None ("")
    # A draft whose scale nobody chose yet (no evidence suggested one) says so, not "none" (a choice it is not).
    Instance.objects.filter(pk=drafts[2].pk).update(scale=None)
    untouched = logged_in("manager").get(f"/p/{project.slug}/history/{drafts[2].pk}/").content.decode()
    assert "· scale not chosen</dd>" in untouched


def test_the_refined_answer_type_is_frozen_exported_and_counted(personas, project, drafts, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    approved = to_round2(project, personas, drafts[0])
    claimed = review.round2_claim(instance_id=approved.pk, user=personas["annotator2"])
    validated = review.round2_confirm(
        instance_id=claimed.pk, user=personas["annotator2"], expected_version=claimed.version
    )
    release = release_cut(project=project, actor=None, name="kinds", batch_ids=[validated.batch_id])
    assert release.statistics["answer_type"] == {"span": 1}
    assert "unknown" not in release.statistics["answer_type"]
    files = {}
    for fmt in ("scitat", "tatqa", "jsonl", "csv", "parquet"):
        write_export_zip(release, fmt, tmp_path / f"{fmt}.zip")
        with zipfile.ZipFile(tmp_path / f"{fmt}.zip") as bundle:
            files[fmt] = next(bundle.read(n) for n in bundle.namelist() if n.startswith("data/"))
    assert json.loads(files["scitat"])[0]["answer_type"] == "span"
    assert json.loads(files["tatqa"])[0]["questions"][0]["answer_type"] == "span"
    assert json.loads(files["jsonl"].decode().splitlines()[0])["answer_type"] == "span"
    assert next(csv.DictReader(io.StringIO(files["csv"].decode())))["answer_type"] == "span"
    (tmp_path / "x.parquet").write_bytes(files["parquet"])
    assert pq.read_table(tmp_path / "x.parquet").column("answer_type").to_pylist() == ["span"]


def test_the_verifier_corrects_the_answer_type_when_resolving_a_flag(personas, project, drafts):
    from tests.annotate.review.helpers import to_discussion

    discussion = to_discussion(project, personas, drafts[0])
    verifier = logged_in("verifier")
    url = f"/p/{project.slug}/discussions/{discussion.pk}/"
    page = verifier.get(url).content.decode()
    assert '<select id="e-type" name="answer_type">' in page and '<option value="span" selected>' in page
    version = Instance.objects.get(pk=discussion.instance_id).version
    verifier.post(
        f"{url}resolve/",
        {
            "decision": "edit",
            "expected_version": version,
            "question": "How many models are compared?",
            "answer": "2",
            "answer_type": "count",
            "scale": "none",
        },
    )
    final = Instance.objects.get(pk=discussion.instance_id)
    assert final.status == Status.VALIDATED and (final.answer_type, final.answer) == ("count", ["2"])


def test_a_flag_resolved_by_editing_cannot_clear_the_answer_type(personas, project, drafts):
    from tests.annotate.review.helpers import to_discussion

    discussion = to_discussion(project, personas, drafts[0])
    instance = Instance.objects.get(pk=discussion.instance_id)
    with pytest.raises(InvalidInput, match="answer type"):
        review.discussion_resolve(
            discussion_id=discussion.pk,
            user=personas["verifier"],
            outcome="accepted",
            action="edit",
            expected_version=instance.version,
            fields={"answer_type": ""},
        )
    assert Instance.objects.get(pk=instance.pk).status == Status.IN_DISCUSSION
    assert Instance.objects.get(pk=instance.pk).answer_type == "span"


def test_a_flag_resolved_by_editing_cannot_leave_the_scale_unchosen_on_the_page_or_the_api(
    personas, project, drafts, api_client_for
):
    from tests.annotate.review.helpers import to_discussion

    discussion = to_discussion(project, personas, drafts[0])
    before = Instance.objects.get(pk=discussion.instance_id)
    url = f"/p/{project.slug}/discussions/{discussion.pk}/"
    page = logged_in("verifier").post(
        f"{url}resolve/",
        {"decision": "edit", "expected_version": before.version, "question": "Which one, and why?", "answer": "2",
         "scale": ""},
    )  # fmt: skip
    # Refused, and nothing the verifier wrote is lost: the correction is shown again, open, the refusal in it.
    html = page.content.decode()
    assert page.status_code == 400 and '<details id="edit-details" open>' in html
    assert 'id="edit-refusal">Not saved: ' in html and "Choose the scale" in html
    assert ">Which one, and why?</textarea>" in html and '<option value="" selected>— choose —</option>' in html
    api = api_client_for(personas["verifier"]).post(
        f"/api/discussions/{discussion.pk}/resolve/",
        {"outcome": "accepted", "action": "edit", "expected_version": before.version, "fields": {"scale": None}},
        format="json",
    )
    assert api.status_code == 400 and "Choose the scale" in json.dumps(api.json())
    after = Instance.objects.get(pk=discussion.instance_id)
    assert (after.status, after.version, after.scale, after.question) == (
        Status.IN_DISCUSSION, before.version, before.scale, before.question
    )  # fmt: skip


def test_an_unchosen_scale_is_not_the_scale_none(personas, project, held, api_client_for):
    """null is "not chosen" (what a draft starts with when no evidence decides), "" is the scale None: the page
    shows "— choose —" for the first and None for the second, and submission asks for a choice."""
    from curation.services.instances import answer_kind_suggested

    no_evidence = answer_kind_suggested(question="How many models?", rationale="", answer=["7"], tables=[])
    assert no_evidence["scale"] is None  # nothing decides: nothing is preselected
    Instance.objects.filter(pk=held.pk).update(scale=None)
    page = logged_in("annotator").get(f"/p/{project.slug}/work/{held.pk}/").content.decode()
    assert '<option value="" selected>— choose —</option>' in page and '<option value="none" >None</option>' in page
    client = api_client_for(personas["annotator"])
    held.refresh_from_db()
    body = {**{k: v for k, v in COMPLETE.items() if k != "scale"}, "expected_version": held.version}
    body["relevant_table_ids"] = list(held.context.tables.values_list("id", flat=True))
    refused = client.post(f"/api/instances/{held.pk}/submit/", body, format="json")
    assert refused.status_code == 400 and "Choose the scale" in json.dumps(refused.json())
    assert Instance.objects.get(pk=held.pk).status == Status.IN_REFINEMENT
    version = Instance.objects.get(pk=held.pk).version
    done = client.post(
        f"/api/instances/{held.pk}/submit/", {**body, "expected_version": version, "scale": ""}, format="json"
    )
    assert done.status_code == 200, done.content
    assert Instance.objects.get(pk=held.pk).scale == ""  # chosen: no scale


def test_the_scale_hint_of_a_template_draft_cites_the_cells_its_program_read(personas, held, api_client_for):
    """87.3 − 81.0 = 6.3 over Acc (%), and ALBERT's Params (M) also holds 6.3: the hint cites what the program read."""
    from curation.drafting.services.drafter import table_input
    from curation.drafting.templates import draft_template_questions
    from tests.factories import TableFactory

    rows = [
        ["Model", "Params (M)", "Acc (%)"],
        ["BERT", "110", "87.3"],
        ["RoBERTa", "125", "81.0"],
        ["ALBERT", "6.3", "75.0"],
    ]
    table = TableFactory(paper=held.context.paper, cells=rows, label="tab:models", order=5)
    held.context.tables.add(table)
    drafts = draft_template_questions(
        [table_input(table, "tab:models")], per_template=50, template_ids=["cell_difference"]
    )
    draft = next(draft for draft in drafts if draft["answer"] == ["6.3"])
    fields = {key: draft[key] for key in ("question", "rationale", "answer", "essential_actions")}
    Instance.objects.filter(pk=held.pk).update(**fields)
    held.relevant_tables.set([table])
    data = api_client_for(personas["annotator"]).get(f"/api/instances/{held.pk}/workspace/").json()
    assert data["suggested_scale"] == "percent"
    assert data["suggested_scale_evidence"] == "computed from cells: column 'Acc (%)' → percent"


def test_a_computed_percentage_takes_the_scale_percent_and_exports_as_tatqa_writes_it(personas, project, drafts):
    """An arithmetic answer "25.14%" with the scale None is refused at submission (TAT-QA writes 25.14 with the scale
    percent); with Percent it is submitted, and the TAT-QA export writes the number with the scale."""
    from curation.exports.records import tatqa_question

    with pytest.raises(InvalidInput, match="The computed answer is a percentage: choose the scale Percent"):
        submit(project, personas["annotator"], drafts[0], answer=["25.14%"], answer_type="arithmetic", scale="")
    done = submit(
        project, personas["annotator"], drafts[0], answer=["25.14%"], answer_type="arithmetic", scale="percent"
    )
    assert done.status == Status.SUBMITTED
    item = {"uid": "q1", "answer": ["25.14%"], "answer_type": "arithmetic", "scale": "percent"}
    written = tatqa_question(item, 1)
    assert (written["answer"], written["scale"]) == (25.14, "percent")
    assert tatqa_question({**item, "answer": ["4.875% Senior Notes"], "answer_type": "span"}, 1)["answer"] == [
        "4.875% Senior Notes"
    ]


def test_a_template_percentage_is_suggested_the_scale_percent_its_submission_asks_for(personas, held):
    """The template 'what percentage of the total' answers a percentage ("4.13%"): its suggested scale is Percent, the
    one the submission rule asks of a computed percentage (it was None, which Submit then refused); a span's % keeps
    None."""
    from curation.drafting.services.drafter import table_input
    from curation.drafting.templates import draft_template_questions
    from curation.services.instances import answer_kind_suggested
    from tests.factories import TableFactory

    rows = [["Source", "Tokens"], ["Web", "229"], ["Code", "512"], ["Papers", "4800"], ["Total", "5541"]]
    table = TableFactory(paper=held.context.paper, cells=rows, label="tab:sources", order=5)
    (draft,) = draft_template_questions(
        [table_input(table, "tab:sources")], per_template=1, template_ids=["proportion_of_total"]
    )
    assert draft["answer"][0].endswith("%")
    fields = {key: draft[key] for key in ("question", "rationale", "answer")}
    suggested = answer_kind_suggested(**fields, tables=[table], actions=draft["essential_actions"])
    assert suggested == {"answer_type": "arithmetic", "scale": "percent"}
    Instance.objects.filter(pk=held.pk).update(**fields, **suggested)
    held.refresh_from_db()
    assert "scale" not in {problem["field"] for problem in submission_problems(held)}
    span = answer_kind_suggested(question="What is the rate?", rationale="", answer=["4.875%"], tables=[table])
    assert span == {"answer_type": "span", "scale": ""}
