"""Cutting a release: freeze validated instances and their contexts, hash, split, count; the cut request (a big
one goes to a worker, curation/releases/services/jobs.py), and the recomputed hash and statistics that verify it."""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import operator
import random
import re
import tempfile
from collections.abc import Callable, Container, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Prefetch
from django.template.defaultfilters import pluralize
from django.utils.text import slugify

from curation.datasets.models import ImportRecord, SourceRecord
from curation.errors import Conflict, InvalidInput
from curation.exports.rows import ITEM_CHUNK, release_items, release_rows
from curation.exports.statistics import release_statistics
from curation.jobs import job_enqueue
from curation.models import Batch, Context, Instance, InstanceRevision, Paper, Paragraph, Project, Table
from curation.panel.models import PanelAnswer
from curation.releases.models import Release, ReleaseContext, ReleaseCut, ReleaseItem
from curation.releases.near_duplicates import near_duplicates_note
from curation.releases.withheld import withheld_counts, withheld_note, withheld_q, withheld_reasons
from curation.services.lifecycle import instances_transition_bulk
from curation.services.projects import require_role
from curation.states import Role, Status
from curation.table_shape import shape_from_row
from curation.webhooks.services import webhook_emit

SPLITS = ("train", "dev", "test")
_VERSION_SUFFIX = re.compile(r"-v\d+$")  # the label adds the version: "demo-v1" would read "demo-v1-v1"
DEFAULT_SPLIT_RATIOS = {"train": 0.8, "dev": 0.1, "test": 0.1}
# The split every question marked "not answerable from this context" is frozen into, whatever the seed.
UNANSWERABLE_SPLIT = "unanswerable"
# Contexts written or read per query: long ones are whole papers, so fewer at once than items.
CONTEXT_CHUNK = 200


def _named(relation: str, model: Any = Table) -> Prefetch:
    """Prefetch `relation` as rows that only name themselves (key and order): tables frozen by key only are not
    read whole (their cells were 2 in 3 of the JSON a cut decoded)."""
    return Prefetch(relation, queryset=model.objects.only("id", "paper_id", "order"))


def canonical_json(value: Any) -> str:
    """The one serialisation that is hashed: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def content_hash(contexts: Iterator[tuple[str, dict[str, Any]]], items: Iterator[dict[str, Any]]) -> str:
    """sha256 over the contexts (sorted by key) then the items (in position order), one canonical line each."""
    digest = hashlib.sha256()
    for value in itertools.chain(({"context": key, "data": data} for key, data in contexts), items):
        digest.update(canonical_json(value).encode() + b"\n")
    return digest.hexdigest()


def assign_splits(paper_sizes: dict[str, int], *, seed: int, ratios: dict[str, float]) -> dict[str, str]:
    """Paper → split, so that no paper is in two splits and question counts follow the ratios (seeded, stable)."""
    if set(ratios) - set(SPLITS) or any(r < 0 for r in ratios.values()) or not sum(ratios.values()):
        raise InvalidInput("Split ratios are non-negative shares of train, dev and test.")
    total_ratio = sum(ratios.values())
    papers = sorted(paper_sizes)
    random.Random(seed).shuffle(papers)
    total = sum(paper_sizes.values())
    targets = {name: total * ratios.get(name, 0) / total_ratio for name in SPLITS}
    filled = dict.fromkeys(SPLITS, 0)
    assignment: dict[str, str] = {}
    for paper in papers:
        # Greedy: the split furthest below its target takes the paper.
        name = max(SPLITS, key=lambda s: (targets[s] - filled[s], -SPLITS.index(s)) if targets[s] else (-1e18, 0))
        assignment[paper] = name
        filled[name] += paper_sizes[paper]
    return assignment


def instances_frozen(
    *, project: Project, ids: list[int], papers: dict[int, Any] | None = None
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Instances of any status as a release would freeze them now, each with the context a short-setting model is
    given (its short context, else its paper's long one): what a calibration asks the panel about. `papers` (kept by
    the caller between chunks) spares reading a paper again for the next chunk of the same paper."""
    contexts: dict[str, dict[str, Any]] = {}
    items = _freeze_chunk(
        project=project,
        chunk=ids,
        frozen_contexts=contexts,
        known_contexts=(),
        seen_uids=set(),
        question_sources={},
        papers={} if papers is None else papers,
        any_status=True,
    )
    return [(item, contexts.get(item["short_context"] or item["long_context"] or "")) for item in items]


