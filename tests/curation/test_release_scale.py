"""Cutting releases at scale: a bounded number of queries per chunk, batched lifecycle moves, all or nothing."""

from __future__ import annotations

import pytest

from curation.errors import Conflict, InvalidInput, NotPermitted
from curation.models import Batch, Context, Instance, Paper, Paragraph, Release, ReleaseItem, Table, TransitionEvent
from curation.services import releases as release_services
from curation.services.lifecycle import instance_create, instance_transition, instances_transition_bulk
from curation.states import Status


def validated_world(project, *, papers: int, per_paper: int) -> Batch:
    """`papers` papers, each with a table, a paragraph citing it and a short context; `per_paper` validated
    instances on each (one in three marks the paragraph as wrongly extracted), all in one batch."""
    batch = Batch.objects.create(project=project, name=f"Batch {papers}x{per_paper}")
    for p in range(papers):
        paper = Paper.objects.create(project=project, title=f"Paper {p}", origin="test")
        table = Table.objects.create(paper=paper, order=0, label="tab:0", cells=[["Model", "Acc"], ["A", "8"]])
        paragraph = Paragraph.objects.create(paper=paper, order=0, section="Results", text="A reaches 8.")
        paragraph.mentioned_tables.set([table])
        context = Context.objects.create(project=project, paper=paper, kind=Context.Kind.SHORT, paragraph=paragraph)
        context.tables.set([table])
        for i in range(per_paper):
            instance = instance_create(
                project_id=project.pk,
                actor=None,
                initial_status=Status.VALIDATED,
                batch=batch,
                context=context,
                question=f"Q{p}.{i}?",
                answer=["A"],
                answer_form="short",
                answer_source="table",
                answer_type="span",
                relevant_tables=[table],
            )
            if i % 3 == 0:
                instance.excluded_paragraphs.set([paragraph])
    return batch


def _cut(project, batch, name="scale"):
    return release_services.release_cut(project=project, actor=None, name=name, batch_ids=[batch.pk])


@pytest.mark.parametrize(("papers", "per_paper"), [(2, 3), (12, 10)])
def test_a_cut_costs_the_same_queries_at_6_and_120_items(project, django_assert_max_num_queries, papers, per_paper):
    """One chunk holds both sizes, so both must fit the same bound (before batching, 6 items took 62 queries)."""
    batch = validated_world(project, papers=papers, per_paper=per_paper)
    with django_assert_max_num_queries(30):
        release = _cut(project, batch)
    assert release.item_count == papers * per_paper
    assert set(Instance.objects.filter(batch=batch).values_list("status", flat=True)) == {Status.RELEASED}
    events = TransitionEvent.objects.filter(to_status=Status.RELEASED)
    assert events.count() == papers * per_paper
    versions = dict(Instance.objects.values_list("pk", "version"))
    assert all(e.version == versions[e.instance_id] == 2 and e.actor_id is None for e in events)
    excluded = ReleaseItem.objects.filter(release=release, data__excluded__paragraphs__0__key__isnull=False)
    assert excluded.count() == sum(1 for i in range(per_paper) if i % 3 == 0) * papers


def test_queries_grow_per_chunk_not_per_item(project, monkeypatch, django_assert_max_num_queries):
    """With chunks of 10, 40 items (4 chunks) may cost at most 4 chunks' worth more than 10 items (1 chunk)."""
    monkeypatch.setattr(release_services, "ITEM_CHUNK", 10)
    monkeypatch.setattr("curation.services.lifecycle.BULK_TRANSITION_CHUNK", 10)
    small = validated_world(project, papers=2, per_paper=5)
    big = validated_world(project, papers=8, per_paper=5)
    with django_assert_max_num_queries(30):
        _cut(project, small, name="small")
    # Per chunk: instances + 5 prefetches, 3 source reads, revisions, papers (4), items insert, update/read/insert.
    per_chunk = 18
    with django_assert_max_num_queries(30 + 3 * per_chunk):
        release = _cut(project, big, name="big")
    assert release.item_count == 40
    assert list(
        ReleaseItem.objects.filter(release=release).order_by("position").values_list("position", flat=True)
    ) == (list(range(40)))


def test_an_instance_that_stops_being_validated_mid_cut_fails_the_whole_cut(project, personas, monkeypatch):
    """The cut fails (it does not skip): a manager discards one item after it was frozen and before the batched
    move; the conditional UPDATE then moves fewer rows than frozen, and nothing of the cut remains."""
    batch = validated_world(project, papers=2, per_paper=3)
    victim = Instance.objects.filter(batch=batch).order_by("id").last()
    real_statistics = release_services.release_statistics

    def discard_then_count(*args, **kwargs):
        instance_transition(instance_id=victim.pk, target=Status.DISCARDED, actor=personas["manager"])
        return real_statistics(*args, **kwargs)

    monkeypatch.setattr(release_services, "release_statistics", discard_then_count)
    with pytest.raises(Conflict, match="no longer validated") as raised:
        _cut(project, batch)
    assert raised.value.detail == {"instance_ids": [victim.pk]}
    assert not Release.objects.exists() and not ReleaseItem.objects.exists()
    assert set(Instance.objects.filter(batch=batch).values_list("status", flat=True)) == {Status.VALIDATED}
    assert not TransitionEvent.objects.filter(to_status__in=(Status.RELEASED, Status.DISCARDED)).exists()


def test_an_instance_changed_before_its_chunk_is_read_fails_the_cut(project, personas, monkeypatch):
    """Between chunks: the second chunk finds an instance no longer validated, and the cut fails whole."""
    monkeypatch.setattr(release_services, "ITEM_CHUNK", 3)
    batch = validated_world(project, papers=2, per_paper=3)
    last = Instance.objects.filter(batch=batch).order_by("id").last()
    real_load = release_services._papers_load
    calls = []

    def load_then_discard(paper_ids):
        calls.append(paper_ids)
        if len(calls) == 1:
            instance_transition(instance_id=last.pk, target=Status.DISCARDED, actor=personas["manager"])
        return real_load(paper_ids)

    monkeypatch.setattr(release_services, "_papers_load", load_then_discard)
    with pytest.raises(Conflict, match="stopped being validated"):
        _cut(project, batch)
    assert not Release.objects.exists() and not ReleaseItem.objects.exists()
    assert Instance.objects.get(pk=last.pk).status == Status.VALIDATED


def test_the_batched_move_is_checked_by_the_transition_table(project):
    batch = validated_world(project, papers=1, per_paper=2)
    ids = list(Instance.objects.filter(batch=batch).values_list("pk", flat=True))
    with pytest.raises(NotPermitted, match="Only system moves"):
        instances_transition_bulk(instance_ids=ids, target=Status.DISCARDED, expected_status=Status.VALIDATED)
    with pytest.raises(InvalidInput, match="cannot go from"):
        instances_transition_bulk(instance_ids=ids, target=Status.DRAFTED, expected_status=Status.VALIDATED)
    assert set(Instance.objects.values_list("status", flat=True)) == {Status.VALIDATED}
    assert instances_transition_bulk(instance_ids=ids, target=Status.RELEASED, expected_status=Status.VALIDATED) == 2
    assert set(Instance.objects.values_list("status", flat=True)) == {Status.RELEASED}
