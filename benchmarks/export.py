"""Print JSON with seconds and peak memory of every export format for synthetic releases of 10,000 and 100,000 items.

Each export runs in a fresh child process so its peak resident memory is its own; `export_peak_mb` is that
peak (VmHWM) minus the child's resident memory just before the export started (Django, pyarrow loaded, database
open). Target: at 100,000 items within 1.5x of the figure at 10,000.

    .venv/bin/python benchmarks/export.py [--sizes 10000 100000] [--formats jsonl csv …]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ITEMS_PER_CONTEXT = 5


def _status_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status (VmRSS now, VmHWM its peak) in MiB.

    Not ru_maxrss: on Linux a child started by fork+exec can report its parent's peak there.
    """
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _context(index: int) -> dict:
    paper = f"bench:paper-{index}"
    return {
        "kind": "short",
        "paper": {"key": paper, "title": f"Synthetic paper {index}", "origin": "bench"},
        "tables": [
            {
                "key": f"{paper}/table-0",
                "label": "tab:results",
                "number": "1",
                "caption": "Accuracy of each model on each task.",
                "cells": [["Model", "SST-2", "MNLI", "QNLI", "RTE"]]
                + [[f"model-{r}", *(f"{80 + (index + r * c) % 17}.{c}" for c in range(4))] for r in range(5)],
            }
        ],
        "paragraphs": [
            {
                "key": f"{paper}/paragraph-{p}",
                "order": p,
                "section": "Results",
                "text": " ".join(f"word{(index + p + w) % 97}" for w in range(60)),
                "mentioned_tables": [f"{paper}/table-0"],
            }
            for p in range(3)
        ],
        "native": {},
    }


def _item(index: int, context_key: str, paper: str) -> dict:
    kinds = ("arithmetic", "span", "multi-span", "count")
    return {
        "uid": f"bench-{index}",
        "question": f"What is the accuracy of model-{index % 5} on task {index % 4}, and how does it compare?",
        "rationale": "The table lists the accuracy per model and task; we read the row and compare. " * 2,
        "answer": [f"{80 + index % 17}.{index % 4}"] if index % 3 else ["model-1", "model-3"],
        "answer_form": "short" if index % 4 else "free",
        "answer_source": ("table", "text", "table-text")[index % 3],
        "answer_type": kinds[index % 4],
        "scale": ("", "percent", "thousand")[index % 3],
        "derivation": "",
        "program": "",
        "essential_actions": [],
        "reasoning_type": "numerical_reasoning",
        "reasoning_type_name": "Numerical Reasoning",
        "reasoning_subtype": "comparison",
        "reasoning_subtype_name": "Comparison",
        "relevant_tables": [f"{paper}/table-0"],
        "paper": paper,
        "short_context": context_key,
        "long_context": None,
        "split": ("train", "dev", "test")[index % 3],
        "source_format": "",
        "native": {},
        "instance_version": 1,
    }


def generate(size: int) -> int:
    """A release of `size` synthetic items (one context per 5 items), written with bulk inserts; returns its id."""
    from django.db import transaction

    from curation.models import Project
    from curation.services.projects import project_create

    slug = f"bench-{size}"
    project = Project.objects.filter(slug=slug).first() or project_create(name=slug, slug=slug, creator=None)
    with transaction.atomic():
        return _generate(project, slug, size)


