"""A release that froze unanswerable questions gets prompts that let a model abstain (meta paper §3); one without
keeps the paper's prompts unchanged, and the difference is part of the run's prompt version."""

from __future__ import annotations

from curation.releases.models import ReleaseItem
from curation.toolkit.extraction import ABSTENTION_INSTRUCTION
from scoring.methods.templates import templates_for, templates_hash, templates_offering_abstention
from scoring.runs.creation import run_create
from tests.scoring.run_support import small_release


def test_the_instruction_follows_every_stage_that_asks_the_question():
    plain = templates_for("car")
    offered = templates_offering_abstention(plain)
    for stage, text in plain.items():
        assert offered[stage] == (f"{text}\n{ABSTENTION_INSTRUCTION}" if "{Question}" in text else text)
    assert templates_offering_abstention(offered) == offered  # never twice
    assert templates_hash(offered) != templates_hash(plain)


def test_a_run_offers_abstention_exactly_when_its_release_has_an_unanswerable_split(db, project, personas):
    release = small_release(project, questions=2)
    endpoint = _endpoint(project)
    plain = run_create(release=release, actor=personas["verifier"], method="direct", endpoint=endpoint)
    assert plain.options["abstention"] is False
    assert ABSTENTION_INSTRUCTION not in "".join(plain.templates.values())
    ReleaseItem.objects.filter(release=release, position=0).update(split="unanswerable")
    offered = run_create(release=release, actor=personas["verifier"], method="direct", endpoint=endpoint)
    assert offered.options["abstention"] is True
    assert ABSTENTION_INSTRUCTION in offered.templates["direct"]
    forced_off = run_create(
        release=release, actor=personas["verifier"], method="direct", endpoint=endpoint, abstention=False
    )
    assert forced_off.options["abstention"] is False and forced_off.template_hash != offered.template_hash


def _endpoint(project):
    from tests.scoring.run_support import endpoint_for

    return endpoint_for(project, "http://127.0.0.1:9/v1", name="nowhere", model="m")
