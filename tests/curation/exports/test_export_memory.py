"""An export's memory does not grow with the release: the eight formats over one small and one big release, both
built once for the module (tests/support/shared_world.py), each format's test in a savepoint of its own."""

from __future__ import annotations

import json
import zipfile

import pytest

from curation.exports import EXPORT_FORMATS, write_export_zip
from tests.curation.conftest import release_build, release_world_build
from tests.support.shared_world import base_world_build, shared_world


def _grown(release, copies: int):
    """A release of `copies` copies of `release`'s frozen items and contexts, each copy over papers of its own (as a
    release grows: more items over more papers), written with bulk inserts. The papers' titles are long (2 kB), so
    an export that held every source paper to the end would show it."""
    from curation.releases.models import Release, ReleaseContext, ReleaseItem

    grown = Release.objects.create(
        project=release.project,
        name=f"grown-{copies}",
        version=1,
        content_hash=release.content_hash,
        item_count=copies * release.item_count,
        statistics=release.statistics,
    )
    contexts = list(release.contexts.order_by("id"))
    items = list(release.items.order_by("position"))
    for copy in range(copies):

        def renamed(data, copy=copy):
            data = json.loads(json.dumps(data))
            for name in ("short_context", "long_context"):
                if data.get(name):
                    data[name] = f"{data[name]}#{copy}"
            if isinstance(data.get("paper"), dict):
                data["paper"]["key"] = f"{data['paper']['key']}-{copy}"
                data["paper"]["title"] = f"{data['paper'].get('title', '')} " + "with a long title " * 110
            elif data.get("paper"):
                data["paper"] = f"{data['paper']}-{copy}"
            if data.get("uid"):
                data["uid"] = f"{data['uid']}-{copy}"
            return data

        made = ReleaseContext.objects.bulk_create(
            ReleaseContext(release=grown, key=f"{c.key}#{copy}", kind=c.kind, data=renamed(c.data)) for c in contexts
        )
        twin = {old.pk: new for old, new in zip(contexts, made, strict=True)}
        ReleaseItem.objects.bulk_create(
            ReleaseItem(
                release=grown,
                position=copy * len(items) + item.position,
                uid=f"{item.uid}-{copy}",
                split=item.split,
                short_context=twin.get(item.short_context_id),
                long_context=twin.get(item.long_context_id),
                data=renamed(item.data),
            )
            for item in items
        )
    return grown


def _traced_peak(release, fmt, out) -> int:
    import tracemalloc

    tracemalloc.start()
    try:
        write_export_zip(release, fmt, out)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def grown(django_db_setup, django_db_blocker):
    """The small and the big release, 300 and 3,000 items over 100 and 1,000 papers."""
    with shared_world(django_db_blocker):
        world = base_world_build()
        release = release_build(release_world_build(world["project"], world["personas"]))
        yield _grown(release, 50), _grown(release, 500)


@pytest.mark.parametrize("fmt", sorted(EXPORT_FORMATS))
def test_export_memory_does_not_grow_with_the_release(grown, db, fmt, tmp_path):
    """An export holds a bounded part of a release at a time (a chunk of rows, a chunk of the card's papers): ten
    times the items over ten times the papers peak at most half again as high (traced Python memory, not time).
    Holding the papers to the end, as exports once did, peaked ×2 here; holding the items, far more."""
    small, big = grown
    peaks = [_traced_peak(r, fmt, tmp_path / f"{r.name}.zip") for r in (small, big)]
    with zipfile.ZipFile(tmp_path / f"{big.name}.zip") as bundle:
        card = bundle.read("README.md").decode()
    assert card.count("| paper-") == 1000  # every paper is on the card
    assert peaks[1] <= 1.5 * peaks[0], [round(peak / 2**20, 2) for peak in peaks]