@dataclass
class _PaperParts:
    """A paper with its tables and paragraphs (mentions prefetched) in order, read once per cut."""

    paper: Paper
    tables: list[Table]
    paragraphs: list[Paragraph]


def _papers_load(paper_ids: set[int]) -> dict[int, _PaperParts]:
    """Papers with their tables and paragraphs: three queries (four with mentions) whatever their number."""
    parts = {p.pk: _PaperParts(p, [], []) for p in Paper.objects.filter(pk__in=paper_ids)}
    for table in Table.objects.filter(paper_id__in=paper_ids).order_by("paper_id", "order"):
        parts[table.paper_id].tables.append(table)
    for paragraph in (
        Paragraph.objects.filter(paper_id__in=paper_ids)
        .order_by("paper_id", "order")
        .prefetch_related(_named("mentioned_tables"))
    ):
        parts[paragraph.paper_id].paragraphs.append(paragraph)
    return parts


def _table_key(table: Any, paper_key: str) -> str:
    return f"{paper_key}/table-{table.order}"


def _paragraph_key(paragraph: Any, paper_key: str) -> str:
    return f"{paper_key}/paragraph-{paragraph.order}"


def _frozen_context(
    kind: str,
    paper: dict[str, Any],
    tables: Iterable[Table],
    paragraphs: Iterable[Paragraph],
    native: dict[str, Any],
    excluded: frozenset[str],
) -> dict[str, Any]:
    """A context as it is now, less the `excluded` keys (what the item's annotators marked as wrongly extracted):
    each table through the one table representation (file grid `cells`, grid, spans and header rows)."""
    key = paper["key"]
    return {
        "kind": kind,
        "paper": paper,
        "tables": [
            {"key": _table_key(t, key), **shape_from_row(t).to_frozen()}
            for t in tables
            if _table_key(t, key) not in excluded
        ],
        "paragraphs": [
            {
                "key": _paragraph_key(p, key),
                "order": p.order,
                "section": p.section,
                "text": p.text,
                "mentioned_tables": [_table_key(t, key) for t in p.mentioned_tables.all()],
            }
            for p in paragraphs
            if _paragraph_key(p, key) not in excluded
        ],
        "native": native,
    }


def _exclusions(
    instance: Instance, paper_key: str, revisions: list[InstanceRevision]
) -> dict[str, list[dict[str, Any]]]:
    """What the item's annotators marked as wrongly extracted (SciTaT §2.3 i), each with who marked it (the author
    of the revision that last added it)."""
    exclusions = {}
    for kind, key_of in (("table", _table_key), ("paragraph", _paragraph_key)):
        rows = sorted(getattr(instance, f"excluded_{kind}s").all(), key=lambda row: row.order)
        marked_by: dict[int, str] = {}
        previous: set[int] = set()
        for revision in revisions if rows else ():
            ids = set(revision.fields.get(f"excluded_{kind}_ids") or [])
            for new_id in ids - previous:
                marked_by[new_id] = revision.author.get_username() if revision.author else ""
            previous = ids
        exclusions[f"{kind}s"] = [{"key": key_of(row, paper_key), "by": marked_by.get(row.pk, "")} for row in rows]
    return exclusions


def _context_key(base: str, excluded: frozenset[str]) -> str:
    """A frozen context's key; an item with exclusions gets its own copy, named by what it leaves out."""
    if not excluded:
        return base
    digest = hashlib.sha256("\n".join(sorted(excluded)).encode()).hexdigest()[:12]
    return f"{base}/excluding-{digest}"


