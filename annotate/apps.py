from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    name = "annotate"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from annotate.services.batches import settle_after_transition
        from curation.services.lifecycle import on_transition
        from curation.states import Status

        on_transition(settle_after_transition, targets=(Status.VALIDATED, Status.DISCARDED))
