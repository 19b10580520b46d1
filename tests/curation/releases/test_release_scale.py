"""Cutting releases at scale: a bounded number of queries per chunk, batched lifecycle moves, all or nothing."""

from __future__ import annotations

import gc

import pytest
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from curation.errors import Conflict, InvalidInput, NotPermitted
from curation.exports import CONTEXTS_READ, EXPORT_FORMATS, write_export_zip
from curation.exports.rows import NONE, PRIMARY, release_rows
from curation.models import Batch, Instance, Table, TransitionEvent
from curation.releases.models import Release, ReleaseContext, ReleaseCut, ReleaseItem
from curation.releases.services import cut as cut_services
from curation.releases.services import jobs as release_jobs
from curation.services.lifecycle import instance_transition, instances_transition_bulk
from curation.states import Status
from tests.factories import BatchFactory, ShortContextFactory, TableFactory, ValidatedInstanceFactory


def validated_world(project, *, papers: int, per_paper: int) -> Batch:
    """`papers` papers, each with a table, a paragraph citing it and a short context; `per_paper` validated
    instances on each (one in three marks the paragraph as wrongly extracted), all in one batch."""
    batch = BatchFactory(project=project, name=f"Batch {papers}x{per_paper}")
    for p in range(papers):
        table = TableFactory(
            paper__project=project, paper__title=f"Paper {p}", label="tab:0", cells=[["Model", "Acc"], ["A", "8"]]
        )
        context = ShortContextFactory(
            paper=table.paper, tables=[table], paragraph__section="Results", paragraph__text="A reaches 8.",
            paragraph__mentioned_tables=[table],
        )  # fmt: skip
        paragraph = context.paragraph
        for i in range(per_paper):
            instance = ValidatedInstanceFactory(
                project=project,
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
    return cut_services.release_cut(project=project, actor=None, name=name, batch_ids=[batch.pk])


@pytest.mark.parametrize(("papers", "per_paper"), [(2, 3), (12, 10)])
def test_a_cut_costs_the_same_queries_at_6_and_120_items(project, django_assert_max_num_queries, papers, per_paper):
    """One chunk holds both sizes, so both must fit the same bound (before batching, 6 items took 62 queries)."""
    batch = validated_world(project, papers=papers, per_paper=per_paper)
    # 30, 1 to look up the project's release.cut webhooks (curation/webhooks: one query, none subscribed), 2 to
    # count what the cut withholds (curation/releases/withheld.py: one count per registered reason, the exam's pool
    # and the near-duplicates) and 1 to read the last near-duplicate check for the notes (none ran).
    with django_assert_max_num_queries(34):
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
    monkeypatch.setattr(cut_services, "ITEM_CHUNK", 10)
    monkeypatch.setattr("curation.services.lifecycle.BULK_TRANSITION_CHUNK", 10)
    small = validated_world(project, papers=2, per_paper=5)
    big = validated_world(project, papers=8, per_paper=5)
    with django_assert_max_num_queries(34):  # with the webhooks lookup, the withheld counts and the check, as above
        _cut(project, small, name="small")
    # Per chunk: instances + 5 prefetches, 3 source reads, revisions, papers (4), items insert, update/read/insert.
    per_chunk = 18
    with django_assert_max_num_queries(34 + 3 * per_chunk):
        release = _cut(project, big, name="big")
    assert release.item_count == 40
    assert list(
        ReleaseItem.objects.filter(release=release).order_by("position").values_list("position", flat=True)
    ) == (list(range(40)))


def test_a_cut_in_many_chunks_freezes_the_same_release_as_in_one(project, monkeypatch):
    """Chunks of 4 split papers across chunks: a context frozen by an earlier chunk is not frozen again, a paper
    dropped after its chunk is read again when needed, and the release (hash, rows, statistics) is the same."""
    batch = validated_world(project, papers=3, per_paper=5)
    cuts = []
    for chunk in (1000, 4):
        monkeypatch.setattr(cut_services, "ITEM_CHUNK", chunk)
        with transaction.atomic():
            release = _cut(project, batch)
            cuts.append(
                (
                    release.content_hash,
                    release.statistics,
                    list(
                        ReleaseItem.objects.filter(release=release)
                        .order_by("position")
                        .values_list("uid", "data", "short_context__key", "long_context__key")
                    ),
                    sorted(ReleaseContext.objects.filter(release=release).values_list("key", "data")),
                )
            )
            assert cut_services.release_hash_recompute(release) == release.content_hash
            transaction.set_rollback(True)
    assert cuts[0] == cuts[1]
    assert len(cuts[0][3]) == len({key for key, _ in cuts[0][3]})  # each context once


def test_a_frozen_chunk_leaves_no_cycles_of_its_prefetched_rows(project, monkeypatch):
    """A chunk's instances, contexts and paragraphs go when the chunk is done, not when the cyclic collector next
    runs: each prefetched related queryset held its row in its hints, a cycle per row, and those survivors made
    CPython run full collections over the whole heap again and again (a third of a 10,000-item cut)."""
    import gc

    batch = validated_world(project, papers=6, per_paper=5)
    instance_ids = list(Instance.objects.filter(batch=batch).order_by("id").values_list("pk", flat=True))
    monkeypatch.setattr(cut_services, "ITEM_CHUNK", 10)
    gc.collect()
    gc.disable()
    try:
        cut_services._freeze_chunk(
            project=project,
            chunk=instance_ids[:10],
            frozen_contexts={},
            known_contexts=set(),
            seen_uids=set(),
            question_sources={},
            papers={},
        )
        garbage = gc.collect()
    finally:
        gc.enable()
    # What is left to the collector is Django's and psycopg's own per-query bookkeeping, not a cycle per row.
    assert garbage < 150, garbage


def test_a_chunk_reads_the_cells_only_of_the_tables_it_freezes(project):
    """A table that is only named in the release (mentioned by a paragraph, relevant to an item, excluded by one) is
    read as its key; cells are read for the paper's tables (its long context) and the short contexts' tables."""
    batch = validated_world(project, papers=3, per_paper=3)
    Instance.objects.get(question="Q0.0?").relevant_tables.set(Table.objects.filter(paper__title="Paper 0"))
    instance_ids = list(Instance.objects.filter(batch=batch).order_by("id").values_list("pk", flat=True))
    with CaptureQueriesContext(connection) as queries:
        items = cut_services._freeze_chunk(
            project=project,
            chunk=instance_ids,
            frozen_contexts={},
            known_contexts=set(),
            seen_uids=set(),
            question_sources={},
            papers={},
        )
    reading_cells = [q["sql"] for q in queries.captured_queries if '"curation_table"."cells"' in q["sql"]]
    assert len(reading_cells) == 2, reading_cells
    assert items[0]["relevant_tables"] == [f"{items[0]['paper']}/table-0"]


@pytest.mark.parametrize("fmt", sorted(EXPORT_FORMATS))
def test_an_export_costs_queries_per_chunk_not_per_item(project, monkeypatch, tmp_path, fmt):
    """Read back in chunks of 10 (each: its items, and the contexts it needs, which TAT-DQA does not read): 40 items
    cost 3 chunks more than 10."""
    monkeypatch.setattr("curation.exports.rows.ROW_CHUNK", 10)
    counts = []
    for papers in (2, 8):
        release = _cut(project, validated_world(project, papers=papers, per_paper=5), name=f"export-{papers}")
        release = Release.objects.select_related("project").get(pk=release.pk)
        with CaptureQueriesContext(connection) as queries:
            write_export_zip(release, fmt, tmp_path / f"{fmt}-{papers}.zip")
        counts.append(len(queries))
    per_chunk = 1 if CONTEXTS_READ[fmt] == NONE else 2
    assert counts[1] == counts[0] + 3 * per_chunk, counts


def test_rows_bring_only_the_contexts_their_consumer_reads(project):
    """PRIMARY brings the short context (the whole paper only for an item without one), NONE brings none and reads
    no context at all, BOTH brings both."""
    release = _cut(project, validated_world(project, papers=2, per_paper=3))
    both = list(release_rows(release))
    assert all(short is not None and long is not None for _, short, long in both)
    primary = list(release_rows(release, contexts=PRIMARY))
    assert [(item, short, None) for item, short, _ in both] == primary
    with CaptureQueriesContext(connection) as queries:
        none = list(release_rows(release, contexts=NONE))
    assert [(item, None, None) for item, _, _ in both] == none
    assert not [q for q in queries if "curation_releasecontext" in q["sql"]]
    paper_only = ReleaseItem.objects.filter(release=release, position=0)
    paper_only.update(short_context=None)
    _, short, long = next(release_rows(release, contexts=PRIMARY))
    assert short is None and long == both[0][2]
    with pytest.raises(ValueError, match="unknown contexts"):
        next(release_rows(release, contexts="short"))


def test_a_chunk_is_held_as_text_and_decoded_a_row_at_a_time(project, monkeypatch):
    """The objects the collector tracks while a row is in hand do not grow with the chunk: a chunk decoded at once
    is thousands of containers that outlive the young collections and bring on full ones over the whole heap."""
    release = _cut(project, validated_world(project, papers=8, per_paper=5))
    tracked = []
    for size in (40, 1, 40):  # the first pass warms whatever the ORM caches
        monkeypatch.setattr("curation.exports.rows.ROW_CHUNK", size)
        rows = release_rows(release)
        row = next(rows)
        gc.collect()
        tracked.append(len(gc.get_objects()))
        del row
        rows.close()
    # Before, a chunk of 40 decoded items and their contexts held about 700 more (675 in one run).
    assert tracked[2] - tracked[1] < 100, tracked


def test_an_instance_that_stops_being_validated_mid_cut_fails_the_whole_cut(project, personas, monkeypatch):
    """The cut fails (it does not skip): a manager discards one item after it was frozen and before the batched
    move; the conditional UPDATE then moves fewer rows than frozen, and nothing of the cut remains."""
    batch = validated_world(project, papers=2, per_paper=3)
    victim = Instance.objects.filter(batch=batch).order_by("id").last()
    real_statistics = cut_services.release_statistics

    def discard_then_count(*args, **kwargs):
        instance_transition(instance_id=victim.pk, target=Status.DISCARDED, actor=personas["manager"])
        return real_statistics(*args, **kwargs)

    monkeypatch.setattr(cut_services, "release_statistics", discard_then_count)
    with pytest.raises(Conflict, match="no longer validated") as raised:
        _cut(project, batch)
    assert raised.value.detail == {"instance_ids": [victim.pk]}
    assert not Release.objects.exists() and not ReleaseItem.objects.exists()
    assert set(Instance.objects.filter(batch=batch).values_list("status", flat=True)) == {Status.VALIDATED}
    assert not TransitionEvent.objects.filter(to_status__in=(Status.RELEASED, Status.DISCARDED)).exists()


def test_an_instance_changed_before_its_chunk_is_read_fails_the_cut(project, personas, monkeypatch):
    """Between chunks: the second chunk finds an instance no longer validated, and the cut fails whole."""
    monkeypatch.setattr(cut_services, "ITEM_CHUNK", 3)
    batch = validated_world(project, papers=2, per_paper=3)
    last = Instance.objects.filter(batch=batch).order_by("id").last()
    real_load = cut_services._papers_load
    calls = []

    def load_then_discard(paper_ids):
        calls.append(paper_ids)
        if len(calls) == 1:
            instance_transition(instance_id=last.pk, target=Status.DISCARDED, actor=personas["manager"])
        return real_load(paper_ids)

    monkeypatch.setattr(cut_services, "_papers_load", load_then_discard)
    with pytest.raises(Conflict, match="stopped being validated"):
        _cut(project, batch)
    assert not Release.objects.exists() and not ReleaseItem.objects.exists()
    # Freezing reads outside the cut's transaction, so the manager's discard stands; the rest stays validated.
    assert Instance.objects.get(pk=last.pk).status == Status.DISCARDED
    assert set(Instance.objects.exclude(pk=last.pk).values_list("status", flat=True)) == {Status.VALIDATED}
    assert not TransitionEvent.objects.filter(to_status=Status.RELEASED).exists()


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


# --- Big cuts run on a worker --------------------------------------------------------------------------------


def test_a_cut_below_the_threshold_runs_in_the_request(project, personas, settings):
    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 7
    batch = validated_world(project, papers=2, per_paper=3)
    result = cut_services.release_cut_request(
        project=project, actor=personas["manager"], name="small", batch_ids=[batch.pk]
    )
    assert isinstance(result, Release) and result.item_count == 6
    assert not ReleaseCut.objects.exists()


def test_a_cut_at_the_threshold_is_queued_then_built_by_the_worker_service(
    project, personas, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from curation.releases import tasks

    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 6
    monkeypatch.setattr(cut_services, "ITEM_CHUNK", 2)
    batch = validated_world(project, papers=2, per_paper=3)
    sent = []
    monkeypatch.setattr(tasks.release_cut_task, "apply_async", lambda args, queue=None: sent.append(*args))
    with django_capture_on_commit_callbacks(execute=True):
        cut = cut_services.release_cut_request(
            project=project, actor=personas["manager"], name="big", batch_ids=[batch.pk], license="CC-BY-4.0"
        )
    assert isinstance(cut, ReleaseCut) and sent == [cut.pk]
    assert (cut.state, cut.items_total, cut.items_done) == (ReleaseCut.State.PENDING, 6, 0)
    assert not Release.objects.exists()
    assert set(Instance.objects.filter(batch=batch).values_list("status", flat=True)) == {Status.VALIDATED}

    seen = []
    real_load = cut_services._papers_load

    def watch(paper_ids):  # the progress row as each chunk starts (chunks of 2 of 6)
        seen.append(ReleaseCut.objects.get(pk=cut.pk).items_done)
        return real_load(paper_ids)

    monkeypatch.setattr(cut_services, "_papers_load", watch)
    built = release_jobs.RELEASE_CUTS.run(cut.pk)
    assert built.state == ReleaseCut.State.READY and built.items_done == 6
    assert seen == [0, 2] and built.release.item_count == 6 and built.release.license == "CC-BY-4.0"
    assert built.release.created_by == personas["manager"]
    assert set(Instance.objects.filter(batch=batch).values_list("status", flat=True)) == {Status.RELEASED}
    assert release_jobs.RELEASE_CUTS.run(cut.pk).release == built.release  # redelivery: no second cut


def test_bad_cuts_are_refused_before_anything_is_queued(project, personas, settings):
    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 1
    batch = validated_world(project, papers=1, per_paper=2)
    for name, actor, batch_ids, error in (
        ("x", personas["verifier"], [batch.pk], NotPermitted),
        ("x-v2", personas["manager"], [batch.pk], InvalidInput),
        ("x", personas["manager"], [batch.pk + 99], InvalidInput),
    ):
        with pytest.raises(error):
            cut_services.release_cut_request(project=project, actor=actor, name=name, batch_ids=batch_ids)
    assert not ReleaseCut.objects.exists()


def test_a_queued_cut_whose_instance_changed_fails_with_its_reason(project, personas, settings, monkeypatch):
    from curation.releases import tasks

    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 1
    monkeypatch.setattr(tasks.release_cut_task, "apply_async", lambda args, queue=None: None)  # no worker here
    batch = validated_world(project, papers=1, per_paper=3)
    cut = cut_services.release_cut_request(project=project, actor=None, name="late", batch_ids=[batch.pk])
    victim = Instance.objects.filter(batch=batch).first()
    real_statistics = cut_services.release_statistics

    def discard_then_count(*args, **kwargs):
        instance_transition(instance_id=victim.pk, target=Status.DISCARDED, actor=personas["manager"])
        return real_statistics(*args, **kwargs)

    monkeypatch.setattr(cut_services, "release_statistics", discard_then_count)
    built = release_jobs.RELEASE_CUTS.run(cut.pk)
    assert built.state == ReleaseCut.State.FAILED and "no longer validated" in built.error
    assert not Release.objects.exists()
    assert set(Instance.objects.filter(batch=batch).values_list("status", flat=True)) == {Status.VALIDATED}


def test_the_releases_page_queues_a_big_cut_and_shows_its_progress(project, personas, settings, monkeypatch):
    from curation.releases import tasks

    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 6
    monkeypatch.setattr(tasks.release_cut_task, "apply_async", lambda args, queue=None: None)  # no worker here
    batch = validated_world(project, papers=2, per_paper=3)
    browser = Client()
    for role, expected in (("annotator", 403), ("verifier", 403)):
        browser.force_login(personas[role])
        assert browser.post(f"/p/{project.slug}/releases/", {"name": "x", "batch_ids": [batch.pk]}).status_code == (
            expected
        )
    assert not ReleaseCut.objects.exists()
    browser.force_login(personas["manager"])
    response = browser.post(f"/p/{project.slug}/releases/", {"name": "big", "batch_ids": [batch.pk]}, follow=True)
    page = response.content.decode()
    assert "is being cut on a worker: 6 instances" in page
    assert "Cuts on a worker" in page and "0 of 6 frozen" in page and 'hx-trigger="every 2s"' in page
    ReleaseCut.objects.update(state=ReleaseCut.State.RUNNING, items_done=2)
    page = browser.get(f"/p/{project.slug}/releases/").content.decode()
    assert "Being frozen" in page and "2 of 6 frozen" in page
    release_jobs.RELEASE_CUTS.run(ReleaseCut.objects.get().pk)
    page = browser.get(f"/p/{project.slug}/releases/").content.decode()
    assert "Cuts on a worker" not in page and 'hx-trigger="every 2s"' not in page and "big-v1" not in page
    assert ">big</a>" in page


def test_the_api_answers_202_for_a_queued_cut(project, personas, settings, monkeypatch, api_client_for):
    from curation.releases import tasks

    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 6
    monkeypatch.setattr(tasks.release_cut_task, "apply_async", lambda args, queue=None: None)  # no worker here
    batch = validated_world(project, papers=2, per_paper=3)
    body = {"name": "big", "batch_ids": [batch.pk]}
    url = f"/api/projects/{project.slug}/releases/"
    assert api_client_for(personas["verifier"]).post(url, body, format="json").status_code == 403
    response = api_client_for(personas["manager"]).post(url, body, format="json")
    assert response.status_code == 202, response.content
    assert response.json()["items_total"] == 6 and response.json()["state"] == "pending"


def test_the_batched_move_refuses_an_instance_edited_since_it_was_frozen(project):
    batch = validated_world(project, papers=1, per_paper=2)
    versions = dict(Instance.objects.filter(batch=batch).values_list("pk", "version"))
    stale = {**versions, min(versions): versions[min(versions)] - 1}  # as if frozen before an edit
    with pytest.raises(Conflict, match="edited meanwhile") as raised:
        instances_transition_bulk(
            instance_ids=list(versions),
            target=Status.RELEASED,
            expected_status=Status.VALIDATED,
            expected_versions=stale,
        )
    assert raised.value.detail == {"instance_ids": [min(versions)]}


def test_the_cut_forms_counts_are_reused_until_an_instance_changes(project, personas, django_assert_max_num_queries):
    from annotate.instances.services import instance_discard
    from curation.releases.selectors import batches_to_release

    batch = validated_world(project, papers=1, per_paper=2)
    BatchFactory(project=project, name="Empty batch")
    manager = personas["manager"]
    offered = batches_to_release(user=manager, project=project)
    assert (offered["instances"], offered["batches"]) == (2, 1)
    assert [(row["batch"], row["validated"]) for row in offered["recent"]] == [(batch, 2)]  # no empty batch
    # The latest change, the batches' ids and the latest of them: no instance is counted again; and what a cut would
    # withhold, read each time, a count per reason (choosing the exam's items or ticking a near-duplicate changes no
    # instance, so the cache would not see it).
    with django_assert_max_num_queries(5):
        assert batches_to_release(user=manager, project=project) == offered
    instance = Instance.objects.filter(batch=batch).first()
    instance_discard(instance_id=instance.pk, actor=manager, expected_version=instance.version, reason="dup")
    browser = Client()
    browser.force_login(manager)
    page = browser.get(f"/p/{project.slug}/releases/").content.decode()
    assert f'{batch.name} <span class="muted">(1 validated)</span>' in page
    assert "(1 instance in 1 batch)" in page and "Empty batch" not in page


def releases_page_queries(browser: Client, url: str) -> tuple[int, str]:
    """The queries of the releases page once its figures are cached (the first visit after a change fills them)."""
    browser.get(url)
    with CaptureQueriesContext(connection) as sent:
        page = browser.get(url).content.decode()
    return len(sent), page


def test_the_cut_form_costs_the_same_queries_with_3_and_30_batches(project, personas):
    """The form shows the totals and the latest batches, never a row per batch (100 batches rendered 100 rows)."""
    from curation.releases.selectors import RECENT_BATCHES

    browser = Client()
    browser.force_login(personas["manager"])
    url = f"/p/{project.slug}/releases/"
    for _ in range(3):
        validated_world(project, papers=1, per_paper=1)
    few_queries, few = releases_page_queries(browser, url)
    for _ in range(27):
        validated_world(project, papers=1, per_paper=1)
    many_queries, many = releases_page_queries(browser, url)
    assert few_queries == many_queries
    assert few.count('name="batch_ids"') == 3 and many.count('name="batch_ids"') == RECENT_BATCHES
    assert "(30 instances in 30 batches)" in many and f"The {RECENT_BATCHES} latest of the 30 batches" in many
