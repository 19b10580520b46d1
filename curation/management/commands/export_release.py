"""`export_release NAME --project P --format F --out PATH`: write a release export zip (data, card, checksums)."""

from __future__ import annotations

from pathlib import Path

from tqdm import tqdm

from curation.exports import EXPORT_FORMATS, write_export_zip
from curation.management.base import ReportCommand
from curation.management.commands.release_stats import release_by_name


class Command(ReportCommand):
    help = "Export a release as a zip with the data in one format, a dataset card and a checksum file."

    def add_options(self, parser) -> None:
        parser.add_argument("name")
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--format", required=True, choices=sorted(EXPORT_FORMATS))
        parser.add_argument("--out", required=True, type=Path, help="the zip to write")
        parser.add_argument("--release-version", dest="release_version", type=int, default=None)
        parser.add_argument("--no-progress", action="store_true")

    def report(self, options):
        release = release_by_name(project=options["project"], name=options["name"], version=options["release_version"])
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        quiet = options["no_progress"] or options["json"]
        with tqdm(total=release.item_count, desc=f"export {release.label}", unit="item", disable=quiet) as bar:
            digest, size = write_export_zip(release, options["format"], out, progress=bar.update)
        return {
            "release": release.label,
            "format": options["format"],
            "path": str(out),
            "sha256": digest,
            "bytes": size,
            "items": release.item_count,
            "content_hash": release.content_hash,
        }

    def lines(self, result, options):
        yield f"wrote {result['path']} ({result['bytes']} bytes, sha256 {result['sha256'][:12]}…)"
