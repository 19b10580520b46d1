from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    verbose_name = "Scoring"

    def ready(self) -> None:
        from curation.jobs import reaper_register

        reaper_register(kind="scoring chunks", path="scoring.runs.reaper.runs_reap")
