"""`push_release --release R --project P --repo OWNER/NAME`: push a release's `hf` export to the Hugging Face Hub."""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError

from curation.exports import write_export_zip
from curation.management.base import ReportCommand


class Command(ReportCommand):
    takes_project = True
    takes_release = True
    help = (
        "Upload a release as a Hugging Face datasets folder (the `hf` export: Parquet per context setting and split, "
        "the dataset card with its configs, licence and attribution) to a dataset repository on the Hub, with the "
        "token in HF_TOKEN. --dry-run builds the folder and says what would be uploaded, with no network."
    )

    def add_options(self, parser) -> None:
        parser.add_argument("--repo", required=True, help="the dataset repository, OWNER/NAME")
        parser.add_argument("--private", action="store_true", help="create the repository private")
        parser.add_argument("--dry-run", action="store_true", help="build and list, upload nothing")

    def report(self, options):
        if options["repo"].count("/") != 1 or not all(options["repo"].split("/")):
            raise CommandError(f"--repo must be OWNER/NAME, not {options['repo']!r}")
        if not options["dry_run"] and not settings.HF_TOKEN:
            raise CommandError("No Hugging Face token: set HF_TOKEN (a write token), or use --dry-run.")
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "folder"
            write_export_zip(self.release, "hf", Path(tmp) / "hf.zip")
            with zipfile.ZipFile(Path(tmp) / "hf.zip") as bundle:
                bundle.extractall(folder)
            files = sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())
            result = {"release": self.release.label, "repo": options["repo"], "files": files, "uploaded": False}
            if not options["dry_run"]:
                from huggingface_hub import HfApi

                api = HfApi(token=settings.HF_TOKEN)
                api.create_repo(options["repo"], repo_type="dataset", private=options["private"], exist_ok=True)
                commit = api.upload_folder(
                    repo_id=options["repo"],
                    repo_type="dataset",
                    folder_path=str(folder),
                    commit_message=f"{self.release.label} ({self.release.content_hash[:12]})",
                )
                result.update(uploaded=True, commit=str(commit))
        return result

    def lines(self, result, options):
        verb = "uploaded" if result["uploaded"] else "would upload (dry run)"
        yield f"{verb} {len(result['files'])} files of {result['release']} to {result['repo']}:"
        yield from (f"  {name}" for name in result["files"])
