"""`cut_release NAME --project P --batches "all" | "3-7, 12" [--include-withheld] [--json]`: the releases page's cut,
inline."""

from __future__ import annotations

from curation.management.base import ReportCommand
from curation.releases.services.cut import ALL_BATCHES, cut_batch_ids, release_cut

# The options passed to `release_cut` as they are.
CUT_OPTIONS = "description changelog license citation split_seed include_withheld".split()


class Command(ReportCommand):
    takes_project = True
    shows_progress = True
    help = "Cut a release (a new version of NAME) from the validated instances of the project's batches."

    def add_options(self, parser) -> None:
        parser.add_argument("name", help="the release's name, without a version (cuts are numbered v1, v2, …)")
        parser.add_argument(
            "--batches",
            default=ALL_BATCHES,
            help='"all" (every batch with validated instances; the default) or batch numbers and ranges: "3-7, 12"',
        )
        parser.add_argument("--description", default="")
        parser.add_argument("--changelog", default="")
        parser.add_argument("--license", default="")
        parser.add_argument("--citation", default="")
        parser.add_argument("--split-seed", type=int, default=None, help="train/dev/test by paper")
        parser.add_argument(
            "--include-withheld",
            action="store_true",
            help="also release what cuts withhold (the qualification exam's gold pool): its answers become public",
        )

    def report(self, options):
        batch_ids = cut_batch_ids(project=self.project, batch_ids=[], batches=options["batches"])
        with self.progress_bar(options, desc=f"cut {options['name']}", unit="item") as bar:
            release = release_cut(
                project=self.project,
                actor=None,
                name=options["name"],
                batch_ids=batch_ids,
                progress=bar.update,
                **{key: options[key] for key in CUT_OPTIONS},
            )
        return {
            "release": release.label,
            "id": release.pk,
            "items": release.item_count,
            "content_hash": release.content_hash,
            "batches": batch_ids,
            "notes": release.notes,
        }

    def lines(self, result, options):
        yield f"Release {result['release']} cut: {result['items']} instances frozen ({result['content_hash'][:12]})."
        yield from result["notes"]
