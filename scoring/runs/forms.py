"""Input forms of the scoring pages: types and choices here; the rules stay in the run services."""

from __future__ import annotations

from django import forms

from scoring.metrics.error_analysis import MAX_PER_FORM

SCALE_MODE_CHOICES = (("predicted", "use the predicted scale"), ("ignore", "ignore scale (zero-shot models)"))
EXTRACTION_CHOICES = (("default", "lenient (markers, lists, markdown)"), ("official", "official (SciTaT's scripts)"))


class ErrorSampleForm(forms.Form):
    """Draw an error sample of a run (SciTaT §4.4): the seed and how many errors of each answer form."""

    seed = forms.IntegerField(min_value=-(2**63), max_value=2**63 - 1)
    per_form = forms.IntegerField(min_value=1, max_value=MAX_PER_FORM, required=False)
