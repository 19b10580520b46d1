"""Hidden-gold and drift figures as CSV (page and API) and `manage.py quality_figures --json`: the same numbers as
the dashboard, from the same selectors, for managers only."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command

from annotate.qualification.guidelines import guidelines_publish
from annotate.quality.drift import drift_of, drift_rows
from annotate.quality.selectors import gold_figures, gold_rows
from tests.annotate.qualification.support import make_gold
from tests.annotate.quality.helpers import gold_on, submit_probe, work_until_probe
from tests.annotate.review.helpers import to_discussion, to_round2


@pytest.fixture
def measured(personas, project, drafts, context):
    """The annotator answers one probe wrong; their work is approved once and flagged once; guidelines published."""
    make_gold(project, context)
    gold_on(project, personas["manager"], drafts=drafts)
    probe = work_until_probe(project=project, user=personas["annotator"])
    submit_probe(probe, personas["annotator"], ["wrong"])
    gold_on(project, personas["manager"], drafts=drafts, gold_every=0)  # the rest of the work is real drafts
    guidelines_publish(project=project, actor=personas["manager"], text="# New rules", note="clarified scales")
    to_round2(project, personas)
    to_discussion(project, personas)
    return probe


def parsed(response) -> list[dict[str, str]]:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def as_text(rows):
    return [{k: "" if v is None else str(v) for k, v in row.items()} for row in rows]


def test_gold_csv_is_the_dashboard_table(personas, project, measured, client, api_client_for):
    rows = gold_rows(gold_figures(user=personas["manager"], project=project))
    (row,) = [r for r in rows if r["user"] == "annotator"]
    assert (row["n"], row["em"], row["is_below"]) == (1, 0.0, False)
    assert row["low"] == 0.0 and 0.79 < row["high"] < 0.8  # Wilson 95 % of 0/1
    client.force_login(personas["manager"])
    assert parsed(client.get(f"/p/{project.slug}/dashboard/gold.csv")) == as_text(rows)
    api = api_client_for(personas["manager"]).get(f"/api/projects/{project.slug}/dashboard/csv/?table=gold")
    assert parsed(api) == as_text(rows)
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert 'id="gold-csv"' in page and 'id="drift-csv"' in page


def test_drift_csv_has_a_row_per_annotator_and_week(personas, project, measured, client):
    rows = drift_rows(drift_of(user=personas["manager"], project=project))
    (row,) = [r for r in rows if r["user"] == "annotator"]
    assert (row["round1_approval"], row["round2_flags"], row["gold_em"]) == (1.0, 1.0, 0.0)
    assert (row["round1_n"], row["round2_n"], row["gold_n"]) == (2, 1, 1)
    assert row["guidelines"].startswith("guidelines v")
    client.force_login(personas["manager"])
    assert parsed(client.get(f"/p/{project.slug}/dashboard/drift.csv")) == as_text(rows)


def test_the_command_prints_the_same_figures(personas, project, measured):
    out = io.StringIO()
    call_command("quality_figures", "--project", project.slug, "--json", stdout=out)
    printed = json.loads(out.getvalue())
    assert printed["gold"] == json.loads(json.dumps(gold_rows(gold_figures(user=personas["manager"], project=project))))
    assert printed["drift"] == drift_rows(drift_of(user=personas["manager"], project=project))
    only = io.StringIO()
    call_command("quality_figures", "--project", project.slug, "--figure", "gold", "--json", stdout=only)
    assert set(json.loads(only.getvalue())) == {"gold"}
    text = io.StringIO()
    call_command("quality_figures", "--project", project.slug, stdout=text)
    assert "annotator: EM 0.00 over 1" in text.getvalue() and "[guidelines v" in text.getvalue()


def test_the_command_names_an_unknown_project(db):
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="No project 'nope'"):
        call_command("quality_figures", "--project", "nope")


@pytest.mark.parametrize("table", ["gold", "drift"])
def test_gold_and_drift_csv_per_role(personas, project, measured, client, api_client_for, table):
    expected = {"manager": 200, "annotator": 403, "verifier": 403, "outsider": 404}
    for person, status in expected.items():
        client.force_login(personas[person])
        assert client.get(f"/p/{project.slug}/dashboard/{table}.csv").status_code == status, person
        api = api_client_for(personas[person]).get(f"/api/projects/{project.slug}/dashboard/csv/?table={table}")
        assert api.status_code == status, person
