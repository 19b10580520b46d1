"""Near-duplicates and contamination: a project's validated questions against each other, its earlier releases and
every public dataset imported on this instance (TAT-QA, TAT-DQA, FinQA, SciTaT files, in any project).

A question is its normalised text with its answer and a signature of its table (header row and first column).
MinHash over its words and word pairs, in an LSH index (datasketch), finds candidates; a pair is a near-duplicate
when the questions' token-set similarity (rapidfuzz) reaches the manager's threshold, the answers are the same and
the tables, where both sides have one, look alike. Asking "what was the revenue in 2019?" of two different reports is
no duplicate; the same question reworded over the same table with the same answer is.

The check runs when a manager asks (the cut form's *Check for near-duplicates*, or `check_near_duplicates`); its
findings are stored (`NearDuplicate`), so pages read them without comparing anything. A finding the manager ticks
is withheld from cuts through the one registry of what cuts withhold (`withheld.py`).
"""

from __future__ import annotations

import functools
import itertools
import re
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from rapidfuzz import fuzz

from curation.datasets.models import ImportRecord, SourceRecord
from curation.errors import InvalidInput
from curation.models import Context, Instance, Project, Table
from curation.releases.models import NearDuplicate, NearDuplicateCheck, ReleaseItem
from curation.services.projects import require_role
from curation.states import Role, Status

NUM_PERM = 32
LSH_THRESHOLD = 0.5  # Jaccard of word sets from which a pair is looked at (recall first; the confirmation decides)
TABLE_ALIKE = 60  # token-set similarity (0-100) from which two table signatures are the same table
SIGNATURE_CELLS = 8
CHUNK = 2000
NEAR_DUPLICATES_WITHHELD = "marked as near-duplicates to withhold"
NOT_CHECKED = "No near-duplicate check was run before this cut."

_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3})")


@functools.lru_cache(maxsize=1 << 17)  # benchmarks ask the same question of many tables
def normalise(text: str) -> str:
    """Lower case, thousands separators and punctuation out, one space between words."""
    text = text.lower()
    if "," in text:
        text = _THOUSANDS.sub("", text)
    return " ".join(_WORD.findall(text))


def _answer(answer: object) -> str:
    items = answer if isinstance(answer, list) else [answer]
    if len(items) == 1:
        return normalise(str(items[0]))
    return " | ".join(sorted(normalise(str(item)) for item in items if str(item).strip()))


def table_signature(rows: list[list[str]]) -> str:
    """A table as a few words: its first row and the first cells of its first column, normalised."""
    if not rows:
        return ""
    cells = [*rows[0], *(row[0] for row in rows[1 : SIGNATURE_CELLS + 1] if row)]
    return normalise(" ".join(str(cell) for cell in cells))


@dataclass(frozen=True)
class Question:
    key: str  # unique in one check: "c:<instance id>", "e:<release item id>", "i:<instance id>"
    against: str
    source: str
    question: str  # normalised
    answer: str
    table: str
    text: str  # as written
    instance_id: int | None
    project_id: int | None


def _signatures(context_ids: set[int]) -> dict[int, str]:
    """Each context's table signature: its first table (a short context's own, else its paper's first)."""
    # Read by descending order into a dict, so the lowest order wins (a paper's tables have distinct orders).
    through = Context.tables.through.objects.filter(context_id__in=context_ids).order_by("-table__order")
    first = dict(through.values_list("context_id", "table_id"))
    papers = dict(Context.objects.filter(pk__in=context_ids - set(first)).values_list("pk", "paper_id"))
    tables = Table.objects.filter(paper_id__in=set(papers.values())).order_by("-order")
    paper_table = dict(tables.values_list("paper_id", "pk"))
    first.update({c: paper_table[p] for c, p in papers.items() if p in paper_table})
    cells = dict(Table.objects.filter(pk__in=set(first.values())).values_list("pk", "cells"))
    return {context_id: table_signature(cells.get(table_id) or []) for context_id, table_id in first.items()}


