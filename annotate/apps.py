from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    name = "annotate"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from annotate.review import services as review
        from annotate.work import workspace
        from annotate.work.batches import settle_after_transition
        from curation import states
        from curation.services.lifecycle import on_transition, transition_rule

        on_transition(settle_after_transition, targets=(states.Status.VALIDATED, states.Status.DISCARDED))
        # The guards and effects the transition table names (curation.states) for the annotation moves.
        transition_rule(states.SUBMISSION_COMPLETE, workspace.submission_complete)
        transition_rule(states.CHANGES_EXPLAINED, review.changes_explained)
        transition_rule(states.CHANGES_RECORDED, review.changes_recorded)
        transition_rule(states.APPROVAL_RECORDED, review.approval_recorded)
        transition_rule(states.FLAG_EXPLAINED, review.flag_explained)
        transition_rule(states.DISCUSSION_OPENED, review.discussion_opened)
        transition_rule(states.DISCUSSION_OPEN, review.discussion_open)
        transition_rule(states.DISCUSSION_DECIDED, review.discussion_decided)
