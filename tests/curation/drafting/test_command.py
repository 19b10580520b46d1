"""The draft command: inline template drafting with a JSON summary, and a clear failure for a down endpoint."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from curation.models import Instance
from tests.curation.drafting.conftest import endpoint_on

pytestmark = pytest.mark.django_db


def test_draft_command_drafts_a_batch_inline_with_json(project, drafting_batch, drafting_contexts):
    out = StringIO()
    call_command("draft", "--project", project.slug, "--batch", drafting_batch.name, "--kind", "template",
                 "--json", "--no-progress", stdout=out)  # fmt: skip
    summary = json.loads(out.getvalue())
    assert summary["status"] == "completed" and summary["counts"]["drafted"] == 3
    assert Instance.objects.filter(batch=drafting_batch).count() == summary["counts"]["instances"] > 0


def test_draft_command_llm_uses_the_named_endpoint_and_fails_clearly(project, drafting_batch, drafting_contexts):
    endpoint_on(project, "http://127.0.0.1:9/v1", name="Down")
    with pytest.raises(CommandError, match="is unreachable"):
        call_command("draft", "--project", project.slug, "--batch", str(drafting_batch.pk), "--kind", "llm",
                     "--endpoint", "Down", "--no-progress", stdout=StringIO())  # fmt: skip
    with pytest.raises(CommandError, match="no endpoint"):
        call_command("draft", "--project", project.slug, "--batch", str(drafting_batch.pk), "--kind", "llm",
                     "--endpoint", "Nope", stdout=StringIO())  # fmt: skip


def test_draft_command_without_an_endpoint_takes_the_one_the_drafting_page_starts_on(
    project, drafting_batch, drafting_contexts
):
    """One answer to "which endpoint by default": the first real endpoint, else the local model."""
    from curation.drafting.models import DraftingRun

    endpoint_on(project, "http://127.0.0.1:9/v1", name="Local", is_local_default=True)
    real = endpoint_on(project, "http://127.0.0.1:9/v1", name="Team model")
    with pytest.raises(CommandError):  # the endpoint is down; the run records which one it asked
        call_command("draft", "--project", project.slug, "--batch", drafting_batch.name, "--kind", "llm",
                     "--no-progress", stdout=StringIO())  # fmt: skip
    assert DraftingRun.objects.get().endpoint == real
