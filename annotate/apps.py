from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    name = "annotate"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from annotate.agreement import services as agreement
        from annotate.qualification.first_gold import exam_gold_pooled
        from annotate.qualification.selectors import EXAM_POOL_WITHHELD, exam_pool_instance_ids
        from annotate.quality.services import probe_score, probes_after_drafting, probes_after_validation
        from annotate.review import services as review
        from annotate.work import queue, workspace
        from curation import states
        from curation.batches.services import settle_after_transition
        from curation.drafting.signals import drafts_committed
        from curation.releases.withheld import withhold_from_releases
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
        # Double annotation: draw on first submission, hold round one for the second version, serve copies first.
        on_transition(agreement.double_after_submit, targets=(states.Status.SUBMITTED,))
        on_transition(agreement.double_after_discard, targets=(states.Status.DISCARDED,))
        on_transition(review.discussion_closed_on_discard, targets=(states.Status.DISCARDED,))
        transition_rule(states.BOTH_VERSIONS_IN, agreement.both_versions_in)
        transition_rule(states.VERSION_CHOSEN, agreement.version_chosen)
        transition_rule(states.NOT_OWN_WORK, agreement.not_own_work)
        queue.serve_before_drafts(agreement.copy_serve, pending=agreement.copies_pending)
        transition_rule(states.EXAM_GOLD_POOLED, exam_gold_pooled)
        # Release cuts leave the exam's gold pool out unless the manager includes it.
        withhold_from_releases(EXAM_POOL_WITHHELD, exam_pool_instance_ids)
        # Hidden gold: probes join a batch as its drafts are committed or its papers' first gold is validated, and are
        # scored when first submitted.
        drafts_committed.connect(probes_after_drafting, dispatch_uid="hidden gold after drafting")
        on_transition(probes_after_validation, targets=(states.Status.VALIDATED,))
        on_transition(probe_score, targets=(states.Status.SUBMITTED,))
