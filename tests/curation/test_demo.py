"""The demo command: one user per role, the demo paper ingested from LaTeX, drafts in an open batch, an exam."""

from __future__ import annotations

import html
import json
import re
from io import StringIO

from django.core.management import call_command

from annotate.qualification.models import QualificationSettings
from curation.endpoints.models import ModelEndpoint
from curation.models import Batch, Context, Instance, Membership, Paper
from curation.states import Status


def run_demo() -> dict:
    out = StringIO()
    call_command("demo", "--json", stdout=out)
    return json.loads(out.getvalue())


def test_demo_creates_a_project_to_click_through(db, client):
    result = run_demo()
    assert result["created"] is True
    assert {u["role"] for u in result["users"]} == {"manager", "verifier", "annotator"}
    paper = Paper.objects.get(project__slug="demo")
    assert [t.label for t in paper.tables.all()] == ["tab:main", "tab:ablation"]
    assert paper.tables.get(label="tab:main").cells[0][:2] == ["Method", "Params (M)"]
    assert Context.objects.filter(paper=paper, kind="short").count() == 3
    assert Context.objects.filter(paper=paper, kind="long").count() == 1
    drafts = Instance.objects.filter(project__slug="demo", status=Status.DRAFTED)
    assert drafts.count() == 6
    assert {d.batch.state for d in drafts} == {Batch.State.OPEN}
    # each draft's context sits in the batch its draft is in (a batch's contexts are what it covers)
    assert all(d.context.batch_id == d.batch_id for d in drafts)
    exam = QualificationSettings.objects.get(project__slug="demo")
    assert (exam.size, exam.item_links.count()) == (5, 15)  # each attempt draws 5 of a pool of 15
    assert ModelEndpoint.objects.filter(is_local_default=True).count() == 1
    for user in result["users"]:
        assert client.login(username=user["username"], password=user["password"])
        assert client.get("/p/demo/").status_code == 200


def test_demo_is_idempotent(db):
    run_demo()
    again = run_demo()
    assert again["created"] is False
    assert Paper.objects.filter(project__slug="demo").count() == 1
    assert Membership.objects.filter(project__slug="demo").count() == 4
    assert Instance.objects.filter(project__slug="demo").count() == again["instances"]


def test_a_first_release_can_be_cut_from_the_demo_by_its_manager(db, client):
    run_demo()
    validated = Instance.objects.filter(project__slug="demo", status=Status.VALIDATED)
    frozen = validated.count()
    assert frozen >= 5 and all(i.batch_id for i in validated)
    assert client.login(username="manager", password="demo-manager")
    page = client.get("/p/demo/releases/").content.decode()
    batch = validated.first().batch
    assert re.search(rf'name="batch_ids" value="{batch.pk}"\s*>', page)  # offered, not disabled
    frozen = validated.filter(batch=batch).count()
    # The demo's validated items are the exam's gold pool: the form says so, and a cut leaves them out unless asked.
    assert f"{frozen} validated instances in the qualification exam's gold pool" in html.unescape(page)
    refused = client.post("/p/demo/releases/", {"name": "demo", "batch_ids": [batch.pk]}, follow=True)
    assert "Every validated instance of those batches is withheld" in refused.content.decode()
    response = client.post(
        "/p/demo/releases/", {"name": "demo", "batch_ids": [batch.pk], "include_withheld": "on"}, follow=True
    )
    assert f"Release demo-v1 cut: {frozen} instances frozen." in response.content.decode()


def test_the_exam_page_tells_a_candidate_how_many_questions_one_attempt_has(db, client):
    run_demo()
    assert client.login(username="annotator", password="demo-annotator")
    page = re.sub(r"\s+", " ", client.get("/p/demo/qualification/").content.decode())
    # Each attempt draws 5 of the pool of 15: the page says 5, and where they come from.
    assert "The exam has <strong>5</strong> questions, drawn from a pool of 15" in page


def test_the_demo_gold_items_carry_their_real_answer_types_and_the_release_counts_no_unknown(db):
    from curation.releases.services.cut import release_cut

    run_demo()
    gold = {i.question: i.answer_type for i in Instance.objects.filter(project__slug="demo", status=Status.VALIDATED)}
    assert len(gold) == 15 and "" not in gold.values()
    assert gold["Which methods have an average LAS below 74.5?"] == "multi-span"
    assert gold["By how many LAS points do sparse adapters beat LoRA on Tagalog?"] == "arithmetic"
    assert gold["How many minutes per epoch does 90% sparsity save over 50% sparsity on Wolof?"] == "arithmetic"
    assert gold["On which treebank does LoRA reach its lowest LAS?"] == "span"
    assert gold["How many parameters, in millions, does LoRA train?"] == "span"  # read from the table, not counted
    assert sorted(set(gold.values())) == ["arithmetic", "multi-span", "span"]
    project = Batch.objects.get(name="Validated demo items").project
    release = release_cut(
        project=project,
        actor=None,
        name="demo-gold",
        batch_ids=[Batch.objects.get(name="Validated demo items").pk],
        include_withheld=True,
    )
    assert "unknown" not in json.dumps(release.statistics)