def _freeze_chunk(
    *,
    project: Project,
    chunk: list[int],
    frozen_contexts: dict[str, dict[str, Any]],
    known_contexts: Container[str],
    seen_uids: set[str],
    question_sources: dict[int, SourceRecord],
    papers: dict[int, _PaperParts],
    any_status: bool = False,
) -> list[dict[str, Any]]:
    """Freeze the items of `chunk` (instance ids in release order) and, into `frozen_contexts`, any context they need
    that is neither there nor in `known_contexts` (frozen by an earlier chunk). `papers` keeps only the papers this
    chunk needs, so what it holds is bounded by the chunk. Each call costs the same few queries whatever the chunk's
    size; an instance that is no longer validated (changed since the cut began) fails the whole cut, unless
    `any_status` (a calibration asks the panel about drafts as they are: `instances_frozen`)."""
    in_status = {} if any_status else {"status": Status.VALIDATED}
    loaded = {
        i.pk: i
        for i in Instance.objects.filter(pk__in=chunk, **in_status)
        .select_related("context", "context__paragraph", "reasoning_type__parent")
        .prefetch_related(
            _named("relevant_tables"),
            _named("excluded_tables"),
            _named("excluded_paragraphs", Paragraph),
            "context__tables",
            _named("context__paragraph__mentioned_tables"),
        )
    }
    if len(loaded) != len(chunk):
        changed = sorted(set(chunk) - set(loaded))
        raise Conflict(
            f"{len(changed)} instance{pluralize(len(changed))} stopped being validated while the release was cut: "
            f"{', '.join(map(str, changed[:20]))}. Nothing was released; cut again.",
            detail={"instance_ids": changed},
        )
    instances = [loaded[pk] for pk in chunk]
    sources = {
        r.instance_id: r
        for r in SourceRecord.objects.filter(instance_id__in=chunk, kind="question").select_related("import_record")
    }
    question_sources.update(sources)
    # A TAT-DQA question has a paper (its document) but no context: find it through its source record.
    wanted = {i.context.paper_id for i in instances if i.context_id} | {
        r.paper_id for r in sources.values() if r.paper_id
    }
    for gone in set(papers) - wanted:
        _forget_prefetched(papers.pop(gone).paragraphs)
    new_papers = wanted - set(papers)
    if new_papers:
        papers.update(_papers_load(new_papers))
    context_records = SourceRecord.objects.filter(kind="context")
    paper_sources = {r.paper_id: r for r in context_records.filter(paper_id__in=wanted).order_by("id")}
    context_sources = {
        r.context_id: r for r in context_records.filter(context_id__in=[i.context_id for i in instances])
    }
    panels: dict[int, dict[str, bool]] = {}
    calibrated = [i.pk for i in instances if i.panel_size is not None]
    for answer in (
        PanelAnswer.objects.filter(instance_id__in=calibrated, error="").order_by("model") if calibrated else ()
    ):
        panels.setdefault(answer.instance_id, {})[answer.model] = answer.is_correct
    with_exclusions = [i.pk for i in instances if i.excluded_tables.all() or i.excluded_paragraphs.all()]
    revisions: dict[int, list[InstanceRevision]] = {}
    if with_exclusions:
        for revision in (
            InstanceRevision.objects.filter(instance_id__in=with_exclusions).select_related("author").order_by("number")
        ):
            revisions.setdefault(revision.instance_id, []).append(revision)

    items = []
    for instance in instances:
        source = sources.get(instance.pk)
        paper_id = instance.context.paper_id if instance.context_id else (source.paper_id if source else None)
        parts = papers.get(paper_id) if paper_id else None
        paper_source = paper_sources.get(paper_id) if parts else None
        paper_key = (
            f"{paper_source.format}:{paper_source.key}" if paper_source else f"paper-{paper_id}" if parts else ""
        )
        long_key = short_key = None
        exclusions = _exclusions(instance, paper_key, revisions.get(instance.pk, []))
        excluded = frozenset(entry["key"] for entries in exclusions.values() for entry in entries)
        if parts is not None and (instance.context_id or parts.tables or parts.paragraphs):
            # The long context is frozen beside every question, so both SciTaT settings cover the same questions.
            long_key = _context_key(paper_key, excluded)
            if long_key not in frozen_contexts and long_key not in known_contexts:
                paper = parts.paper
                frozen_contexts[long_key] = _frozen_context(
                    "long",
                    {"key": paper_key, "title": paper.title, "origin": paper.origin, "arxiv_id": paper.arxiv_id},
                    parts.tables,
                    parts.paragraphs,
                    paper_source.data if paper_source else {},
                    excluded,
                )
        if instance.context_id and instance.context.kind == Context.Kind.SHORT:
            short_key = _context_key(f"{paper_key}/context-{instance.context_id}", excluded)
            if short_key not in frozen_contexts and short_key not in known_contexts:
                context, native_record = instance.context, context_sources.get(instance.context_id)
                frozen_contexts[short_key] = _frozen_context(
                    "short",
                    {"key": paper_key, "title": parts.paper.title, "origin": parts.paper.origin},
                    sorted(context.tables.all(), key=lambda t: t.order),
                    [context.paragraph] if context.paragraph is not None else [],
                    native_record.data if native_record else {},
                    excluded,
                )
        uid = instance.external_uid or f"{project.slug}-{instance.pk}"
        if uid in seen_uids:
            uid = f"{uid}-{instance.pk}"
        seen_uids.add(uid)
        reasoning = instance.reasoning_type
        parent = reasoning.parent if reasoning is not None else None
        rtype, subtype = (parent, reasoning) if parent is not None else (reasoning, None)
        items.append(
            {
                "uid": uid,
                "question": instance.question,
                "rationale": instance.rationale,
                # An unanswerable question's gold is the abstention: blank items the form left behind are not frozen.
                "answer": list(instance.answer) if instance.is_answerable else [],
                "answer_form": instance.answer_form,
                "answer_source": instance.answer_source,
                "answer_type": instance.answer_type,
                "scale": instance.scale,
                "derivation": instance.derivation,
                "program": instance.program,
                "is_answerable": instance.is_answerable,
                "unanswerable_reason": "" if instance.is_answerable else instance.unanswerable_reason,
                "essential_actions": instance.essential_actions,
                "reasoning_type": rtype.code if rtype else None,
                "reasoning_type_name": rtype.name if rtype else None,
                "reasoning_subtype": subtype.code if subtype else None,
                "reasoning_subtype_name": subtype.name if subtype else None,
                "relevant_tables": sorted(_table_key(t, paper_key) for t in instance.relevant_tables.all()),
                "excluded": exclusions,
                "paper": paper_key,
                "short_context": short_key,
                "long_context": long_key,
                "split": "" if instance.is_answerable else UNANSWERABLE_SPLIT,
                "source_format": source.format if source else "",
                "native": source.data if source else {},
                "instance_version": instance.version,
            }
        )
        if instance.panel_size is not None:  # the panel's verdict: answered by k of the n models named
            items[-1]["panel"] = {
                "k": instance.panel_correct,
                "n": instance.panel_size,
                "models": panels.get(instance.pk, {}),
            }
    _forget_prefetched(loaded.values(), (i.context for i in instances if i.context_id))
    return items


