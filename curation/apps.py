from importlib import import_module

from django.apps import AppConfig

# The app's nouns keep their models in their own packages; Django imports only `curation.models` by itself, so the
# app names the others here, by name (as INSTALLED_APPS names apps), and the core models import none of them.
NOUN_MODEL_MODULES = (
    "curation.endpoints.models",
    "curation.datasets.models",
    "curation.drafting.models",
    "curation.releases.models",
    "curation.papers.models",
    "curation.webhooks.models",
)


class CurationConfig(AppConfig):
    name = "curation"
    verbose_name = "Curation"

    def import_models(self) -> None:
        super().import_models()
        for module in NOUN_MODEL_MODULES:
            import_module(module)

    def ready(self) -> None:
        from curation.datasets.services import import_release_register
        from curation.jobs import reaper_register

        # The beat reaper (curation.jobs_reap) runs these; each requeues or fails its stalled rows. The second
        # function hands back a worker's own rows when it shuts down or starts again (curation/tasks.py).
        reaper_register(
            kind="drafting items",
            path="curation.drafting.services.reaper.items_reap",
            worker_path="curation.drafting.services.reaper.runs_resume_for_worker",
        )
        reaper_register(
            kind="export builds",
            path="curation.releases.services.exports_reap",
            worker_path="curation.releases.services.exports_release_for_worker",
        )
        reaper_register(
            kind="release cuts",
            path="curation.releases.services.cuts_reap",
            worker_path="curation.releases.services.cuts_release_for_worker",
        )
        reaper_register(
            kind="ingestion jobs",
            path="curation.papers.ingestion.ingest_jobs_reap",
            worker_path="curation.papers.ingestion.ingest_jobs_release_for_worker",
        )
        reaper_register(
            kind="dataset imports",
            path="curation.datasets.jobs.import_jobs_reap",
            worker_path="curation.datasets.jobs.import_jobs_release_for_worker",
        )
        reaper_register(
            kind="webhook deliveries",
            path="curation.webhooks.services.deliveries_reap",
            worker_path="curation.webhooks.services.deliveries_release_for_worker",
        )
        # An import with --as-release cuts a release; releases/ sits above datasets/, so it is named here.
        import_release_register(
            path="curation.releases.services.release_cut", name_path="curation.releases.services.release_name_slug"
        )
