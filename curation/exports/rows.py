"""The frozen rows of a release, read back in order and in bounded chunks: what every exporter consumes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.apps import apps

# releases/ sits above exports/ (its services write the exports), so the frozen rows are read through the app
# registry by model name rather than by importing releases/ upward.

# Items frozen per query at a cut (and the unit of an export's progress), so memory is bounded by the chunk size
# whatever the release's size.
ITEM_CHUNK = 1000
# Items read back per query: an item comes with its contexts (a long one is a whole paper), so an export holds this
# many with theirs at a time; small enough that a release of a few hundred items already reads full chunks.
ROW_CHUNK = 200


def release_items(release: Any, *, chunk: int | None = None) -> Iterator[dict[str, Any]]:
    """The frozen item dicts in position order, read in chunks of ROW_CHUNK (memory stays flat)."""
    chunk = chunk or ROW_CHUNK
    last = -1
    while True:
        rows = list(
            apps.get_model("curation", "ReleaseItem")
            .objects.filter(release=release, position__gt=last)
            .order_by("position")
            .values_list("position", "data")[:chunk]
        )
        if not rows:
            return
        for _, data in rows:
            yield data
        last = rows[-1][0]


def release_rows(
    release: Any, *, chunk: int | None = None
) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]]:
    """(item, short context, long context) for every item in order: what the exporters consume.

    Items come in chunks (ROW_CHUNK) and the contexts a chunk needs in one query, so memory is bounded by the chunk
    size and the queries grow per chunk, not per item.
    """
    chunk = chunk or ROW_CHUNK
    contexts: dict[int, dict[str, Any]] = {}
    last = -1
    while True:
        rows = list(
            apps.get_model("curation", "ReleaseItem")
            .objects.filter(release=release, position__gt=last)
            .order_by("position")
            .values_list("position", "data", "short_context_id", "long_context_id")[:chunk]
        )
        if not rows:
            return
        wanted = {key for row in rows for key in row[2:] if key}
        contexts = {key: data for key, data in contexts.items() if key in wanted}
        missing = wanted - set(contexts)
        if missing:
            contexts.update(
                apps.get_model("curation", "ReleaseContext")
                .objects.filter(pk__in=missing)
                .order_by()  # not the model's ordering, which joins the release and the project to sort
                .values_list("id", "data")
            )
        for _, data, short_id, long_id in rows:
            yield data, contexts.get(short_id) if short_id else None, contexts.get(long_id) if long_id else None
        last = rows[-1][0]
