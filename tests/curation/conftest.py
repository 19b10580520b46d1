"""Fixtures of the release, import and export tests: validated work in batches, shared benchmark files, and the
messages the job kinds send."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.models import ReasoningType
from curation.releases.services.cut import release_cut
from tests.factories import (
    BatchFactory,
    InstanceFactory,
    LongContextFactory,
    PaperFactory,
    ParagraphFactory,
    ShortContextFactory,
    TableFactory,
    ValidatedInstanceFactory,
)
from tests.scoring.metrics.shared_data import shared_data_dir
from tests.support.jobs import broker_messages


@pytest.fixture
def release_world(project, personas):
    return release_world_build(project, personas)


def release_world_build(project, personas) -> dict:
    """Two papers (one with two tables), short and long contexts, and validated instances in two batches."""
    batch1 = BatchFactory(project=project, name="Batch 1")
    batch2 = BatchFactory(project=project, name="Batch 2")
    comparison = ReasoningType.objects.get(project=project, code="comparison")
    descriptive = ReasoningType.objects.get(project=project, code="descriptive_analysis")
    papers, instances = [], []
    for p_index in range(2):
        paper = PaperFactory(project=project, title=f"Paper {p_index}")
        tables = [
            TableFactory(paper=paper, label=f"tab:{t}", caption=f"Caption {t}", cells=[["Model", "Acc"], ["A", "8"]])
            for t in range(2 - p_index)
        ]
        short = ShortContextFactory(
            paper=paper, tables=tables, paragraph__section="Results", paragraph__text="Model A reaches 8 points.",
            paragraph__mentioned_tables=tables,
        )  # fmt: skip
        ParagraphFactory(paper=paper, section="Intro", text="We study adapters in this paper.")
        long = LongContextFactory(paper=paper)
        papers.append(paper)
        for i, (context, batch) in enumerate(((short, batch1), (short, batch1), (long, batch2))):
            instances.append(
                ValidatedInstanceFactory(
                    project=project,
                    batch=batch,
                    context=context,
                    question=f"Question {p_index}.{i}?",
                    rationale="Because the table says so.",
                    answer=["A"] if i != 2 else ["Adapters help because they add few parameters to the model."],
                    answer_form="short" if i != 2 else "free",
                    answer_source="table" if i == 0 else "table-text" if i == 1 else "text",
                    answer_type="span",
                    reasoning_type=comparison if i != 2 else descriptive,
                    relevant_tables=tables[:1] if i != 2 else [],
                )
            )
    drafted = InstanceFactory(project=project, batch=batch1, context=short, question="Draft?", answer=[])
    return {
        "project": project,
        "people": personas,
        "batches": [batch1, batch2],
        "papers": papers,
        "instances": instances,
        "drafted": drafted,
    }


@pytest.fixture
def release(release_world):
    return release_build(release_world)


def release_build(release_world: dict):
    """The release demo v1 of `release_world` (split seed 3)."""
    return release_cut(
        project=release_world["project"],
        actor=None,
        name="demo",
        batch_ids=[b.pk for b in release_world["batches"]],
        license="CC-BY-4.0",
        citation="@misc{demo}",
        split_seed=3,
    )


@pytest.fixture
def write_json(tmp_path):
    def write(name: str, data: object) -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    return write


@pytest.fixture
def shared_data() -> Path:
    return shared_data_dir()


@pytest.fixture
def sent(monkeypatch) -> list[tuple]:
    """(task name, args) of each message that would leave for the broker, recorded instead of sent."""
    return broker_messages(monkeypatch)


@pytest.fixture
def sent_routed(monkeypatch) -> list[tuple]:
    """(task name, args, queue) of each message that would leave for the broker, recorded instead of sent."""
    return broker_messages(monkeypatch, with_queue=True)
