from django.apps import AppConfig


class CurationConfig(AppConfig):
    name = "curation"
    verbose_name = "Curation"

    def ready(self) -> None:
        from curation.datasets.services import import_release_register
        from curation.jobs import reaper_register

        # The beat reaper (curation.jobs_reap) runs these; each requeues or fails its stalled rows.
        reaper_register(kind="drafting items", path="curation.drafting.services.items_reap")
        reaper_register(kind="export builds", path="curation.releases.services.exports_reap")
        # An import with --as-release cuts a release; releases/ sits above datasets/, so it is named here.
        import_release_register(path="curation.releases.services.release_cut")
