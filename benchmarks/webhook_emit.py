"""Print JSON with what webhooks add to the request that causes an event: a release cut of N validated instances
with no hook, and the same cut (another project, same size) with 3 hooks subscribed to `release.cut` whose
receiver takes 2 s to answer. Both cuts run inline, side by side in one run, as a page's request does; the
deliveries are only written and sent to the broker after the commit, so the receiver's 2 s never reach the cut.
Judged by `ratio` = seconds with hooks / seconds without (target: below 1.2, i.e. no wait on the receiver).

    .venv/bin/python benchmarks/webhook_emit.py [--size 200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

RECEIVER_DELAY_S = 2.0
HOOKS = 3


def slow_receiver() -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            time.sleep(RECEIVER_DELAY_S)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/hook"


def cut_seconds(size: int, *, name: str, hook_url: str | None) -> tuple[float, int]:
    from django.db import transaction
    from release_cut import generate

    from curation.releases.services.cut import release_cut
    from curation.webhooks.models import WebhookDelivery
    from curation.webhooks.services import webhook_create

    project, batch_id = generate(size)
    type(project).objects.filter(pk=project.pk).update(slug=f"{project.slug}-{name}")  # generate() reuses its slug
    project.refresh_from_db()
    if hook_url:
        from django.contrib.auth import get_user_model

        from curation.services.projects import membership_add

        manager = get_user_model().objects.create_user(username=f"bench-manager-{name}")
        membership_add(project=project, actor=None, username=manager.username, role="manager")
        for _ in range(HOOKS):
            webhook_create(project=project, actor=manager, url=hook_url, events=["release.cut"])
    started = time.perf_counter()
    with transaction.atomic():  # one request's transaction: the messages go after its commit
        release_cut(project=project, actor=None, name=name, batch_ids=[batch_id])
    seconds = time.perf_counter() - started
    return seconds, WebhookDelivery.objects.filter(webhook__project=project).count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200)
    args = parser.parse_args()
    from _django import setup_django

    os.environ.setdefault("TATCURATE_WEBHOOK_HOSTS", "127.0.0.1")  # the receiver is on this machine
    setup_django(os.environ.get("BENCH_DATABASE_URL"))
    from curation.jobs import job_task
    from curation.webhooks.services import TASK_NAME

    # A running web process has loaded its task modules once (Celery's autodiscovery, ~seconds): do it first.
    job_task(TASK_NAME)
    server, url = slow_receiver()
    try:
        without, _ = cut_seconds(args.size, name="plain", hook_url=None)
        with_hooks, deliveries = cut_seconds(args.size, name="hooked", hook_url=url)
    finally:
        server.shutdown()
    print(
        json.dumps(
            {
                "items": args.size,
                "hooks": HOOKS,
                "receiver_delay_s": RECEIVER_DELAY_S,
                "deliveries_written": deliveries,
                "cut_seconds_without_hooks": round(without, 3),
                "cut_seconds_with_hooks": round(with_hooks, 3),
                "ratio": round(with_hooks / without, 3),
                "target_ratio_below": 1.2,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
