"""How the cost of every page and job grows with a project: measured at 10,000 and 100,000 instances (JSON).

For each size a realistic project is generated into its own PostgreSQL database (`<base>_scale_<size>`; kept between
runs with `--keep`, so iterating on a fix skips the generation): papers of 2 tables and 5 paragraphs with 5 short
contexts and a long one, 4 instances per short context, every status represented, about 10 revisions and 5
transition events per instance, 40 annotators (20 holding a lease, 20 free to claim), 5 verifiers, 2 managers,
batches of 1,000, 5 releases cut by the real `release_cut`, 20 scoring runs with a prediction per item, work
times, review comments and discussions.

Per request (the Django test client in each size's own long-lived process, so "server time" is the time inside the
request: URL routing, middleware, view, template — no network; every statement sent counted): median and p95
milliseconds and the query count. Every request runs in a transaction that is rolled back, so a claim or a review
claim measures the same state each time and the kept database stays as generated. The sizes are measured side by
side in time, so a busy moment of the machine weighs on both alike: one process per size (its own Django, database
and cache: REDIS_URL's Redis database n for the first size, n+1 for the next, each emptied when its process starts:
both projects have the same slug and primary keys, and the figures cache's keys differ only by the latest instance
change), and for each request a warm-up at every size, then `--repeat` rounds of one repetition at each size, the
sizes' order reversed every other round; the parent reads each sample back over a pipe. Beside the ratio of medians,
`paired_median` is the median of the rounds' own big ÷ small ratios.

Per bulk job (each run in a fresh child process, with DEBUG off as on the workers, the sizes alternating run by
run): wall seconds and peak resident memory above the child's baseline (VmHWM − VmRSS before the job): cutting the
validated instances (10% of the project: 10,000 items at 100,000), each export format of the largest release,
importing TAT-QA dev into the project, the lease reaper (50 expired leases) and the scoring reaper (10 stalled
chunks); each the run of median seconds of 3 (of 5 for the cut, of 7 for an export), timed to 0.1 ms. Jobs that
write roll back.

The hot paths (`--only hot`, and in `all`), each benchmark run as a subprocess on databases and ports of its own,
its JSON under "hot_paths": 64 clients claiming beside the trivial endpoint (queue_claim.py, its server on the first
of `--ports`), a scoring and a drafting run at an endpoint's limit on 2 workers (run_throughput.py --kind both, at its
default latency), and the embedded start twice (start_time.py on the other two ports: a fresh copy of HEAD, whose
first start installs, or the installed `--start-tree`).

Ratios are 100k ÷ 10k (largest ÷ smallest size). "targets" holds every figure the issue names with its value, its
target and whether it held, and "not_held" lists those that did not: per-request time and queries ≤ 1.3; bulk
seconds ≤ 11 for 10× the data and peak memory ≤ 1.5×; claim throughput ≥ 0.95 of the trivial endpoint's, claim p95
≤ 1.2× its p95, no double assignment; scoring and drafting runs ≥ 0.95 of C / L; the second start's first page
≤ 30 s. "loadavg" is the load average at the start and end of each phase.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h7 REDIS_URL=redis://127.0.0.1:6379/7 \\
        .venv/bin/python benchmarks/scale.py --sizes 10000 100000 [--keep] [--repeat 15] [--only all|pages|jobs|hot]
        [--names dashboard …] [--jobs leases_reap export:csv …] [--ports 8221 8231 8232] [--start-tree DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import ROOT, fresh_postgres_database, setup_django

SLUG = "scale"
GENERATOR_VERSION = "4"  # bump when the generated shape changes: a kept database of another version is rebuilt
CONTEXTS_PER_PAPER = 5
ITEMS_PER_CONTEXT = 4
BATCH_SIZE = 1000
CHUNK = 5000
HOLDERS = 20  # annotators holding one live lease each
CLAIMERS = 20  # annotators holding nothing (they claim)
VERIFIERS = 5
EXPIRED_LEASES = 50
STALLED_CHUNKS = 10

# Share of the project in each status (per 100 instances), the revisions and the path of transitions each has.
PATH_TO_VALIDATED = ["drafted", "in_refinement", "submitted", "round1_review", "round2_review", "validated"]
SHAPE: list[tuple[str, int, int, list[str]]] = [
    # status, per 100, revisions, path ("" → first is the creation event)
    ("drafted", 33, 2, ["drafted"]),
    ("submitted", 2, 8, ["drafted", "in_refinement", "submitted"]),
    ("round1_review", 10, 9, ["drafted", "in_refinement", "submitted", "round1_review"]),
    ("changes_requested", 3, 11, ["drafted", "in_refinement", "submitted", "round1_review", "changes_requested"]),
    ("round2_review", 8, 12, PATH_TO_VALIDATED[:-1]),
    ("in_discussion", 1, 14, [*PATH_TO_VALIDATED[:-1], "in_discussion"]),
    ("validated", 10, 15, PATH_TO_VALIDATED),
    ("released", 28, 16, [*PATH_TO_VALIDATED[:2], "drafted", *PATH_TO_VALIDATED[1:]]),  # one skip on the way
    ("discarded", 5, 6, ["drafted", "in_refinement", "drafted", "discarded"]),
]
REVIEWED_ONCE = ("round2_review", "in_discussion", "validated", "released")
REVIEWED_TWICE = ("in_discussion", "validated", "released")
STATUS_OF = [status for status, share, _, _ in SHAPE for _ in range(share)]
assert len(STATUS_OF) == 100


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


# --- generation -------------------------------------------------------------------------------------------------


def _users() -> dict[str, list]:
    from django.contrib.auth import get_user_model

    from curation.models import Membership, Project
    from curation.states import Role

    User = get_user_model()
    project = Project.objects.get(slug=SLUG)
    people: dict[str, list] = {"holders": [], "claimers": [], "verifiers": [], "managers": []}
    for group, count in (("holders", HOLDERS), ("claimers", CLAIMERS), ("verifiers", VERIFIERS), ("managers", 2)):
        for i in range(count):
            user = User(username=f"{group}-{i}")
            user.set_unusable_password()
            people[group].append(user)
    User.objects.bulk_create([u for group in people.values() for u in group])
    for group in people:
        people[group] = list(User.objects.filter(username__startswith=f"{group}-").order_by("id"))
    memberships = []
    for group, role in (("holders", "annotator"), ("claimers", "annotator"), ("verifiers", "verifier")):
        memberships += [Membership(user=u, project=project, role=role, is_qualified=True) for u in people[group]]
    memberships += [Membership(user=u, project=project, role=Role.MANAGER) for u in people["managers"]]
    Membership.objects.bulk_create(memberships)
    return people


def _papers(project, size: int) -> list[tuple[int, list[int], list[int]]]:
    """Papers with tables, paragraphs and contexts; [(short context id, its table ids, paper id)] in order."""
    from curation.models import Context, Paper, Paragraph, Table

    Mentions = Paragraph.mentioned_tables.through
    ContextTables = Context.tables.through
    papers_needed = -(-size // (CONTEXTS_PER_PAPER * ITEMS_PER_CONTEXT))
    contexts: list[tuple[int, list[int], int]] = []
    per_chunk = 500
    for start in range(0, papers_needed, per_chunk):
        papers = Paper.objects.bulk_create(
            [
                Paper(project=project, title=f"Scale paper {p}", origin="bench", source_name=f"paper-{p}.tex")
                for p in range(start, min(start + per_chunk, papers_needed))
            ]
        )
        tables, paragraphs = [], []
        for paper in papers:
            for t in range(2):
                cells = [
                    ["Model", "SST-2", "MNLI", "RTE"],
                    *[[f"m{r}", f"{80 + r}.{t}", "71.2", "66.0"] for r in range(8)],
                ]
                tables.append(
                    Table(paper=paper, order=t, number=str(t + 1), label=f"tab:{t}", caption=f"Results {t}",
                          cells=cells, grid=cells, header_rows=1)
                )  # fmt: skip
            for g in range(CONTEXTS_PER_PAPER):
                text = f"Model m{g} reaches {80 + g}.0 on SST-2 (Table {g % 2 + 1}), better than the baseline. " * 3
                paragraphs.append(
                    Paragraph(paper=paper, order=g, section="Results", text=text, mentions=[f"tab:{g % 2}"])
                )
        Table.objects.bulk_create(tables, batch_size=2000)
        Paragraph.objects.bulk_create(paragraphs, batch_size=2000)
        by_paper_tables: dict[int, list] = {}
        for table in tables:
            by_paper_tables.setdefault(table.paper_id, []).append(table)
        Mentions.objects.bulk_create(
            [Mentions(paragraph_id=p.pk, table_id=by_paper_tables[p.paper_id][p.order % 2].pk) for p in paragraphs],
            batch_size=5000,
        )
        short = [Context(project=project, paper_id=p.paper_id, kind="short", paragraph=p) for p in paragraphs]
        long = [Context(project=project, paper=paper, kind="long") for paper in papers]
        Context.objects.bulk_create(short + long, batch_size=2000)
        links = [
            ContextTables(context_id=c.pk, table_id=by_paper_tables[c.paper_id][c.paragraph.order % 2].pk)
            for c in short
        ]
        links += [ContextTables(context_id=c.pk, table_id=t.pk) for c in long for t in by_paper_tables[c.paper_id]]
        ContextTables.objects.bulk_create(links, batch_size=5000)
        contexts += [(c.pk, [by_paper_tables[c.paper_id][c.paragraph.order % 2].pk], c.paper_id) for c in short]
    return contexts


def _instance_fields(i: int) -> dict:
    kinds = ("span", "arithmetic", "multi-span", "count")
    return {
        "question": f"What does model m{i % 8} reach on SST-2 in experiment {i}?",
        "rationale": f"Row m{i % 8} of the table gives the SST-2 accuracy; the paragraph confirms it.",
        "answer": [f"{80 + i % 8}.{i % 2}"],
        "answer_form": "short" if i % 5 else "free",
        "answer_source": ("table", "text", "table-text")[i % 3],
        "answer_type": kinds[i % 4],
        "scale": ("", "percent")[i % 2],
    }


def generate(size: int) -> dict:
    """Write the project of `size` instances (bulk inserts in chunks of CHUNK; memory bounded by a chunk)."""
    from django.db import connection

    started = time.perf_counter()
    _generate(size)
    with connection.cursor() as cursor:
        # As autovacuum would have on a live project of this size: statistics, and the visibility map an
        # index-only count (an annotator's own work by status) needs to skip the rows themselves.
        cursor.execute("VACUUM ANALYZE")
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_scale_meta (version text, size int)")
        cursor.execute("INSERT INTO bench_scale_meta VALUES (%s, %s)", [GENERATOR_VERSION, size])
    return {"seconds": round(time.perf_counter() - started, 1)}


# A project grows at a team's pace, not all at once: PER_DAY new instances a day, each moving a step every STEP,
# so the last 30 days hold the same activity at every size (a 100k project is older, not busier).
PER_DAY = 300
STEP = timedelta(hours=6)


def _born(i: int, size: int, now):
    return now - timedelta(days=(size - i) / PER_DAY + 3)


@contextmanager
def _given_timestamps():
    """Let the bulk inserts write the generated created_at/updated_at instead of now (auto_now_add/auto_now off)."""
    from annotate.review.models import Discussion, ReviewComment
    from curation.models import Instance, InstanceRevision, TransitionEvent

    fields = [Instance._meta.get_field("created_at"), Instance._meta.get_field("updated_at"),
              InstanceRevision._meta.get_field("created_at"), TransitionEvent._meta.get_field("created_at"),
              ReviewComment._meta.get_field("created_at"), Discussion._meta.get_field("opened_at")]  # fmt: skip
    saved = [(f.auto_now, f.auto_now_add) for f in fields]
    for f in fields:
        f.auto_now = f.auto_now_add = False
    try:
        yield
    finally:
        for f, (auto_now, auto_now_add) in zip(fields, saved, strict=True):
            f.auto_now, f.auto_now_add = auto_now, auto_now_add


def _generate(size: int) -> None:
    from django.db import transaction
    from django.utils import timezone

    from annotate.review.models import Discussion, ReviewComment
    from annotate.work.models import WorkTime
    from curation.models import Batch, Instance, InstanceRevision, TransitionEvent
    from curation.releases.services.cut import release_cut
    from curation.services.projects import project_create

    project = project_create(name="Scale", slug=SLUG, creator=None)
    people = _users()
    contexts = _papers(project, size)
    reasoning = list(project.reasoning_types.filter(parent__isnull=False).values_list("pk", flat=True))
    now = timezone.now()
    batches = Batch.objects.bulk_create(
        [
            Batch(project=project, name=f"Batch {b}", order=b, state="open", opened_at=now)
            for b in range(-(-size // BATCH_SIZE))
        ]
    )
    holders, claimers, verifiers = people["holders"], people["claimers"], people["verifiers"]
    annotators = holders + claimers
    expired_left = EXPIRED_LEASES
    stay_validated: list[int] = []
    RelevantTables = Instance.relevant_tables.through
    for start in range(0, size, CHUNK):
        rows, shapes = [], []
        with transaction.atomic(), _given_timestamps():
            for i in range(start, min(start + CHUNK, size)):
                status = STATUS_OF[(i * 37) % 100]  # spread statuses through the batches
                context_id, _, _ = contexts[i // ITEMS_PER_CONTEXT]
                author = annotators[i % len(annotators)] if status != "drafted" else None
                verifier = verifiers[i % len(verifiers)]
                reviewer = annotators[(i + 7) % len(annotators)]
                fields = _instance_fields(i)
                final = "validated" if status == "released" else status  # released by the cuts below
                instance = Instance(
                    project=project,
                    batch=batches[i // BATCH_SIZE],
                    context_id=context_id,
                    reasoning_type_id=reasoning[i % len(reasoning)],
                    status=final,
                    version=max(1, len(SHAPE_BY_STATUS[status][1]) - 1),
                    author=author,
                    round1_verifier=verifier if status in REVIEWED_ONCE else None,
                    round2_reviewer=reviewer if status in REVIEWED_TWICE else None,
                    draft={"drafter": "bench", "prompt": "p1"},
                    created_at=_born(i, size, now),
                    updated_at=_born(i, size, now) + STEP * len(SHAPE_BY_STATUS[status][1]),
                    **fields,
                )  # fmt: skip
                rows.append(instance)
                shapes.append(status)
            # A live lease for each holder, and EXPIRED_LEASES expired ones, in the first chunk.
            if start + CHUNK >= size:  # the newest chunk
                for holder in holders:
                    row = next(r for r in rows if r.status == "drafted")
                    row.status, row.author, row.lease_expires_at = "in_refinement", holder, now + timedelta(days=3650)
                    shapes[rows.index(row)] = "in_refinement"
                for _ in range(expired_left):
                    row = next(r for r in rows if r.status == "drafted")
                    row.status, row.author = "in_refinement", holders[_ % len(holders)]
                    row.lease_expires_at = now - timedelta(hours=1)
                    shapes[rows.index(row)] = "in_refinement"
                expired_left = 0
            Instance.objects.bulk_create(rows, batch_size=2000)
            RelevantTables.objects.bulk_create(
                [RelevantTables(instance_id=r.pk, table_id=contexts[(start + k) // ITEMS_PER_CONTEXT][1][0])
                 for k, r in enumerate(rows) if r.author_id]
            , batch_size=5000)  # fmt: skip
            revisions, events, times, comments, discussions = [], [], [], [], []
            for k, (row, status) in enumerate(zip(rows, shapes, strict=True)):
                count, path = SHAPE_BY_STATUS[status]
                snapshot = {**_instance_fields(start + k), "reasoning_type_id": row.reasoning_type_id}
                for n in range(count):
                    revisions.append(
                        InstanceRevision(instance_id=row.pk, number=n + 1, author_id=row.author_id if n else None,
                                         created_at=row.created_at + STEP * n * len(path) / count,
                                         kind="draft" if n == 0 else ("submit" if n == count - 1 else "autosave"),
                                         fields=snapshot)
                    )  # fmt: skip
                previous = ""
                for v, target in enumerate(path):
                    actor = (
                        None
                        if v == 0
                        else (row.author_id if target in ("in_refinement", "submitted", "drafted") else None)
                    )
                    if target in ("round2_review", "changes_requested"):
                        actor = verifiers[k % len(verifiers)].pk
                    if target in ("validated", "in_discussion"):
                        actor = row.round2_reviewer_id
                    events.append(TransitionEvent(instance_id=row.pk, actor_id=actor, from_status=previous,
                                                  created_at=row.created_at + STEP * v,
                                                  to_status=target, version=max(1, v)))  # fmt: skip
                    previous = target
                if row.author_id:
                    times.append(WorkTime(user_id=row.author_id, instance_id=row.pk, activity="refine",
                                          active_seconds=120 + (k % 300)))  # fmt: skip
                if row.round1_verifier_id:
                    times.append(WorkTime(user_id=row.round1_verifier_id, instance_id=row.pk, activity="review1",
                                          active_seconds=60 + (k % 100)))  # fmt: skip
                if status == "changes_requested":
                    comments.append(ReviewComment(instance_id=row.pk, author_id=verifiers[k % len(verifiers)].pk,
                                                  created_at=row.updated_at,
                                                  round=1, field="answer", text="Check the unit.",
                                                  instance_version=row.version))  # fmt: skip
                if status == "in_discussion":
                    discussions.append(Discussion(instance_id=row.pk, opened_by_id=row.round2_reviewer_id,
                                                  opened_at=row.updated_at,
                                                  verifier_id=row.round1_verifier_id))  # fmt: skip
                if status == "validated":
                    stay_validated.append(row.pk)
            InstanceRevision.objects.bulk_create(revisions, batch_size=5000)
            TransitionEvent.objects.bulk_create(events, batch_size=5000)
            WorkTime.objects.bulk_create(times, batch_size=5000)
            ReviewComment.objects.bulk_create(comments, batch_size=5000)
            Discussion.objects.bulk_create(discussions, batch_size=5000)
    # Those that stay validated wait as round2_review while the 5 releases take the rest, a fifth of the batches each.
    Instance.objects.filter(pk__in=stay_validated).update(status="round2_review")
    batch_ids = [b.pk for b in batches]
    manager = people["managers"][0]
    fifth = max(1, len(batch_ids) // 5)
    for r in range(5):
        chosen = batch_ids[r * fifth : (r + 1) * fifth] if r < 4 else batch_ids[4 * fifth :]
        if chosen:
            release_cut(project=project, actor=manager, name=f"release-{r + 1}", batch_ids=chosen)
    Instance.objects.filter(pk__in=stay_validated).update(status="validated")
    _scoring(project, now)


SHAPE_BY_STATUS = {status: (revisions, path) for status, _, revisions, path in SHAPE}
SHAPE_BY_STATUS["in_refinement"] = (5, ["drafted", "in_refinement"])


def _scoring(project, now) -> None:
    """20 runs (4 per release, one running with stalled chunks on the last) with a prediction per release item."""
    from curation.releases.models import Release, ReleaseItem
    from scoring.runs.models import Prediction, RunChunk, ScoringRun

    methods = ("direct", "cot", "pot", "car")
    for r, release in enumerate(Release.objects.filter(project=project).order_by("id")):
        for m, method in enumerate(methods):
            running = r == 4 and m == 3
            run = ScoringRun.objects.create(
                project=project, release=release, label=f"model-{m}", method=method, setting="short",
                config_hash=f"{r}-{m}", items_total=release.item_count,
                status="running" if running else "completed", started_at=now, finished_at=None if running else now,
            )  # fmt: skip
            items = (
                ReleaseItem.objects.filter(release=release).order_by("position").values_list("pk", "position", "uid")
            )
            batch = []
            for pk, position, uid in items.iterator(chunk_size=CHUNK):
                correct = (position + m) % 3 != 0
                batch.append(
                    Prediction(run=run, item_id=pk, position=position, uid=uid, status="scored", context="short",
                               raw_output=f"Answer: {80 + position % 8}.0", answer=[f"{80 + position % 8}.0"],
                               metrics={"em": float(correct), "f1": 1.0 if correct else 0.4}, is_correct=correct,
                               tokens_in=900, tokens_out=40, latency_s=0.8)
                )  # fmt: skip
                if len(batch) == CHUNK:
                    Prediction.objects.bulk_create(batch)
                    batch = []
            Prediction.objects.bulk_create(batch)
            chunks = [
                RunChunk(run=run, index=c, first_position=c * 8, last_position=c * 8 + 7,
                         status="running" if running and c < STALLED_CHUNKS else "done",
                         heartbeat_at=now - timedelta(hours=2) if running else None)
                for c in range(-(-release.item_count // 8))
            ]  # fmt: skip
            RunChunk.objects.bulk_create(chunks, batch_size=5000)
            if not running:
                from scoring.runs.progress import run_results

                ScoringRun.objects.filter(pk=run.pk).update(results=run_results(run), results_computed_at=now)


# --- measurement ------------------------------------------------------------------------------------------------


def _ids(size: int) -> dict:
    """The ids the measured requests name (picked the same way at every size)."""
    from django.contrib.auth import get_user_model

    from curation.models import Instance, Paper
    from curation.releases.models import Release
    from scoring.runs.models import ScoringRun

    User = get_user_model()
    project_instances = Instance.objects.filter(project__slug=SLUG)
    holder = User.objects.get(username="holders-0")
    return {
        "holder": holder,
        "claimer": User.objects.get(username="claimers-0"),
        "verifier": User.objects.get(username="verifiers-0"),
        "reviewer2": User.objects.get(username="claimers-5"),
        "manager": User.objects.get(username="managers-0"),
        "held": project_instances.filter(author=holder, status="in_refinement", lease_expires_at__gt=_now()).first().pk,
        "round1": project_instances.filter(status="round1_review").order_by("id").first().pk,
        "round2": project_instances.filter(status="round2_review").exclude(author__username="claimers-5").first().pk,
        "paper": Paper.objects.filter(project__slug=SLUG).order_by("id").first().pk,
        "release": Release.objects.filter(project__slug=SLUG).order_by("-item_count", "id").first().pk,
        "run": ScoringRun.objects.filter(project__slug=SLUG, status="completed").order_by("id").first().pk,
    }


def _now():
    from django.utils import timezone

    return timezone.now()


def requests_to_measure(ids: dict) -> list[tuple[str, str, str, str]]:
    """(name, who, method, url) of every measured request."""
    p = f"/p/{SLUG}"
    return [
        ("queue_next_page", "claimer", "post", f"{p}/work/next/"),
        ("queue_next_api", "claimer", "post", f"/api/projects/{SLUG}/queue/next/"),
        ("workspace_page", "holder", "get", f"{p}/work/{ids['held']}/"),
        ("workspace_api", "holder", "get", f"/api/instances/{ids['held']}/workspace/"),
        ("work_home", "holder", "get", f"{p}/work/"),
        ("review_next_page", "verifier", "post", f"{p}/review/next/"),
        ("review_next_api", "verifier", "post", f"/api/projects/{SLUG}/review/next/"),
        ("review_home", "verifier", "get", f"{p}/review/"),
        ("review_page", "verifier", "get", f"{p}/review/{ids['round1']}/"),
        ("round2_next_page", "reviewer2", "post", f"{p}/round2/next/"),
        ("round2_next_api", "reviewer2", "post", f"/api/projects/{SLUG}/round2/next/"),
        ("project_page", "manager", "get", f"{p}/"),
        ("dashboard", "manager", "get", f"{p}/dashboard/"),
        ("dashboard_api", "manager", "get", f"/api/projects/{SLUG}/dashboard/"),
        ("pay_report_csv", "manager", "get", f"{p}/dashboard/pay.csv"),
        ("instance_browser", "manager", "get", f"{p}/instances/"),
        ("instance_browser_filtered", "manager", "get", f"{p}/instances/?status=round1_review&q=SST-2"),
        ("batches_page", "manager", "get", f"{p}/batches/"),
        ("papers_page", "manager", "get", f"{p}/papers/"),
        ("paper_page", "manager", "get", f"{p}/papers/{ids['paper']}/"),
        ("releases_page", "manager", "get", f"{p}/releases/"),
        ("release_page", "manager", "get", f"{p}/releases/{ids['release']}/"),
        ("release_statistics_api", "manager", "get", f"/api/releases/{ids['release']}/statistics/"),
        ("scoring_run_page", "manager", "get", f"{p}/scoring/runs/{ids['run']}/"),
        ("comparison_page", "manager", "get", f"{p}/releases/{ids['release']}/compare/"),
        ("comparison_api", "manager", "get", f"/api/releases/{ids['release']}/scoring-comparison/"),
        ("api_instances_annotator", "holder", "get", f"/api/projects/{SLUG}/instances/"),
        ("api_instances_manager", "manager", "get", f"/api/projects/{SLUG}/instances/"),
        ("api_instances_all_manager", "manager", "get", "/api/instances/"),
        ("api_papers_manager", "manager", "get", f"/api/projects/{SLUG}/papers/"),
        ("api_contexts_manager", "manager", "get", f"/api/projects/{SLUG}/contexts/"),
        ("api_releases", "manager", "get", f"/api/projects/{SLUG}/releases/"),
        ("api_release_items", "manager", "get", f"/api/releases/{ids['release']}/items/"),
        ("api_scoring_runs", "manager", "get", f"/api/projects/{SLUG}/scoring-runs/"),
        ("api_predictions", "manager", "get", f"/api/scoring-runs/{ids['run']}/predictions/"),
        ("api_review_queue", "verifier", "get", f"/api/projects/{SLUG}/review/queue/"),
        ("api_round2_queue", "reviewer2", "get", f"/api/projects/{SLUG}/round2/queue/"),
        ("api_queue", "claimer", "get", f"/api/projects/{SLUG}/queue/"),
    ]


class RequestSession:
    """The measured requests of one size, in that size's process: each asked once at a time, rolled back."""

    def __init__(self) -> None:
        from django.test import Client

        ids = _ids(0)
        self.requests = {name: (who, method, url) for name, who, method, url in requests_to_measure(ids)}
        self.clients = {}
        for who in ("holder", "claimer", "verifier", "reviewer2", "manager"):
            self.clients[who] = Client(raise_request_exception=False)
            self.clients[who].force_login(ids[who])

    def once(self, name: str) -> dict:
        """One repetition of request `name`: its status, server milliseconds and every statement it sent."""
        from django.db import connection, transaction

        who, method, url = self.requests[name]
        sent = [0]

        def counted(execute, sql, params, many, context):
            sent[0] += 1  # every statement (not the query log, which stops at 9,000)
            return execute(sql, params, many, context)

        accept = "application/json" if url.startswith("/api/") else "text/html"
        with transaction.atomic(), connection.execute_wrapper(counted):
            started = time.perf_counter()
            response = getattr(self.clients[who], method)(url, HTTP_ACCEPT=accept)
            if hasattr(response, "streaming_content"):
                b"".join(response.streaming_content)
            elapsed = (time.perf_counter() - started) * 1000
            transaction.set_rollback(True)
        # The request's own transactions count as a savepoint pair.
        return {"status": response.status_code, "ms": elapsed, "queries": sent[0]}


