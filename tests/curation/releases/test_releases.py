"""Cutting releases: frozen copies, content hash, versions, splits by paper, lifecycle moves, statistics."""

from __future__ import annotations

import json

import pytest

from curation.errors import InvalidInput, NotPermitted
from curation.exports.statistics import presented, release_statistics
from curation.models import Instance, Paragraph, Table, TransitionEvent
from curation.releases.models import Release, ReleaseItem
from curation.releases.services.cut import (
    assign_splits,
    release_cut,
    release_hash_recompute,
    release_statistics_recompute,
)
from curation.states import Status


def cut(world, **options):
    options.setdefault("name", "scitat-demo")
    options.setdefault("batch_ids", [b.pk for b in world["batches"]])
    return release_cut(project=world["project"], actor=world["people"]["manager"], **options)


def test_manager_cuts_release_of_validated_instances_only(release_world):
    release = cut(release_world, description="First cut", license="CC-BY-4.0")
    assert release.item_count == 6
    assert release.version == 1
    assert release.created_by == release_world["people"]["manager"]
    assert set(ReleaseItem.objects.filter(release=release).values_list("instance_id", flat=True)) == {
        i.pk for i in release_world["instances"]
    }
    statuses = set(Instance.objects.filter(release_items__release=release).values_list("status", flat=True))
    assert statuses == {Status.RELEASED}
    assert Instance.objects.get(pk=release_world["drafted"].pk).status == Status.DRAFTED
    events = TransitionEvent.objects.filter(to_status=Status.RELEASED)
    assert events.count() == 6 and all(e.actor_id is None and "scitat-demo-v1" in e.reason for e in events)


