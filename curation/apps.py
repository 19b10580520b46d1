from importlib import import_module

from django.apps import AppConfig

# The nouns' model modules, which Django would not import by itself (the core models import none of them).
NOUN_MODEL_MODULES = (
    "curation.endpoints.models",
    "curation.datasets.models",
    "curation.drafting.models",
    "curation.releases.models",
    "curation.panel.models",
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
        from curation.jobs import job_kinds_register
        from curation.releases.near_duplicates import NEAR_DUPLICATES_WITHHELD, withheld_near_duplicates
        from curation.releases.withheld import withhold_from_releases

        # The job kinds of the core; the beat reaper (curation.jobs_reap) and the worker hand-back run them all.
        job_kinds_register(
            "curation.drafting.services.jobs.DRAFTING_ITEMS",
            "curation.releases.services.jobs.EXPORT_BUILDS",
            "curation.releases.services.jobs.RELEASE_CUTS",
            "curation.papers.ingestion.INGEST_JOBS",
            "curation.datasets.jobs.DATASET_IMPORTS",
            "curation.webhooks.services.WEBHOOK_DELIVERIES",
        )
        # An import with --as-release cuts a release; releases/ sits above datasets/, so it is named here.
        import_release_register(
            path="curation.releases.services.cut.release_cut",
            name_path="curation.releases.services.cut.release_name_slug",
        )
        # Near-duplicates a manager ticks on the cut form.
        withhold_from_releases(NEAR_DUPLICATES_WITHHELD, withheld_near_duplicates)
