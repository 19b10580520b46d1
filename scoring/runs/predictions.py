"""Error analysis (SciTaT §4.4): runners draw a seeded random sample of a run's errors; people who may read gold
answers tag why a prediction is wrong."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from curation.errors import InvalidInput, NotPermitted
from curation.releases.selectors import can_read_gold
from scoring.metrics.error_analysis import MAX_PER_FORM, PER_FORM, draw_error_sample
from scoring.metrics.judge import agreement
from scoring.runs.models import ErrorSample, ErrorTag, Prediction, PredictionLabel, ScoringRun
from scoring.runs.permissions import runner_require


def error_tag_set(
    *, prediction: Prediction, actor: AbstractBaseUser, kind: str, custom_label: str = "", note: str = ""
) -> ErrorTag:
    """Set the actor's error tag on a prediction (one per person; setting it again replaces it). Gold readers only."""
    if not can_read_gold(user=actor, project=prediction.run.project):
        raise NotPermitted("Only people who may read gold answers tag errors.")
    if kind not in ErrorTag.Kind.values:
        raise InvalidInput(f"Unknown error type {kind!r}; expected one of {', '.join(ErrorTag.Kind.values)}.")
    custom_label = custom_label.strip()[:60]
    if kind == ErrorTag.Kind.CUSTOM and not custom_label:
        raise InvalidInput("A custom error type needs a name.")
    tag, _ = ErrorTag.objects.update_or_create(
        prediction=prediction,
        tagged_by=actor,
        defaults={"kind": kind, "custom_label": custom_label if kind == ErrorTag.Kind.CUSTOM else "", "note": note},
    )
    return tag


def error_tag_clear(*, prediction: Prediction, actor: AbstractBaseUser) -> int:
    """Remove the actor's own tag from a prediction; returns how many were removed."""
    if not can_read_gold(user=actor, project=prediction.run.project):
        raise NotPermitted("Only people who may read gold answers tag errors.")
    deleted, _ = ErrorTag.objects.filter(prediction=prediction, tagged_by=actor).delete()
    return deleted


def prediction_label_set(*, prediction: Prediction, actor: AbstractBaseUser, is_correct: bool) -> PredictionLabel:
    """Say whether a free-form prediction is correct (one label per person; again replaces it). Gold readers only:
    the labels measure how far the run's judge can be trusted."""
    if not can_read_gold(user=actor, project=prediction.run.project):
        raise NotPermitted("Only people who may read gold answers label predictions.")
    if (prediction.metrics or {}).get("short_form") is not False:
        raise InvalidInput("Only free-form predictions are labelled: short-form ones are scored exactly.")
    label, _ = PredictionLabel.objects.update_or_create(
        prediction=prediction, labelled_by=actor, defaults={"is_correct": is_correct}
    )
    return label


def judge_agreement(run: ScoringRun) -> dict[str, Any] | None:
    """How the run's judge agrees with people's labels (kappa with its interval); None for a run without a judge."""
    if not run.options.get("judge"):
        return None
    pairs = [
        (stages["judge"]["score"] == 1.0, is_correct)
        for stages, is_correct in PredictionLabel.objects.filter(prediction__run=run).values_list(
            "prediction__stages", "is_correct"
        )
        if (stages or {}).get("judge", {}).get("score") is not None
    ]
    return agreement(pairs)


def error_sample_draw(
    *, run: ScoringRun, actor: AbstractBaseUser | None, seed: int, per_form: int = PER_FORM
) -> ErrorSample:
    """Draw a new error sample of a completed run (managers and verifiers; `actor=None` is the command): up to
    `per_form` free-form and short-form errors at random with `seed`; it becomes the run's sample."""
    runner_require(actor, run.project, "draw error samples")
    if run.status != ScoringRun.Status.COMPLETED:
        raise InvalidInput(f"Run {run.pk} is {run.status}: an error sample is drawn from a completed run.")
    if not 1 <= per_form <= MAX_PER_FORM:
        raise InvalidInput(f"The sample size per answer form is between 1 and {MAX_PER_FORM}.")
    if not -(2**63) <= seed < 2**63:
        raise InvalidInput("The seed is a whole number that fits in 64 bits.")
    records = [
        {"id": pk, "status": status, "is_correct": is_correct, "short_form": (metrics or {}).get("short_form")}
        for pk, status, is_correct, metrics in Prediction.objects.filter(run=run).values_list(
            "pk", "status", "is_correct", "metrics"
        )
    ]
    sample = draw_error_sample(records, seed=seed, per_form=per_form)
    if not sample["free_form"] and not sample["short_form"]:
        raise InvalidInput(f"Run {run.pk} has no wrong scored predictions to sample.")
    # The draw is the row: its seed, size, ids and pool sizes of each form.
    drawn_by = actor if actor is not None and actor.is_authenticated else None
    return ErrorSample.objects.create(run=run, drawn_by=drawn_by, **sample)
