"""`export_release --release R --project P --format F --out PATH`: a release export zip (data, card, checksums)."""

from __future__ import annotations

from pathlib import Path

from curation.exports import EXPORT_FORMATS, write_export_zip
from curation.management.base import ReportCommand


class Command(ReportCommand):
    takes_project = True
    takes_release = True
    shows_progress = True
    help = "Export a release as a zip with the data in one format, a dataset card and a checksum file."

    def add_options(self, parser) -> None:
        parser.add_argument("--format", required=True, choices=sorted(EXPORT_FORMATS))
        parser.add_argument("--out", required=True, type=Path, help="the zip to write")

    def report(self, options):
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        with self.progress_bar(
            options, total=self.release.item_count, desc=f"export {self.release.label}", unit="item"
        ) as bar:
            digest, size = write_export_zip(self.release, options["format"], out, progress=bar.update)
        return {
            "release": self.release.label,
            "format": options["format"],
            "path": str(out),
            "sha256": digest,
            "bytes": size,
            "items": self.release.item_count,
            "content_hash": self.release.content_hash,
        }

    def lines(self, result, options):
        yield f"wrote {result['path']} ({result['bytes']} bytes, sha256 {result['sha256'][:12]}…)"