def side_by_side(
    names: list[str], at: dict[int, Callable[[str], dict]], rounds: Callable[[str], int], warm_up: bool
) -> dict[int, dict[str, list[dict]]]:
    """Each of `names` at every size, side by side in time: (a warm-up at each size, then) `rounds(name)` rounds of
    one sample at each size, the sizes' order reversed every other round, so a busy moment of the machine weighs on
    both sizes alike. The samples by size and name, in the order taken."""
    sizes = list(at)
    samples: dict[int, dict[str, list[dict]]] = {size: {} for size in sizes}
    for name in names:
        if warm_up:  # template loading, connection and caches
            for size in sizes:
                at[size](name)
        for round_ in range(rounds(name)):
            for size in sizes if round_ % 2 == 0 else sizes[::-1]:
                samples[size].setdefault(name, []).append(at[size](name))
    return samples


def request_figures(samples: list[dict]) -> dict:
    """Median and p95 (nearest rank) milliseconds of a request's samples, its status and query count."""
    timings = sorted(sample["ms"] for sample in samples)
    return {
        "status": samples[-1]["status"],
        "median_ms": round(statistics.median(timings), 1),
        "p95_ms": round(timings[math.ceil(0.95 * len(timings)) - 1], 1),
        "queries": samples[-1]["queries"],
    }