def test_only_managers_cut_releases(release_world):
    for name in ("annotator", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            release_cut(
                project=release_world["project"],
                actor=release_world["people"][name],
                name="x",
                batch_ids=[release_world["batches"][0].pk],
            )
    assert not Release.objects.exists()


def test_release_without_validated_instances_is_refused(release_world):
    cut(release_world)
    with pytest.raises(InvalidInput, match="no validated instances"):
        cut(release_world)  # everything is released now


def test_a_name_carrying_its_own_version_is_refused_before_anything_is_frozen(release_world):
    with pytest.raises(InvalidInput, match="Leave the version out of the name"):
        cut(release_world, name="demo-v1")
    assert not Release.objects.exists()
    assert cut(release_world, name="demo-v1.5-final").label == "demo-v15-final-v1"


def test_batches_of_another_project_are_refused(release_world, make_user):
    from curation.services.projects import project_create

    other = project_create(name="Other", slug="other", creator=None)
    foreign = other.batches.create(name="Foreign")
    with pytest.raises(InvalidInput, match="batches of this project"):
        cut(release_world, batch_ids=[foreign.pk])


def test_frozen_copy_does_not_change_when_the_sources_change(release_world):
    release = cut(release_world)
    before = {item.uid: item.data for item in release.items.all()}
    contexts_before = {c.key: c.data for c in release.contexts.all()}
    Table.objects.filter(paper=release_world["papers"][0]).update(caption="Edited later", cells=[["x"]])
    Paragraph.objects.filter(paper=release_world["papers"][0]).update(text="Rewritten later.")
    Instance.objects.filter(pk=release_world["instances"][0].pk).update(question="Edited after release?")
    release.refresh_from_db()
    assert {item.uid: item.data for item in release.items.all()} == before
    assert {c.key: c.data for c in release.contexts.all()} == contexts_before
    assert release_hash_recompute(release) == release.content_hash
    frozen = next(iter(before.values()))
    assert frozen["question"] == "Question 0.0?"


def test_content_hash_changes_with_content_and_detects_tampering(release_world):
    release = cut(release_world)
    assert len(release.content_hash) == 64
    item = release.items.first()
    ReleaseItem.objects.filter(pk=item.pk).update(data={**item.data, "answer": ["B"]})
    assert release_hash_recompute(release) != release.content_hash


def test_second_cut_makes_a_new_version_that_supersedes(release_world, project):
    first = release_cut(project=project, actor=None, name="demo", batch_ids=[release_world["batches"][0].pk])
    second = release_cut(
        project=project, actor=None, name="demo", batch_ids=[release_world["batches"][1].pk], changelog="Adds batch 2"
    )
    assert (first.version, second.version) == (1, 2)
    assert second.supersedes == first
    assert first.item_count == 4 and second.item_count == 2


def test_frozen_item_carries_context_reasoning_and_relevant_tables(release_world):
    release = cut(release_world)
    item = release.items.select_related("short_context", "long_context").get(instance=release_world["instances"][0])
    assert item.data["reasoning_type"] == "numerical_reasoning"
    assert item.data["reasoning_subtype"] == "comparison"
    assert item.short_context.data["kind"] == "short"
    assert [p["text"] for p in item.short_context.data["paragraphs"]] == ["Model A reaches 8 points."]
    assert len(item.long_context.data["paragraphs"]) == 2  # the whole paper
    assert item.data["relevant_tables"] == [item.short_context.data["tables"][0]["key"]]
    long_only = release.items.get(instance=release_world["instances"][2])
    assert long_only.short_context is None and long_only.long_context is not None


def test_splits_are_by_paper_seeded_and_recorded(release_world):
    release = cut(release_world, split_seed=7, split_ratios={"train": 0.5, "dev": 0, "test": 0.5})
    by_paper: dict[str, set[str]] = {}
    for item in release.items.all():
        by_paper.setdefault(item.data["paper"], set()).add(item.split)
    assert all(len(splits) == 1 for splits in by_paper.values())
    assert {s for splits in by_paper.values() for s in splits} == {"train", "test"}
    assert release.split_seed == 7 and release.split_ratios["dev"] == 0
    assert release.statistics["split"] == {"train": 3, "test": 3}


def test_assign_splits_is_deterministic_and_follows_ratios():
    sizes = {f"p{i}": 1 + i % 3 for i in range(200)}
    ratios = {"train": 0.8, "dev": 0.1, "test": 0.1}
    first = assign_splits(sizes, seed=1, ratios=ratios)
    assert first == assign_splits(sizes, seed=1, ratios=ratios)
    assert first != assign_splits(sizes, seed=2, ratios=ratios)
    total = sum(sizes.values())
    train = sum(n for p, n in sizes.items() if first[p] == "train")
    assert abs(train / total - 0.8) < 0.03
    with pytest.raises(InvalidInput):
        assign_splits(sizes, seed=1, ratios={"holdout": 1.0})


def test_statistics_follow_scitat_tables(release_world):
    release = cut(release_world)
    stats = release.statistics
    assert stats["questions"] == 6 and stats["papers"] == 2
    assert stats["settings"]["short"]["questions"] == 4
    assert stats["settings"]["short"]["avg_tables_per_context"] == 1.5  # 2 tables and 1 table
    assert stats["settings"]["short"]["avg_paragraphs_per_context"] == 1.0
    assert stats["settings"]["long"]["questions"] == 6
    assert stats["settings"]["long"]["avg_paragraphs_per_context"] == 2.0
    assert stats["settings"]["long"]["avg_cells_per_table"] == 4.0
    assert stats["answer_form_by_source"]["short_form"] == {"table": 2, "text": 0, "table-text": 2, "total": 4}
    assert stats["answer_form_by_source"]["free_form"]["text"] == 2
    numerical = stats["reasoning_type"]["numerical_reasoning"]
    assert numerical["count"] == 4 and numerical["percent"] == 66.67
    assert numerical["subtypes"]["comparison"]["count"] == 4
    assert stats["answer_type_by_source_by_scale"]["span"]["table"] == {"none": 2}
    assert stats["answer_length"]["buckets"] == {"1": 4, "6-10": 2}
    assert release_statistics_recompute(release) == stats


def test_statistics_function_is_pure_and_counts_contexts_once():
    contexts = {"c1": {"tables": [{"cells": [["a", "b"], ["c", "d"]]}], "paragraphs": [{"text": "one two three"}]}}
    seen = []

    def context_of(key):
        seen.append(key)
        return contexts[key]

    items = [
        {"paper": "p", "short_context": "c1", "answer": ["x y"], "answer_type": "span", "answer_form": "short"},
        {"paper": "p", "short_context": "c1", "answer": ["1"], "answer_type": "count", "scale": "thousand"},
    ]
    stats = release_statistics(items, context_of)
    assert seen == ["c1"]
    assert stats["settings"]["short"] == {
        "questions": 2,
        "papers": 1,
        "contexts": 1,
        "avg_tables_per_context": 1.0,
        "avg_cells_per_table": 4.0,
        "avg_paragraphs_per_context": 1.0,
        "avg_paragraph_words": 3.0,
    }
    assert stats["answer_type"] == {"span": 1, "count": 1}
    assert stats["scale"] == {"none": 1, "thousand": 1}
    assert stats["answer_length"]["median"] == 1.5


def test_statistics_come_in_the_order_every_page_presents_them():
    """Computed once in reading order: what a cut stores is what the API, the pages and the card show."""
    items = [
        {"paper": "p", "answer": ["a b c d"], "answer_type": "count", "reasoning_type": "zeta", "split": "test"},
        {"paper": "p", "answer": ["1"], "answer_type": "span", "reasoning_type": "alpha", "split": "train"},
        {"paper": "q", "answer": ["x"], "answer_type": "arithmetic", "panel": {"k": 2, "n": 3, "models": {}}},
        {"paper": "q", "answer": [], "answer_type": "span", "panel": {"k": 0, "n": 2, "models": {}}},
    ]
    stats = release_statistics(items, lambda key: None)
    assert list(stats["answer_type"]) == ["arithmetic", "span", "count"]
    assert list(stats["split"]) == ["train", "test", "unsplit"]
    assert list(stats["reasoning_type"]) == ["unassigned", "alpha", "zeta"]  # by count, then by code
    assert list(stats["panel"]["k_of_n"]) == ["0 of 2", "2 of 3"]
    assert list(stats["answer_length"]["buckets"]) == ["0", "1", "3-5"]
    assert json.dumps(stats) == json.dumps(presented(stats))


def test_release_stats_command_prints_self_describing_json(release_world):
    import json
    from io import StringIO

    from django.core.management import call_command

    cut(release_world)
    out = StringIO()
    call_command(
        "release_stats", "--release", "scitat-demo", "--project", release_world["project"].slug, "--json", stdout=out
    )
    data = json.loads(out.getvalue())
    assert data["questions"] == 6 and data["papers"] == 2
    assert data["answer_type"] == {"span": 6}
    assert data["answer_source"] == {"table": 2, "text": 2, "table-text": 2}
    assert set(data["reasoning_type"]) == {"numerical_reasoning", "data_analysis"}


def test_release_commands_name_the_release_by_name_label_or_id(release_world):
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    from curation.management.lookup import release_keyed

    project = release_world["project"]
    first = cut(release_world)
    out = StringIO()
    call_command("release_stats", "--release", "scitat-demo-v1", "--project", project.slug, stdout=out)
    assert out.getvalue().startswith("scitat-demo v1 (")
    with pytest.raises(CommandError, match="--release"):
        call_command("release_stats", "scitat-demo", "--project", project.slug)
    second = Release.objects.create(project=project, name="scitat-demo", version=2, content_hash="0" * 64)
    looks_like_a_label = Release.objects.create(
        project=project, name="scitat-demo-v1", version=1, content_hash="1" * 64
    )
    looks_like_an_id = Release.objects.create(project=project, name=str(first.pk), version=1, content_hash="2" * 64)
    assert release_keyed(project, "scitat-demo") == second
    assert release_keyed(project, "scitat-demo-v2") == second
    assert release_keyed(project, str(second.pk)) == second
    assert release_keyed(project, "scitat-demo-v1") == looks_like_a_label
    assert release_keyed(project, str(first.pk)) == looks_like_an_id
    with pytest.raises(CommandError, match="No release 'scitat-demo' v3 in project"):
        release_keyed(project, "scitat-demo-v3")