def _generate(project, slug: str, size: int) -> int:
    from curation.exports.statistics import release_statistics
    from curation.releases.models import Release, ReleaseContext, ReleaseItem

    release = Release.objects.create(project=project, name=slug, version=1, content_hash="", item_count=size)
    contexts: dict[str, dict] = {}
    context_rows: dict[str, ReleaseContext] = {}
    chunk = 5000
    for start in range(0, size, chunk):
        items = []
        for index in range(start, min(start + chunk, size)):
            key = _context_key(index)
            if key not in contexts:
                contexts[key] = _context(index // ITEMS_PER_CONTEXT)
            items.append((index, key, _item(index, key, contexts[key]["paper"]["key"])))
        new = [k for _, k, _ in items if k not in context_rows]
        created = ReleaseContext.objects.bulk_create(
            [ReleaseContext(release=release, key=k, kind="short", data=contexts[k]) for k in dict.fromkeys(new)]
        )
        context_rows.update({row.key: row for row in created})
        ReleaseItem.objects.bulk_create(
            [
                ReleaseItem(
                    release=release, position=i, uid=d["uid"], split=d["split"], short_context=context_rows[k], data=d
                )
                for i, k, d in items
            ],
            batch_size=1000,
        )
        # Contexts of finished chunks are no longer needed in memory.
        current = {k for _, k, _ in items}
        for key in [k for k in contexts if k not in current]:
            del contexts[key]
    # Statistics from the same synthetic items, without reading them back (the card shows them).
    release.statistics = release_statistics(
        (_item(i, _context_key(i), f"bench:paper-{i // ITEMS_PER_CONTEXT}") for i in range(size)),
        lambda key: _context(int(key.rsplit("-", 1)[1])),
    )
    release.content_hash = hashlib.sha256(f"synthetic benchmark release of {size} items".encode()).hexdigest()
    release.save(update_fields=["statistics", "content_hash"])
    return release.pk


def _context_key(index: int) -> str:
    c_index = index // ITEMS_PER_CONTEXT
    return f"bench:paper-{c_index}/context-{c_index}"


def child(release_id: int, fmt: str, out: Path) -> dict:
    """Run one export in this process and measure it."""
    import django

    django.setup()
    import curation.exports.card
    import curation.exports.writers  # noqa: F401  (pyarrow and friends load before the baseline is taken)
    from curation.exports import write_export_zip
    from curation.releases.models import Release

    release = Release.objects.select_related("project").get(pk=release_id)
    baseline = _status_mb("VmRSS")
    started = time.perf_counter()
    _, size = write_export_zip(release, fmt, out)
    seconds = time.perf_counter() - started
    peak = _status_mb("VmHWM")
    return {
        "seconds": round(seconds, 2),
        "baseline_rss_mb": round(baseline, 1),
        "peak_rss_mb": round(peak, 1),
        "export_peak_mb": round(peak - baseline, 1),
        "zip_bytes": size,
        "items_per_second": round(release.item_count / seconds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--formats", nargs="+", default=None)
    parser.add_argument("--child", nargs=3, metavar=("RELEASE_ID", "FORMAT", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child[0]), args.child[1], Path(args.child[2]))))
        return

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _django import setup_django

    database_url = setup_django(os.environ.get("BENCH_DATABASE_URL"))
    from curation.exports import EXPORT_FORMATS

    formats = args.formats or list(EXPORT_FORMATS)
    results: dict = {"database": database_url.split(":", 1)[0], "items_per_context": ITEMS_PER_CONTEXT, "sizes": {}}
    releases = {}
    for size in args.sizes:
        started = time.perf_counter()
        releases[size] = generate(size)
        results["sizes"][str(size)] = {"generate_seconds": round(time.perf_counter() - started, 1), "formats": {}}
    env = {**os.environ, "DATABASE_URL": database_url}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            for fmt in formats:
                out = Path(tmp) / f"{size}-{fmt}.zip"
                command = [sys.executable, __file__, "--child", str(releases[size]), fmt, str(out)]
                completed = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
                results["sizes"][str(size)]["formats"][fmt] = json.loads(completed.stdout.strip().splitlines()[-1])
                out.unlink()
    if len(args.sizes) >= 2:
        small, big = (str(s) for s in sorted(args.sizes)[:1] + sorted(args.sizes)[-1:])
        results["peak_ratio_big_over_small"] = {
            fmt: round(
                results["sizes"][big]["formats"][fmt]["export_peak_mb"]
                / max(results["sizes"][small]["formats"][fmt]["export_peak_mb"], 1.0),
                2,
            )
            for fmt in formats
        }
        results["target"] = "export_peak_mb at the biggest size within 1.5x of the smallest"
        results["target_met"] = all(ratio <= 1.5 for ratio in results["peak_ratio_big_over_small"].values())
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