def _forget_prefetched(*groups: Iterable[Any]) -> None:
    """Drop the rows' prefetched related querysets. Each holds its row in its hints (a reference cycle), so a chunk's
    instances, contexts and paragraphs would wait for the cyclic collector instead of going when the chunk is done:
    surviving young collections, they made CPython run its full collection over the whole heap again and again (at
    10,000 items, 50 of them took 19.7 s of a 42.7-s cut)."""
    for group in groups:
        for row in group:
            row.__dict__.pop("_prefetched_objects_cache", None)
            paragraph = row._state.fields_cache.get("paragraph")  # a context's paragraph, prefetched with it
            if paragraph is not None:
                paragraph.__dict__.pop("_prefetched_objects_cache", None)


class _FrozenSpill:
    """What a cut has frozen so far, on disk (unnamed temporary files, gone with the process however it ends):
    items in release order and contexts by key, so a cut holds a chunk in memory, not the whole release. In memory
    stay only each context's key and place in its file."""

    def __init__(self) -> None:
        self._items = tempfile.TemporaryFile()
        self._contexts = tempfile.TemporaryFile()
        self._places: dict[str, tuple[int, int]] = {}  # context key → (offset, length) in its file
        self.item_count = 0

    def __contains__(self, key: object) -> bool:
        return key in self._places

    def close(self) -> None:
        self._items.close()
        self._contexts.close()

    def items_add(self, items: list[dict[str, Any]]) -> None:
        self._items.writelines(json.dumps(item).encode() + b"\n" for item in items)
        self.item_count += len(items)

    def contexts_add(self, contexts: dict[str, dict[str, Any]]) -> None:
        self._contexts.seek(0, 2)
        for key, data in contexts.items():
            line = json.dumps(data).encode()  # ASCII escapes: any string the database takes goes to disk too
            self._places[key] = (self._contexts.tell(), len(line))
            self._contexts.write(line + b"\n")

    def context(self, key: str) -> dict[str, Any] | None:
        place = self._places.get(key)
        if place is None:
            return None
        self._contexts.seek(place[0])
        return json.loads(self._contexts.read(place[1]))

    def contexts(self, *, by_key: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
        """(key, data) in the order they were frozen, or sorted by key (the order the content hash reads)."""
        for key in sorted(self._places) if by_key else list(self._places):
            yield key, self.context(key)  # type: ignore[misc]

    def items(self, splits: Callable[[dict[str, Any]], None]) -> Iterator[dict[str, Any]]:
        """The frozen items in release order, each given its split by `splits` first."""
        self._items.flush()
        self._items.seek(0)
        for line in self._items:
            item = json.loads(line)
            splits(item)
            yield item


def release_name_slug(name: str) -> str:
    """The slug a release of `name` is cut under; InvalidInput when there is none or it carries a version (the rule
    of every cut, and of an import's `as_release` checked before its file is queued)."""
    slug = slugify(name)[:100]
    if not slug:
        raise InvalidInput("A release needs a name.")
    if _VERSION_SUFFIX.search(slug):
        raise InvalidInput(
            f"Leave the version out of the name ({slug!r} would be labelled {slug}-v1): "
            "cuts of one name are numbered v1, v2, … by themselves."
        )
    return slug


@dataclass(frozen=True)
class _CutScope:
    slug: str
    batches: list[Batch]
    instance_ids: list[int]
    withheld: dict[str, int]  # reason: validated instances of the batches left out for it
    near_duplicates: str  # what the last near-duplicate check found among them, for the notes and the card


def _cut_scope(
    *,
    project: Project,
    actor: AbstractBaseUser | None,
    name: str,
    batch_ids: list[int],
    in_file_order: bool = False,
    include_withheld: bool = False,
) -> _CutScope:
    """What a cut would release, checked: its slug, batches, validated instance ids in release order and what it
    withholds. Items are grouped by paper and context; a release cut from an import keeps the file's order
    (instances are created in it), so its export gives the records back in the order they came. Instances an app
    withholds (`withhold_from_releases`) are left out unless `include_withheld`."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="cut releases")
    slug = release_name_slug(name)
    batches = list(Batch.objects.filter(project=project, pk__in=batch_ids))
    if not batch_ids or len(batches) != len(set(batch_ids)):
        raise InvalidInput("Choose one or more batches of this project.")
    validated = Instance.objects.without_probes().filter(
        project=project, batch_id__in=batch_ids, status=Status.VALIDATED
    )
    withheld = {} if include_withheld else withheld_counts(project=project, instances=validated)
    near_duplicates = near_duplicates_note(project, validated)
    if withheld:
        validated = validated.exclude(withheld_q(project))
    order = ("id",) if in_file_order else ("context__paper_id", "context_id", "id")
    instance_ids = list(validated.order_by(*order).values_list("pk", flat=True))
    if not instance_ids and withheld:
        raise InvalidInput(
            f"Every validated instance of those batches is withheld ({withheld_reasons(withheld)}). "
            "Include withheld instances to cut them anyway: their answers become public with the release.",
            detail={"withheld": withheld},
        )
    if not instance_ids:
        raise InvalidInput("Those batches have no validated instances to release.")
    return _CutScope(slug, batches, instance_ids, withheld, near_duplicates)


def release_cut(
    *,
    project: Project,
    actor: AbstractBaseUser | None,
    name: str,
    batch_ids: list[int],
    description: str = "",
    changelog: str = "",
    license: str = "",
    citation: str = "",
    split_seed: int | None = None,
    split_ratios: dict[str, float] | None = None,
    import_record: ImportRecord | None = None,
    include_withheld: bool = False,
    progress: Callable[[int], None] | None = None,
    before_commit: Callable[[Release], None] | None = None,
) -> Release:
    """Freeze the validated instances of `batch_ids` into a new version of release `name`, moving each validated →
    released. Managers only; `actor=None` is an operator command. `before_commit` runs inside the write transaction
    once everything is written; if it raises (a worker that lost its claim), nothing of the cut remains.

    Instances are frozen a chunk at a time outside any transaction (a worker's progress is visible), each chunk
    spilled to disk, so memory is bounded by a chunk. The writes are one transaction whose conditional UPDATE checks
    each instance is still validated at the version frozen: one changed meanwhile fails the whole cut (Conflict)."""
    scope = _cut_scope(
        project=project,
        actor=actor,
        name=name,
        batch_ids=batch_ids,
        in_file_order=import_record is not None,
        include_withheld=include_withheld,
    )
    slug, batches, instance_ids = scope.slug, scope.batches, scope.instance_ids
    with closing(_FrozenSpill()) as spill:
        # Held across chunks: the context keys, the uids, answerable questions per paper and the versions frozen.
        seen_uids: set[str] = set()
        papers: dict[int, _PaperParts] = {}
        split_sizes: dict[str, int] = {}
        versions: dict[int, int] = {}
        attributions: set[str] = set()
        notes: set[str] = {scope.near_duplicates, *([withheld_note(scope.withheld)] if scope.withheld else [])}
        for start in range(0, len(instance_ids), ITEM_CHUNK):
            chunk = instance_ids[start : start + ITEM_CHUNK]
            new_contexts: dict[str, dict[str, Any]] = {}
            question_sources: dict[int, SourceRecord] = {}
            items = _freeze_chunk(
                project=project,
                chunk=chunk,
                frozen_contexts=new_contexts,
                known_contexts=spill,
                seen_uids=seen_uids,
                question_sources=question_sources,
                papers=papers,
            )
            for record in question_sources.values():
                if record.import_record.attribution:
                    attributions.add(record.import_record.attribution)
                notes.update(record.import_record.notes)
            for instance_id, item in zip(chunk, items, strict=True):
                versions[instance_id] = item["instance_version"]
                # Unanswerable questions stay in their own split (meta paper §3.4); train/dev/test share the rest.
                if item["split"] != UNANSWERABLE_SPLIT:
                    group = item["paper"] or item["uid"]
                    split_sizes[group] = split_sizes.get(group, 0) + 1
            spill.contexts_add(new_contexts)
            spill.items_add(items)
            if progress is not None:
                progress(len(chunk))

        ratios: dict[str, float] = {}
        assignment: dict[str, str] = {}
        if split_seed is not None:
            ratios = dict(split_ratios or DEFAULT_SPLIT_RATIOS)
            assignment = assign_splits(split_sizes, seed=split_seed, ratios=ratios)

        def split(item: dict[str, Any]) -> None:
            if assignment and item["split"] != UNANSWERABLE_SPLIT:
                item["split"] = assignment[item["paper"] or item["uid"]]

        digest = content_hash(spill.contexts(by_key=True), spill.items(split))
        with transaction.atomic():
            previous = Release.objects.filter(project=project, name=slug).order_by("-version").first()
            version = previous.version + 1 if previous else 1
            release = Release.objects.create(
                project=project,
                name=slug,
                version=version,
                description=description,
                changelog=changelog,
                license=license,
                citation=citation,
                import_record=import_record,
                attribution="\n\n".join(sorted(attributions)),
                notes=sorted(notes),
                supersedes=previous,
                content_hash=digest,
                item_count=spill.item_count,
                split_seed=split_seed,
                split_ratios=ratios,
                created_by=actor,
                statistics=release_statistics(spill.items(split), spill.context),
            )
            release.batches.set(batches)
            # Written a chunk at a time from the spill: contexts first (items point at them), then items.
            context_ids: dict[str, int] = {}
            contexts = spill.contexts()
            while part := list(itertools.islice(contexts, CONTEXT_CHUNK)):
                created = ReleaseContext.objects.bulk_create(
                    [ReleaseContext(release=release, key=k, kind=d["kind"], data=d) for k, d in part]
                )
                context_ids.update((row.key, row.pk) for row in created)
            items = spill.items(split)
            position = 0
            while part := list(itertools.islice(items, ITEM_CHUNK)):
                ReleaseItem.objects.bulk_create(
                    ReleaseItem(
                        release=release,
                        position=position + offset,
                        instance_id=instance_ids[position + offset],
                        uid=item["uid"],
                        split=item["split"],
                        short_context_id=context_ids[item["short_context"]] if item["short_context"] else None,
                        long_context_id=context_ids[item["long_context"]] if item["long_context"] else None,
                        data=item,
                    )
                    for offset, item in enumerate(part)
                )
                position += len(part)
            reason = f"included in release {release.label}" + (f" cut by {actor}" if actor is not None else "")
            instances_transition_bulk(
                instance_ids=instance_ids,
                target=Status.RELEASED,
                expected_status=Status.VALIDATED,
                expected_versions=versions,
                reason=reason,
            )
            if before_commit is not None:
                before_commit(release)
            named = ("id", "name", "version", "label", "item_count", "content_hash", "created_at")
            payload = {
                "release": {name: getattr(release, name) for name in named},
                "batches": [{"id": batch.pk, "name": batch.name} for batch in batches],
                "cut_by": release.created_by.get_username() if release.created_by else None,
            }
            webhook_emit(project=project, event="release.cut", payload=payload)
            return release


# What a page or the API may pass to a cut besides the project, the actor, the name and the batches.
CUT_OPTIONS = ("description", "changelog", "license", "citation", "split_seed", "split_ratios", "include_withheld")


ALL_BATCHES = "all"
MAX_BATCH_PARTS = 100  # numbers and ranges in one typed list of batches
_BATCH_PART = re.compile(r"(\d{1,9})(?:\s*[-–]\s*(\d{1,9}))?")


def cut_batch_ids(*, project: Project, batch_ids: list[int], batches: str = "") -> list[int]:
    """The batches a cut names, as ids: `batch_ids` and, in `batches`, either "all" (every batch of the project with
    validated instances, alone) or batch numbers and ranges separated by commas ("3-7, 12": batch 12 and the
    project's batches numbered 3 to 7). Each number must be a batch of the project and each range must hold one; a
    range is read as a range, never listed out, so "1-999999" costs what "1-9" does."""
    parts = [part.strip() for part in batches.split(",") if part.strip()]
    if ALL_BATCHES in (part.lower() for part in parts):
        if batch_ids or len(parts) > 1:
            raise InvalidInput("Choose every batch with validated instances, or some batches: not both.")
        waiting = Instance.objects.without_probes().filter(
            project=project, status=Status.VALIDATED, batch__isnull=False
        )
        ids = list(waiting.order_by("batch_id").values_list("batch_id", flat=True).distinct())
        if not ids:
            raise InvalidInput("No batch of this project has validated instances to release.")
        return ids
    if len(parts) > MAX_BATCH_PARTS:
        raise InvalidInput(f"Name at most {MAX_BATCH_PARTS} batch numbers or ranges at once (use ranges: 3-7).")
    ranges = []
    for part in parts:
        match = _BATCH_PART.fullmatch(part)
        if not match:
            raise InvalidInput(f"Batches are numbers or ranges separated by commas, e.g. 3-7, 12: not {part!r}.")
        low, high = int(match[1]), int(match[2] or match[1])
        if low > high:
            raise InvalidInput(f"The range {part} runs backwards: write {high}-{low}.")
        ranges.append((low, high))
    if not ranges:
        return sorted(set(batch_ids))
    within = functools.reduce(operator.or_, (Batch.numbered(low, high) for low, high in ranges))
    found = list(Batch.objects.filter(project=project).filter(within).only("pk", "order"))
    for low, high in ranges:
        if not any(low <= batch.number <= high for batch in found):
            what = f"batch {low}" if low == high else f"batch numbered {low}-{high}"
            raise InvalidInput(f"This project has no {what}.")
    return sorted(set(batch_ids) | {batch.pk for batch in found})


def release_cut_request(
    *,
    project: Project,
    actor: AbstractBaseUser | None,
    name: str,
    batch_ids: list[int] | None = None,
    batches: str = "",
    **options: Any,
) -> Release | ReleaseCut:
    """Cut now (fewer than TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS validated instances: the Release) or on a worker of
    the exports queue (the ReleaseCut that tracks it). Either way the same checks refuse a bad cut before anything
    is written, and the worker runs the same `release_cut`. The batches are `batch_ids` and `batches` ("all", or
    numbers and ranges: `cut_batch_ids`), resolved to ids here, so the worker cuts the batches named when asked."""
    unknown = set(options) - set(CUT_OPTIONS)
    if unknown:
        raise InvalidInput(f"Unknown release options: {', '.join(sorted(unknown))}.")
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="cut releases")
    batch_ids = cut_batch_ids(project=project, batch_ids=list(batch_ids or []), batches=batches)
    scope = _cut_scope(
        project=project,
        actor=actor,
        name=name,
        batch_ids=batch_ids,
        include_withheld=bool(options.get("include_withheld")),
    )
    if len(scope.instance_ids) < settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS:
        return release_cut(project=project, actor=actor, name=name, batch_ids=batch_ids, **options)
    with transaction.atomic():
        cut = ReleaseCut.objects.create(
            project=project,
            name=scope.slug,
            options={"batch_ids": list(batch_ids), **options},
            items_total=len(scope.instance_ids),
            requested_by=actor,
        )
        job_enqueue(task_name="curation.release_cut", args=[cut.pk])  # sent after commit
    return cut


def release_hash_recompute(release: Release) -> str:
    """The content hash recomputed from the stored frozen rows, streamed (equal to `content_hash` unless tampered
    with): the contexts sorted by key in Python (as the cut hashed them, whatever the database's collation), their
    data read a chunk at a time."""
    keys = sorted(ReleaseContext.objects.filter(release=release).order_by().values_list("key", "pk"))

    def contexts() -> Iterator[tuple[str, dict[str, Any]]]:
        for start in range(0, len(keys), CONTEXT_CHUNK):
            part = keys[start : start + CONTEXT_CHUNK]
            data = dict(
                ReleaseContext.objects.filter(pk__in=[pk for _, pk in part]).order_by().values_list("pk", "data")
            )
            yield from ((key, data[pk]) for key, pk in part)

    return content_hash(contexts(), release_items(release))


def release_statistics_recompute(release: Release) -> dict[str, Any]:
    """Statistics computed again from the frozen rows (the stored ones were computed the same way at cut time)."""
    current: dict[str, dict[str, Any]] = {}

    def items() -> Iterator[dict[str, Any]]:
        for item, short, long in release_rows(release):
            current.clear()
            for key, data in ((item.get("short_context"), short), (item.get("long_context"), long)):
                if key and data is not None:
                    current[key] = data
            yield item

    return release_statistics(items(), current.get)