def _questions(rows: Iterable[tuple], *, against: str) -> Iterator[Question]:
    rows = list(rows)
    tables = _signatures({row[4] for row in rows if row[4]})
    for key, source, question, answer, context_id, instance_id, project_id in rows:
        if question and normalise(str(question)):
            yield Question(
                key, against, source, normalise(str(question)), _answer(answer), tables.get(context_id, ""), question,
                instance_id, project_id,
            )  # fmt: skip


def candidates_of(project: Project) -> list[Question]:
    """What a cut may release: the project's validated instances (never a hidden-gold probe)."""
    validated = Instance.objects.without_probes().filter(project=project, status=Status.VALIDATED)
    rows = validated.values_list("pk", "question", "answer", "context_id", "project_id").order_by("pk")
    return list(
        _questions(
            ((f"c:{pk}", "", q, a, c, pk, p) for pk, q, a, c, p in rows.iterator(chunk_size=CHUNK)),
            against=NearDuplicate.Against.RELEASE,
        )
    )


def references_of(project: Project, *, exclude: set[int]) -> list[Question]:
    """The project's earlier releases (their frozen questions) and every imported question on this instance."""
    items = ReleaseItem.objects.filter(release__project=project).select_related("release", "instance")
    earlier = (
        (
            f"e:{item.pk}",
            f"release {item.release.name} v{item.release.version}",
            item.data.get("question", ""),
            item.data.get("answer", []),
            item.instance.context_id if item.instance else None,
            item.instance_id,
            project.pk,
        )
        for item in items.iterator(chunk_size=CHUNK)
    )
    records = SourceRecord.objects.filter(kind=SourceRecord.Kind.QUESTION, instance__isnull=False).exclude(
        instance_id__in=exclude
    )
    imported = (
        (f"i:{pk}", f"{ImportRecord.Format(fmt).label} {name}", q, a, c, pk, p)
        for pk, fmt, name, q, a, c, p in records.values_list(
            "instance_id",
            "import_record__format",
            "import_record__source_name",
            "instance__question",
            "instance__answer",
            "instance__context_id",
            "instance__project_id",
        ).iterator(chunk_size=CHUNK)
    )
    return [
        *_questions(earlier, against=NearDuplicate.Against.EARLIER),
        *_questions(imported, against=NearDuplicate.Against.IMPORTED),
    ]


def _words(text: str) -> set[str]:
    words = text.split()
    return {*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))}


def _hash(word: str) -> int:
    return zlib.crc32(word.encode())  # the same in every process: a check finds the same pairs each time it runs


def is_near_duplicate(a: Question, b: Question, threshold: float) -> float | None:
    """The questions' similarity (0-1) when the pair is a near-duplicate, else None."""
    if a.answer != b.answer or (a.table and b.table and fuzz.token_set_ratio(a.table, b.table) < TABLE_ALIKE):
        return None
    similarity = fuzz.token_set_ratio(a.question, b.question) / 100
    return similarity if similarity >= threshold else None


def find_pairs(
    candidates: list[Question], references: list[Question], threshold: float
) -> list[tuple[Question, Question, float]]:
    """Every (candidate, other side, similarity): a candidate against the references and the other candidates.

    Questions with the same words are indexed once (a benchmark asks the same question of many tables), and within
    them only those with the candidate's answer are looked at."""
    # Imported here, not at the top: datasketch brings in scipy, a second of every process's start (each Celery
    # worker, each management command) that only a near-duplicate check uses.
    from datasketch import MinHash, MinHashLSH

    groups: dict[str, dict[str, list[Question]]] = {}
    for question in [*references, *candidates]:
        groups.setdefault(question.question, {}).setdefault(question.answer, []).append(question)
    texts = list(groups)
    signatures = MinHash.bulk([_words(text) for text in texts], num_perm=NUM_PERM, hashfunc=_hash)
    minhashes = dict(zip(texts, signatures, strict=True))
    lsh = MinHashLSH(threshold=LSH_THRESHOLD, num_perm=NUM_PERM)
    with lsh.insertion_session() as session:
        for text, minhash in minhashes.items():
            session.insert(text, minhash, check_duplication=False)
    pairs = []
    for question in candidates:
        for text in lsh.query(minhashes[question.question]):
            for other in groups[text].get(question.answer, ()):
                if other.key == question.key or (
                    other.key.startswith("c:") and other.instance_id < question.instance_id
                ):
                    continue  # a candidate pair once, from its older side
                similarity = is_near_duplicate(question, other, threshold)
                if similarity is not None:
                    pairs.append((question, other, similarity))
    return pairs


