"""Print JSON: the near-duplicate check of a 10,000-item release against 100,000 imported reference questions — its
time and peak memory beside the time of cutting the same release, measured in one run — and its recall and
precision on duplicates planted in the release.

The references are TAT-QA's real dev and test questions over their real tables (tests/data/tatqa), imported into a
"public" project 100,000 times over: each a real question with its years shifted, on a real table, with an answer of
its own. The release (another project, 10,000 validated questions over copies of those tables) holds
- planted duplicates: a reference reworded (casing, "In 2019, what was …" for "what was … in 2019", "is" for "was",
  an added "in total", punctuation dropped), with its answer, over a copy of its table;
- planted near-misses: a reference's exact words with another answer (another year's figure): not duplicates;
- the rest: questions of the pool with their years shifted and answers of their own.
Recall: planted duplicates found / planted; precision: findings that are planted duplicates / findings.
Targets: recall >= 0.95, precision >= 0.95, and the check faster than the cut (ratio < 1).

    .venv/bin/python benchmarks/near_duplicates.py [--references 100000] [--release 10000] [--planted 500]
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import random
import re
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TATQA = ROOT / "tests" / "data" / "tatqa"
YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)\b")


def pool() -> tuple[list[list[list[str]]], list[str]]:
    """TAT-QA dev and test: their tables and their questions."""
    tables, questions = [], []
    for name in ("tatqa_dataset_dev.json.xz", "tatqa_dataset_test.json.xz"):
        for document in json.loads(lzma.decompress((TATQA / name).read_bytes())):
            tables.append(document["table"]["table"])
            questions += [q["question"] for q in document["questions"]]
    return tables, questions


def shifted(question: str, rng: random.Random) -> str:
    offset = rng.randint(-6, 6)
    return YEAR.sub(lambda m: str(int(m.group(0)) + offset), question)


def reworded(question: str, rng: random.Random) -> str:
    """Two of the edits a person makes when asking the same thing again."""
    edits = [
        lambda q: q.upper() if rng.random() < 0.5 else q.lower(),
        lambda q: re.sub(r"^(.*) in (\d{4})\?$", r"In \2, \1?", q),
        lambda q: re.sub(r"\bwas\b", "is", q, count=1),
        lambda q: q.rstrip("?") + " in total?",
        lambda q: re.sub(r"[^\w\s]", "", q),
    ]
    for edit in rng.sample(edits, 2):
        question = edit(question)
    return question


def generate(references: int, release: int, planted: int, seed: int = 7) -> dict:
    from django.db import transaction

    from curation.datasets.models import ImportRecord, SourceRecord
    from curation.models import Batch, Context, Instance, Paper, Table
    from curation.services.projects import project_create
    from curation.states import Status

    rng = random.Random(seed)
    tables, questions = pool()
    public = project_create(name="Public", slug="public", creator=None)
    ours = project_create(name="Ours", slug="ours", creator=None)
    with transaction.atomic():
        contexts = {}
        for project in (public, ours):
            paper = Paper.objects.create(project=project, title="TAT-QA tables", origin="bench")
            made = Table.objects.bulk_create(Table(paper=paper, order=i, cells=cells) for i, cells in enumerate(tables))
            rows = Context.objects.bulk_create(Context(project=project, paper=paper, kind="short") for _ in made)
            Context.tables.through.objects.bulk_create(
                Context.tables.through(context_id=c.pk, table_id=t.pk) for c, t in zip(rows, made, strict=True)
            )
            contexts[project.pk] = [c.pk for c in rows]
        record = ImportRecord.objects.create(project=public, format="tatqa", source_name="tatqa_bench.json")
        refs = []
        for _ in range(references):
            table = rng.randrange(len(tables))
            refs.append((table, shifted(rng.choice(questions), rng), [str(rng.randint(1, 10**6))]))
        made = Instance.objects.bulk_create(
            (
                Instance(project=public, context_id=contexts[public.pk][t], question=q, answer=a, status="drafted")
                for t, q, a in refs
            ),
            batch_size=5000,
        )
        SourceRecord.objects.bulk_create(
            (
                SourceRecord(
                    project=public,
                    import_record=record,
                    format="tatqa",
                    kind="question",
                    key=str(i),
                    instance_id=instance.pk,
                )
                for i, instance in enumerate(made)
            ),
            batch_size=5000,
        )
        batch = Batch.objects.create(project=ours, name="Release")
        items, kinds = [], []
        for i in range(release):
            if i < planted:  # a duplicate of a reference
                t, q, a = rng.choice(refs)
                items.append((t, reworded(q, rng), a))
                kinds.append("duplicate")
            elif i < 2 * planted:  # the same words, another answer
                t, q, a = rng.choice(refs)
                items.append((t, q, [str(int(a[0]) + rng.randint(1, 999))]))
                kinds.append("near-miss")
            else:
                items.append((rng.randrange(len(tables)), shifted(rng.choice(questions), rng), [f"{rng.random():.6f}"]))
                kinds.append("other")
        made = Instance.objects.bulk_create(
            (
                Instance(
                    project=ours,
                    batch=batch,
                    context_id=contexts[ours.pk][t],
                    question=q,
                    answer=a,
                    status=Status.VALIDATED,
                    scale="",
                )
                for t, q, a in items
            ),
            batch_size=5000,
        )
    return {"project": ours, "batch": batch.pk, "kinds": {m.pk: k for m, k in zip(made, kinds, strict=True)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--references", type=int, default=100_000)
    parser.add_argument("--release", type=int, default=10_000)
    parser.add_argument("--planted", type=int, default=500)
    parser.add_argument("--threshold", type=float, default=0.85)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _django import setup_django

    setup_django(os.environ.get("BENCH_DATABASE_URL"))
    from curation.releases.models import NearDuplicate
    from curation.releases.near_duplicates import near_duplicates_check
    from curation.releases.services.cut import release_cut

    started = time.perf_counter()
    world = generate(args.references, args.release, args.planted)
    generated = time.perf_counter() - started
    project, kinds = world["project"], world["kinds"]

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    check = near_duplicates_check(project=project, actor=None, threshold=args.threshold)
    check_seconds = time.perf_counter() - started
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    found = set(NearDuplicate.objects.filter(project=project).values_list("instance_id", flat=True))
    planted = {pk for pk, kind in kinds.items() if kind == "duplicate"}
    true = found & planted
    missed_near = len([pk for pk in found if kinds.get(pk) == "near-miss"])

    started = time.perf_counter()
    release = release_cut(project=project, actor=None, name="bench", batch_ids=[world["batch"]])
    cut_seconds = time.perf_counter() - started
    assert release.item_count == args.release

    print(
        json.dumps(
            {
                "script": "benchmarks/near_duplicates.py",
                "references": check.compared["references"],
                "release_items": check.compared["candidates"],
                "threshold": args.threshold,
                "generate_seconds": round(generated, 1),
                "check_seconds": round(check_seconds, 2),
                "cut_seconds": round(cut_seconds, 2),
                "check_over_cut": round(check_seconds / cut_seconds, 3),
                "process_peak_rss_mib_generation_included": round(rss_after / 1024, 1),
                "peak_rss_growth_during_check_mib": round((rss_after - rss_before) / 1024, 1),
                "planted_duplicates": len(planted),
                "planted_near_misses": sum(1 for kind in kinds.values() if kind == "near-miss"),
                "findings": len(found),
                "recall": round(len(true) / len(planted), 4) if planted else None,
                "precision": round(len(true) / len(found), 4) if found else None,
                "near_misses_reported": missed_near,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
