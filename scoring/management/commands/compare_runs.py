"""`compare_runs --release R --project P [--table T --format csv|tex] [--json]`: the comparison page's tables."""

from __future__ import annotations

from curation.management.base import ReportCommand
from scoring.runs import table_formats
from scoring.runs.comparison import TABLES
from scoring.runs.models import ScoringRun
from scoring.runs.selectors import release_comparison


class Command(ReportCommand):
    takes_project = True
    takes_release = True
    help = "Print a release's completed runs as the published tables: one as CSV or LaTeX, or all as JSON."

    json_help = "every table as JSON instead"
    json_indent = 2

    def add_options(self, parser) -> None:
        parser.add_argument("--table", choices=TABLES, default="table5")
        parser.add_argument("--format", choices=tuple(table_formats.FORMATS), default="csv")

    def report(self, options):
        # An operator's command sees every run of the release (the page and API scope them to the viewer).
        return release_comparison(ScoringRun.objects.filter(release=self.release))

    def lines(self, comparison, options):
        yield table_formats.table_render(comparison["tables"][options["table"]], options["format"])
