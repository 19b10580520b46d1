"""Error tags on predictions: people who may read gold answers tag why a prediction is wrong (SciTaT §4.4)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from curation.errors import InvalidInput, NotPermitted
from scoring.runs.models import ErrorTag, Prediction
from scoring.runs.permissions import can_see_predictions


def error_tag_set(
    *, prediction: Prediction, actor: AbstractBaseUser, kind: str, custom_label: str = "", note: str = ""
) -> ErrorTag:
    """Set the actor's error tag on a prediction (one per person; setting it again replaces it). Gold readers only."""
    if not can_see_predictions(user=actor, project=prediction.run.project):
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
    if not can_see_predictions(user=actor, project=prediction.run.project):
        raise NotPermitted("Only people who may read gold answers tag errors.")
    deleted, _ = ErrorTag.objects.filter(prediction=prediction, tagged_by=actor).delete()
    return deleted
