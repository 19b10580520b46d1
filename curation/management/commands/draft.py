"""Draft a batch with an LLM endpoint or the template drafter: inline, or through the workers (optionally waiting)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import CommandError, CommandParser

from curation.drafting.endpoints import endpoint_preferred
from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.services import items as item_services
from curation.drafting.services import runs as run_services
from curation.endpoints.models import ModelEndpoint
from curation.management.base import ReportCommand


class Command(ReportCommand):
    takes_project = True
    takes_batch = True
    shows_progress = True
    help = "Draft questions for a batch: --kind llm (an endpoint) or template (answers computed by tool programs)."

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--kind", required=True, choices=DraftingRun.Kind.values)
        parser.add_argument(
            "--endpoint",
            default="",
            help="endpoint name (default: the first real one, else the local model)",
        )
        parser.add_argument("--max-tokens", type=int, default=None)
        parser.add_argument("--per-template", type=int, default=1)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--keep-unanswerable", action="store_true", help="keep unanswerable template questions")
        parser.add_argument("--redraft", action="store_true", help="also draft contexts drafted before")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--wait", action="store_true", help="queue for the workers and wait, with progress")
        mode.add_argument("--no-wait", action="store_true", help="queue for the workers and return at once")

    def report(self, options: dict[str, Any]) -> dict[str, Any]:
        endpoint = None
        if options["kind"] == "llm":
            usable = ModelEndpoint.objects.usable_in(self.project)
            endpoint = (
                usable.filter(name=options["endpoint"]).first() if options["endpoint"] else endpoint_preferred(usable)
            )
            if endpoint is None:
                names = ", ".join(usable.values_list("name", flat=True)) or "none"
                raise CommandError(f"no endpoint {options['endpoint'] or '(default)'!r}; known: {names}")
        params = {"max_tokens": options["max_tokens"]} if options["max_tokens"] else {}
        run = run_services.run_create(
            project=self.project, actor=None, kind=options["kind"], batch=self.batch, endpoint=endpoint,
            generation_params=params,
            options={
                "per_template": options["per_template"], "seed": options["seed"], "redraft": options["redraft"],
                "unanswerable": "keep" if options["keep_unanswerable"] else "skip",
            },
        )  # fmt: skip
        todo = run.items.exclude(status=DraftingItem.Status.SKIPPED).count()
        bar = self.progress_bar(
            options, total=todo, desc=f"draft run {run.pk}", unit="context", disable=options["no_wait"]
        )
        if options["wait"] or options["no_wait"]:
            run_services.run_start(run_id=run.pk, actor=None)
            while options["wait"]:
                run.refresh_from_db()
                done = run.items.filter(
                    status__in=(DraftingItem.Status.DRAFTED, DraftingItem.Status.FAILED, DraftingItem.Status.CANCELLED)
                ).count()
                bar.update(done - bar.n)
                if not run.is_active:
                    break
                time.sleep(0.5)
        else:
            item_services.run_process_inline(run_id=run.pk, on_item=lambda item: bar.update(1))
        bar.close()
        run.refresh_from_db()
        counts = run_services.run_counts(run)
        return {"run": run.pk, "kind": run.kind, "status": run.status, "error": run.error, "counts": counts}

    def lines(self, result: dict[str, Any], options: dict[str, Any]) -> Any:
        counts = result["counts"]
        yield (
            f"run {result['run']}: {result['status']}; {counts['drafted']} drafted, {counts['failed']} failed, "
            f"{counts['skipped']} skipped, {counts['instances']} drafts in the queue"
        )
        if result["error"]:
            yield self.style.ERROR(result["error"])

    def refusal(self, result: dict[str, Any]) -> str | None:
        if result["status"] == DraftingRun.Status.FAILED:
            return f"drafting run {result['run']} failed: {result['error']}"
        return None
