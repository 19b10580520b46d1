"""The frozen rows of a release, read back in order and in bounded chunks: what every exporter consumes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.apps import apps
from django.db.models import TextField
from django.db.models.functions import Cast

# releases/ sits above exports/ (its services write the exports), so the frozen rows are read through the app
# registry by model name rather than by importing releases/ upward.

# Items frozen per query at a cut (and the unit of an export's progress), so memory is bounded by the chunk size
# whatever the release's size.
ITEM_CHUNK = 1000
# Items read back per query: an item comes with its contexts (a long one is a whole paper), so an export holds this
# many with theirs at a time; small enough that a release of a few hundred items already reads full chunks.
ROW_CHUNK = 200
# Which frozen contexts a consumer of `release_rows` reads beside each item: both, the one the question was asked on
# (the short one, else the whole paper), or none.
BOTH, PRIMARY, NONE = "both", "primary", "none"


def release_items(release: Any) -> Iterator[dict[str, Any]]:
    """The frozen item dicts in position order, read in chunks of ROW_CHUNK (memory stays flat)."""
    return (item for item, _, _ in release_rows(release, contexts=NONE))


def release_rows(
    release: Any, *, contexts: str = BOTH
) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]]:
    """(item, short context, long context) for every item in order: what the exporters consume.

    Items come in chunks (ROW_CHUNK) and the contexts a chunk needs in one query, so memory is bounded by the chunk
    size and the queries grow per chunk, not per item. `contexts` says which contexts the consumer reads (BOTH,
    PRIMARY or NONE; one not read comes as None). A chunk is held as the database's JSON text and each row decoded
    when it is yielded, a context once for the run of items that share it: decoded, a chunk is thousands of
    containers that outlive the young collections and bring on full ones, whose cost is the whole heap's.
    """
    if contexts not in (BOTH, PRIMARY, NONE):
        raise ValueError(f"unknown contexts {contexts!r}")
    texts: dict[int, str] = {}  # context id → its JSON text, for the contexts the chunk needs
    decoded: dict[int, dict[str, Any]] = {}  # the contexts of the row last yielded
    last = -1
    while True:
        rows = []  # the last chunk goes before the next is read, so one chunk is held at a time
        # Iterated, not evaluated: an evaluated queryset keeps its rows in its result cache, and the queryset goes
        # with its compiler in a reference cycle, so each chunk would live on until a collection.
        rows = list(
            apps.get_model("curation", "ReleaseItem")
            .objects.filter(release=release, position__gt=last)
            .order_by("position")
            .values_list("position", Cast("data", TextField()), "short_context_id", "long_context_id")[:ROW_CHUNK]
            .iterator()
        )
        if not rows:
            return
        read = [_contexts_read(contexts, short_id, long_id) for _, _, short_id, long_id in rows]
        wanted = {key for pair in read for key in pair if key}
        texts = {key: text for key, text in texts.items() if key in wanted}
        missing = wanted - set(texts)
        if missing:
            texts.update(
                apps.get_model("curation", "ReleaseContext")
                .objects.filter(pk__in=missing)
                .order_by()  # not the model's ordering, which joins the release and the project to sort
                .values_list("id", Cast("data", TextField()))
                .iterator()
            )
        for (_, text, _, _), pair in zip(rows, read, strict=True):
            decoded = {key: decoded[key] if key in decoded else json.loads(texts[key]) for key in pair if key}
            short_id, long_id = pair
            yield (
                json.loads(text),
                decoded.get(short_id) if short_id else None,
                decoded.get(long_id) if long_id else None,
            )
        last = rows[-1][0]


def _contexts_read(contexts: str, short_id: int | None, long_id: int | None) -> tuple[int | None, int | None]:
    """The (short, long) context ids a consumer reading `contexts` needs for one item."""
    if contexts == NONE:
        return None, None
    if contexts == PRIMARY:
        return (short_id, None) if short_id else (None, long_id)
    return short_id, long_id