def near_duplicates_check(
    *, project: Project, actor: AbstractBaseUser | None, threshold: float | None = None
) -> NearDuplicateCheck:
    """Compare the project's validated questions and store what was found (managers only). Withheld findings that
    are found again stay withheld; the others are replaced."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="check for near-duplicates")
    check, _ = NearDuplicateCheck.objects.get_or_create(project=project)
    if threshold is not None:
        if not isinstance(threshold, int | float) or isinstance(threshold, bool) or not 0.5 <= threshold <= 1:
            raise InvalidInput("The threshold is a similarity between 0.5 and 1.", detail={"field": "threshold"})
        check.threshold = float(threshold)
    started = time.perf_counter()
    candidates = candidates_of(project)
    references = references_of(project, exclude={q.instance_id for q in candidates})
    pairs = find_pairs(candidates, references, check.threshold)
    with transaction.atomic():
        withheld = set(
            NearDuplicate.objects.filter(project=project, is_withheld=True).values_list(
                "instance_id", "against", "source", "other_id"
            )
        )
        NearDuplicate.objects.filter(project=project).delete()
        rows = []
        for question, other, similarity in pairs:
            if other.key.startswith("c:"):  # both in this release-to-be: the newer one is the duplicate
                question, other = other, question
            against, source = other.against, other.source or "this release"
            rows.append(
                NearDuplicate(
                    project=project,
                    instance_id=question.instance_id,
                    against=against,
                    source=source,
                    other_id=other.instance_id,
                    other_project_id=other.project_id,
                    other_question=other.text,
                    similarity=round(similarity, 3),
                    is_withheld=(question.instance_id, against, source, other.instance_id) in withheld,
                )
            )
        NearDuplicate.objects.bulk_create(rows, ignore_conflicts=True, batch_size=CHUNK)
        check.checked_at = timezone.now()
        check.checked_by = actor
        check.compared = {"candidates": len(candidates), "references": len(references), "found": len(rows)}
        check.seconds = round(time.perf_counter() - started, 3)
        check.save()
    return check


def near_duplicates_withhold(*, project: Project, actor: AbstractBaseUser | None, withheld_ids: list[int]) -> int:
    """Withhold exactly the ticked findings from cuts (managers only); returns how many are withheld."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="withhold near-duplicates")
    findings = NearDuplicate.objects.filter(project=project)
    unknown = set(withheld_ids) - set(findings.filter(pk__in=withheld_ids).values_list("pk", flat=True))
    if unknown:
        raise InvalidInput(f"No such near-duplicate in this project: {sorted(unknown)}.", detail={"field": "withhold"})
    with transaction.atomic():
        findings.update(is_withheld=False)
        return findings.filter(pk__in=withheld_ids).update(is_withheld=True)


def withheld_near_duplicates(project: Project):
    """The registry's function (`withhold_from_releases`): instances whose near-duplicate finding is withheld."""
    return NearDuplicate.objects.filter(project=project, is_withheld=True).values("instance_id")


def near_duplicates_note(project: Project, instances: QuerySet[Instance]) -> str:
    """What a release's notes and dataset card say of the check over the instances a cut looked at."""
    check = NearDuplicateCheck.objects.filter(project=project).first()
    if check is None or check.checked_at is None:
        return NOT_CHECKED
    findings = NearDuplicate.objects.filter(project=project, instance_id__in=instances.values("pk"))
    sources = sorted(set(findings.values_list("source", flat=True)))
    found = findings.values("instance_id").distinct().count()
    withheld = findings.filter(is_withheld=True).values("instance_id").distinct().count()
    against = f" (against {', '.join(sources)})" if sources else ""
    return (
        f"Near-duplicate check of {check.checked_at:%Y-%m-%d %H:%M} UTC at similarity {check.threshold:g}: "
        f"{found} question{'s' if found != 1 else ''} found{against}, {withheld} withheld."
    )