def job_figures(samples: list[dict]) -> dict:
    """A job's run of median seconds (an error if any run failed), with the number of runs when more than one."""
    errors = [sample for sample in samples if "error" in sample]
    if errors:
        return errors[0]
    runs = sorted(samples, key=lambda run: run["seconds"])
    return {**runs[len(runs) // 2], **({"runs": len(runs)} if len(runs) > 1 else {})}


def paired_ratios(small: list[dict], big: list[dict]) -> float:
    """The median over rounds of big ÷ small milliseconds, each pair taken side by side."""
    return round(statistics.median(b["ms"] / max(s["ms"], 0.1) for s, b in zip(small, big, strict=True)), 2)


JOBS = ["release_cut", "import_tatqa_dev", "leases_reap", "runs_reap"]
JOB_RUNS = 3
# An export of the smaller release takes 30-70 ms, so a moment of the machine's load is a large share of it: the
# exports run this many times each (3 runs gave one export ×6.0 in one run and ×12.0 in the next).
EXPORT_RUNS = 7


# The cut: its ratio at 10,000 ÷ 1,000 items read 10.14, 10.28, 10.33 and 11.35 in four runs on one quiet machine
# (its 100k run alone 19.1-20.6 s), so three runs leave a tenth of the target to one busy moment.
CUT_RUNS = 5


def job_runs(name: str) -> int:
    if name.startswith("export:"):
        return EXPORT_RUNS
    return CUT_RUNS if name == "release_cut" else JOB_RUNS


def job(name: str, argument: str) -> dict:
    """Run one bulk job in this (fresh) process; seconds and peak memory above the baseline. Writes roll back.

    With DEBUG off, as the workers run (scripts/start and production): DEBUG keeps the SQL of every statement sent,
    a bulk insert's rows included, so the peak would measure that log rather than the job."""
    from django.conf import settings
    from django.db import transaction

    settings.DEBUG = False

    from curation.models import Batch, Project

    project = Project.objects.get(slug=SLUG)
    extra: dict = {}
    if name.startswith("export:"):
        import curation.exports.card
        import curation.exports.writers  # noqa: F401  (pyarrow and friends load before the baseline)
        from curation.exports import write_export_zip
        from curation.releases.models import Release

        release = Release.objects.select_related("project").get(pk=int(argument))
        out = Path(tempfile.mkdtemp(prefix="scale-export-")) / "out.zip"
        baseline = _status_mb("VmRSS")
        started = time.perf_counter()
        _, size = write_export_zip(release, name.split(":", 1)[1], out)
        seconds = time.perf_counter() - started
        out.unlink()
        extra = {"items": release.item_count, "zip_bytes": size}
    elif name == "import_tatqa_dev":
        from curation.datasets.services import dataset_import
        from tests.scoring.metrics.shared_data import shared_data_dir

        path = shared_data_dir() / "tatqa" / "tatqa_dataset_dev.json"
        content = path.read_bytes()
        baseline = _status_mb("VmRSS")
        started = time.perf_counter()
        with transaction.atomic():
            result = dataset_import(project=project, actor=None, format="tatqa", source_name=path.name, content=content,
                                    as_release="tatqa-dev")  # fmt: skip
            extra = {"counts": result.counts}
            transaction.set_rollback(True)
        seconds = time.perf_counter() - started
    else:
        from annotate.work.leases import leases_reap
        from curation.releases.services.cut import release_cut
        from scoring.runs.chunks import SCORING_CHUNKS

        baseline = _status_mb("VmRSS")
        started = time.perf_counter()
        with transaction.atomic():
            if name == "release_cut":
                batch_ids = list(Batch.objects.filter(project=project).values_list("pk", flat=True))
                release = release_cut(project=project, actor=None, name="measured-cut", batch_ids=batch_ids)
                extra = {"items": release.item_count}
            elif name == "leases_reap":
                extra = {"returned": leases_reap()}
            elif name == "runs_reap":
                extra = {"reaped": SCORING_CHUNKS.reap()}
            transaction.set_rollback(True)
        seconds = time.perf_counter() - started
    return job_result(seconds=seconds, peak_mb=_status_mb("VmHWM") - baseline, **extra)


def job_result(*, seconds: float, peak_mb: float, **extra: object) -> dict:
    """A job's figures, its seconds to the tenth of a millisecond: the small exports take 30–70 ms, and seconds
    rounded to 10 ms moved their growth ratio by ±15% (0.6 s ÷ 0.05 s read ×12.0)."""
    return {"seconds": round(seconds, 4), "peak_mb": round(peak_mb, 1), **extra}


def job_names() -> list[str]:
    from curation.exports import EXPORT_FORMATS

    return [*JOBS, *(f"export:{fmt}" for fmt in EXPORT_FORMATS)]


def _database_ready(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url) as connection:
            row = connection.execute("SELECT version FROM bench_scale_meta").fetchone()
            return row is not None and row[0] == GENERATOR_VERSION
    except psycopg.Error:
        return False


def database_url_of(base_url: str, size: int) -> str:
    return base_url.rsplit("/", 1)[0] + f"/{base_url.rsplit('/', 1)[1]}_scale_{size}"


def cache_url_of(redis_url: str, index: int) -> str:
    """The Redis database of the `index`-th size: REDIS_URL's own (n, default 0) + index. The projects of two sizes
    have the same slug and primary keys, so nothing but their latest instance change (in the figures cache's keys)
    would keep one size's cached figures from the other."""
    if not redis_url:
        return ""  # each child then has its own in-process cache
    head, _, tail = redis_url.rstrip("/").rpartition("/")
    if head.endswith(":") or not tail.isdigit():  # redis://host:6379 (no database named)
        return f"{redis_url.rstrip('/')}/{index}"
    return f"{head}/{int(tail) + index}"


def serve(size: int, base_url: str, keep: bool, template: str | None = None) -> None:
    """The long-lived process of one size: generate its database (unless kept), empty its cache, report its shape,
    then answer the parent's commands on stdin, one JSON line each way: {"request": name} → one sample, {} → exit."""
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever else prints goes to stderr, never into the replies
    url = database_url_of(base_url, size)
    ready: dict = {"database": url.rsplit("/", 1)[1]}
    if keep and _database_ready(url):
        setup_django(url)
        ready["generated"] = "kept"
        # A kept database carries what the last run's jobs left: a cut rolled back is 10,000 dead instance rows and
        # their pages out of the visibility map, which autovacuum clears on a live server (and which is off on this
        # machine's PostgreSQL). Without this, a run on a kept database measured the runs before it: an annotator's
        # index-only count of their work read 150 → 1,303 pages at 10k → 100k, and 18 → 51 after a vacuum.
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    else:
        setup_django(fresh_postgres_database(base_url, ready["database"], template=template))
        ready["generated"] = generate(size)
    from django.core.cache import cache
    from django.db.models import Count

    from curation.models import Instance, InstanceRevision, TransitionEvent
    from curation.releases.models import Release
    from scoring.runs.models import Prediction

    cache.clear()  # its own Redis database: what a run with other sizes left there is not this project's
    instances = Instance.objects.filter(project__slug=SLUG)
    ready["shape"] = {
        "instances": instances.count(),
        "revisions": InstanceRevision.objects.count(),
        "events": TransitionEvent.objects.count(),
        "predictions": Prediction.objects.count(),
        "statuses": dict(instances.order_by().values_list("status").annotate(n=Count("id"))),
    }
    ready["release"] = Release.objects.filter(project__slug=SLUG).order_by("-item_count", "id").first().pk
    session = RequestSession()
    ready["requests"], ready["jobs"] = list(session.requests), job_names()
    replies.write(json.dumps(ready) + "\n")
    for line in sys.stdin:
        command = json.loads(line)
        if "request" not in command:
            break
        replies.write(json.dumps(session.once(command["request"])) + "\n")


class SizeProcess:
    """The parent's handle on one size's long-lived process (`serve`)."""

    def __init__(self, size: int, base_url: str, cache_url: str, keep: bool, template: str | None = None) -> None:
        self.size, self.cache_url = size, cache_url
        self.database_url = database_url_of(base_url, size)
        command = [sys.executable, __file__, "--serve", str(size), "--database-url", base_url,
                   *(["--keep"] if keep else []), *(["--template", template] if template else [])]  # fmt: skip
        env = {**os.environ, "REDIS_URL": cache_url}
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                        env=env)  # fmt: skip
        self.ready = self._reply()

    def _reply(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"size {self.size} failed (its stderr is above)")
        return json.loads(line)

    def request(self, name: str) -> dict:
        self.process.stdin.write(json.dumps({"request": name}) + "\n")
        self.process.stdin.flush()
        return self._reply()

    def job(self, name: str) -> dict:
        """One run of bulk job `name` in a fresh child (for its peak memory) on this size's database and cache."""
        command = [sys.executable, __file__, "--job", name, str(self.ready["release"]),
                   "--database-url", self.database_url]  # fmt: skip
        env = {**os.environ, "DATABASE_URL": self.database_url, "REDIS_URL": self.cache_url}
        completed = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
        if completed.returncode:
            return {"error": (completed.stderr.strip().splitlines() or ["no output"])[-1][:300]}
        return json.loads(completed.stdout.strip().splitlines()[-1])

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("{}\n")
            self.process.stdin.close()
            self.process.wait(timeout=60)


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def measure_pages(processes: list[SizeProcess], repeat: int, names: set[str] | None) -> dict[int, dict[str, list]]:
    """Every request's samples, each size's repetitions interleaved with the other's (`side_by_side`)."""
    measured = [name for name in processes[0].ready["requests"] if not names or name in names]
    at = {process.size: process.request for process in processes}
    return side_by_side(measured, at, rounds=lambda name: repeat, warm_up=True)


def measure_jobs(processes: list[SizeProcess], names: set[str] | None) -> dict[int, dict]:
    """Every bulk job, each run in a fresh child, the sizes alternating run by run. One busy moment of the machine
    decides a single run (an export of the smaller release takes a fraction of a second; the small cut's 3 s moved by
    ±10% from run to run, its ratio with it): each job runs `job_runs` times (the exports more) and the run of median
    seconds is reported."""
    chosen = [name for name in processes[0].ready["jobs"] if not names or name in names]
    at = {process.size: process.job for process in processes}
    samples = side_by_side(chosen, at, rounds=job_runs, warm_up=False)
    return {size: {name: job_figures(runs) for name, runs in by_name.items()} for size, by_name in samples.items()}


# --- the hot paths ------------------------------------------------------------------------------------------------


def _json_printed(stdout: str) -> dict:
    """The last JSON object a benchmark printed (one line or indented: it starts at a line's first column)."""
    lines = stdout.splitlines()
    for start in range(len(lines) - 1, -1, -1):
        if lines[start].startswith("{"):
            try:
                return json.loads("\n".join(lines[start:]))
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON object in its output")


def hot_commands(database_url: str, redis_url: str, ports: list[int], start_tree: str | None) -> dict[str, list[str]]:
    """The hot-path benchmarks, each with its own databases (named after `database_url`'s) and ports."""
    claim_port, web_port, model_port = ports
    benchmarks = ROOT / "benchmarks"
    return {
        "claim": [sys.executable, str(benchmarks / "queue_claim.py"), "--clients", "64", "--database-url",
                  database_url, "--port", str(claim_port)],
        "runs": [sys.executable, str(benchmarks / "run_throughput.py"), "--kind", "both", "--database-url",
                 database_url, *(["--redis-url", redis_url] if redis_url else [])],
        "start": [sys.executable, str(benchmarks / "start_time.py"), "--port", str(web_port), "--model-port",
                  str(model_port), *(["--tree", start_tree] if start_tree else [])],
    }  # fmt: skip


def measure_hot(commands: dict[str, list[str]]) -> dict:
    """Run each hot-path benchmark in turn as it runs alone; its JSON, or why there is none."""
    figures = {}
    for name, command in commands.items():
        started = time.perf_counter()
        completed = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        seconds = round(time.perf_counter() - started, 1)
        try:
            figures[name] = {**_json_printed(completed.stdout), "wall_s": seconds}
        except ValueError:
            figures[name] = {"error": (completed.stderr.strip().splitlines() or ["no output"])[-1][:300],
                             "returncode": completed.returncode, "wall_s": seconds}  # fmt: skip
    return figures


# --- ratios and targets -------------------------------------------------------------------------------------------

REQUEST_RATIO_MAX = 1.3  # per-request time and queries at 10× the data
JOB_SECONDS_RATIO_MAX = 11.0
JOB_MEMORY_RATIO_MAX = 1.5
CLAIM_THROUGHPUT_MIN = 0.95  # claim requests/s ÷ the trivial endpoint's, same server, same run
CLAIM_P95_RATIO_MAX = 1.2
RUN_THROUGHPUT_MIN = 0.95  # achieved ÷ C / L
SECOND_START_MAX_S = 30.0


def ratios(small: dict, big: dict, paired: dict[str, float] | None = None) -> dict:
    out: dict = {"requests": {}, "jobs": {}, "misses": []}
    for name, figure in big.get("requests", {}).items():
        base = small["requests"].get(name)
        if not base:
            continue
        entry = {
            "median_ms": round(figure["median_ms"] / max(base["median_ms"], 0.1), 2),
            "p95_ms": round(figure["p95_ms"] / max(base["p95_ms"], 0.1), 2),
            "queries": round(figure["queries"] / max(base["queries"], 1), 2),
            **({"paired_median": paired[name]} if paired and name in paired else {}),
        }
        out["requests"][name] = entry
        if entry["median_ms"] > REQUEST_RATIO_MAX or entry["queries"] > REQUEST_RATIO_MAX:
            out["misses"].append(name)
    for name, figure in big.get("jobs", {}).items():
        base = small.get("jobs", {}).get(name)
        if not base or "error" in figure or "error" in base:
            continue
        entry = {
            "seconds": round(figure["seconds"] / max(base["seconds"], 0.01), 2),
            "peak_mb": round(figure["peak_mb"] / max(base["peak_mb"], 1.0), 2),
        }
        out["jobs"][name] = entry
        if entry["seconds"] > JOB_SECONDS_RATIO_MAX or entry["peak_mb"] > JOB_MEMORY_RATIO_MAX:
            out["misses"].append(name)
    return out


def _target(value, bound: float, at_most: bool = True) -> dict:
    held = value is not None and (value <= bound if at_most else value >= bound)
    return {"value": value, "target": f"{'<=' if at_most else '>='} {bound:g}", "held": held}


def targets(report: dict) -> dict:
    """Every figure the issue names that this run measured, beside its target and whether it held (a figure that
    failed to come, e.g. a job that errored or a benchmark without output, did not hold)."""
    out: dict = {}
    growth = report.get("ratio_big_over_small", {})
    for name, entry in growth.get("requests", {}).items():
        out[f"requests.{name}.median_ms"] = _target(entry["median_ms"], REQUEST_RATIO_MAX)
        out[f"requests.{name}.queries"] = _target(entry["queries"], REQUEST_RATIO_MAX)
    sizes = report.get("sizes", {})
    if growth and sizes:
        big = sizes[max(sizes, key=int)]
        for name in big.get("jobs", {}):
            entry = growth.get("jobs", {}).get(name, {})
            out[f"jobs.{name}.seconds"] = _target(entry.get("seconds"), JOB_SECONDS_RATIO_MAX)
            out[f"jobs.{name}.peak_mb"] = _target(entry.get("peak_mb"), JOB_MEMORY_RATIO_MAX)
    hot = report.get("hot_paths")
    if hot is not None:
        claim, runs, start = hot.get("claim", {}), hot.get("runs", {}), hot.get("start", {})
        out["claim.throughput_ratio"] = _target(claim.get("throughput_ratio"), CLAIM_THROUGHPUT_MIN, at_most=False)
        out["claim.p95_ratio"] = _target(claim.get("p95_ratio"), CLAIM_P95_RATIO_MAX)
        out["claim.double_assignments"] = _target(claim.get("double_assignments"), 0)
        for kind in ("scoring", "drafting"):
            out[f"runs.{kind}.ratio"] = _target(runs.get(kind, {}).get("ratio"), RUN_THROUGHPUT_MIN, at_most=False)
        second = start.get("second_start", {}).get("first_page_s")
        out["start.second_start_s"] = _target(second, SECOND_START_MAX_S)
    return out


# --- the run ------------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--keep", action="store_true", help="reuse a database generated earlier for a size")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--only", choices=("all", "pages", "jobs", "hot"), default="all")
    parser.add_argument("--names", nargs="*", help="measure only these requests")
    parser.add_argument("--jobs", nargs="*", help="run only these bulk jobs (e.g. leases_reap export:csv)")
    parser.add_argument(
        "--database-url", default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/h7")
    )
    parser.add_argument(
        "--ports", type=int, nargs=3, default=[8221, 8231, 8232], metavar=("CLAIM", "WEB", "MODEL"),
        help="the hot paths' ports: the claim benchmark's server, the start's web and model servers",
    )  # fmt: skip
    parser.add_argument(
        "--start-tree",
        help="time the starts of this installed tree (start_time.py --tree) instead of a fresh copy of HEAD's",
    )
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--template", help="a migrated database to copy a size's database from (the tests')")
    parser.add_argument("--job", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.database_url.startswith("postgres"):
        raise SystemExit("scale.py measures PostgreSQL: set DATABASE_URL=postgres://…")
    if args.job:
        setup_django(args.database_url)
        print(json.dumps(job(*args.job)))
        return
    if args.serve:
        serve(args.serve, args.database_url, args.keep, args.template)
        return
    redis_url = os.environ.get("REDIS_URL", "")
    sizes = sorted(args.sizes)
    report: dict = {"server_time": "Django test client in process (time inside the request)", "loadavg": {},
                    "sizes": {}}  # fmt: skip
    processes: list[SizeProcess] = []
    try:
        if args.only != "hot":
            # Every size's database is generated (or found kept) before anything is measured.
            for index, size in enumerate(sizes):
                processes.append(SizeProcess(size, args.database_url, cache_url_of(redis_url, index), args.keep))
                ready = processes[-1].ready
                report["sizes"][str(size)] = {key: ready[key] for key in ("database", "generated", "shape")}
                for asked, known in ((args.names, ready["requests"]), (args.jobs, ready["jobs"])):
                    if unknown := sorted(set(asked or ()) - set(known)):
                        raise SystemExit(f"no such request or job: {', '.join(unknown)} (known: {', '.join(known)})")
        paired: dict[str, float] = {}
        if args.only in ("all", "pages"):
            report["loadavg"]["pages"] = {"start": _loadavg()}
            samples = measure_pages(processes, args.repeat, set(args.names) if args.names else None)
            report["loadavg"]["pages"]["end"] = _loadavg()
            for size, by_name in samples.items():
                report["sizes"][str(size)]["requests"] = {name: request_figures(s) for name, s in by_name.items()}
            if len(sizes) >= 2:
                small, big = samples[sizes[0]], samples[sizes[-1]]
                paired = {name: paired_ratios(small[name], big[name]) for name in big}
        for process in processes:  # the jobs run in fresh children; the hot paths want the cores
            process.close()
        if args.only in ("all", "jobs"):
            report["loadavg"]["jobs"] = {"start": _loadavg()}
            figures = measure_jobs(processes, set(args.jobs) if args.jobs else None)
            report["loadavg"]["jobs"]["end"] = _loadavg()
            for size, by_name in figures.items():
                report["sizes"][str(size)]["jobs"] = by_name
        if args.only != "hot":
            (ROOT / "var").mkdir(exist_ok=True)  # each size's figures, as the report below has them
            for size in sizes:
                (ROOT / "var" / f"scale-{size}.json").write_text(json.dumps(report["sizes"][str(size)], indent=2))
            if len(sizes) >= 2:
                small, big = report["sizes"][str(sizes[0])], report["sizes"][str(sizes[-1])]
                report["ratio_big_over_small"] = ratios(small, big, paired)
        if args.only in ("all", "hot"):
            report["loadavg"]["hot"] = {"start": _loadavg()}
            report["hot_paths"] = measure_hot(hot_commands(args.database_url, redis_url, args.ports, args.start_tree))
            report["loadavg"]["hot"]["end"] = _loadavg()
    finally:
        for process in processes:
            if process.process.poll() is None:
                process.process.kill()
    report["targets"] = targets(report)
    report["not_held"] = [name for name, entry in report["targets"].items() if not entry["held"]]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
