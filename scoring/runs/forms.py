"""Input forms of the scoring pages: types and choices here; the rules stay in the run services."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet

from scoring.methods.templates import DEFAULT_TEMPLATES
from scoring.methods.toolloop import MAX_TURNS_LIMIT
from scoring.metrics.error_analysis import MAX_PER_FORM
from scoring.runs.models import ScoringRun

SCALE_MODE_CHOICES = (("predicted", "use the predicted scale"), ("ignore", "ignore scale (zero-shot models)"))
EXTRACTION_CHOICES = (("default", "lenient (markers, lists, markdown)"), ("official", "official (SciTaT's scripts)"))
BERTSCORE_CHOICES = (
    ("minilm", "all-MiniLM-L6-v2 (offline default)"),
    ("paper", "bert-base-uncased, layer 12 (SciTaT paper)"),
)
TOOLS_CHOICES = (("all", "all tools"), ("data", "data tools only"))  # the tool loop's tool sets, on both forms
METHOD_CHOICES = [choice for choice in ScoringRun.Method.choices if choice[0] != ScoringRun.Method.UPLOAD]


class ScoringRunForm(forms.Form):
    """Start a run of a model over a release: method, context setting, generation and tool-loop settings."""

    endpoint = forms.ModelChoiceField(queryset=None)
    method = forms.ChoiceField(choices=METHOD_CHOICES)
    setting = forms.ChoiceField(choices=ScoringRun.Setting.choices, required=False)
    limit = forms.IntegerField(required=False, min_value=1)
    per_template = forms.IntegerField(
        required=False, min_value=1, help_text="A sample: answerable questions per template (the meta paper: 20)."
    )
    sample_seed = forms.IntegerField(required=False)
    max_tokens = forms.IntegerField(required=False, min_value=1)
    temperature = forms.FloatField(required=False, min_value=0)
    label = forms.CharField(
        required=False,
        max_length=200,
        help_text="How the run is named in lists; the comparison groups runs by the model the endpoint serves.",
    )
    tools = forms.ChoiceField(choices=TOOLS_CHOICES, required=False)
    few_shot = forms.TypedChoiceField(choices=((0, "0"), (1, "1"), (3, "3")), coerce=int, required=False)
    max_turns = forms.IntegerField(required=False, min_value=1, max_value=MAX_TURNS_LIMIT)
    scale_mode = forms.ChoiceField(choices=SCALE_MODE_CHOICES, required=False)
    extraction = forms.ChoiceField(choices=EXTRACTION_CHOICES, required=False)
    bertscore = forms.ChoiceField(choices=BERTSCORE_CHOICES, required=False)
    judge = forms.ModelChoiceField(
        queryset=None,
        required=False,
        help_text="Optional: an endpoint that grades free-form answers against the gold with the rubric (beside "
        "BERTScore, never an official metric).",
    )

    def __init__(self, *args: Any, endpoints: QuerySet, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["endpoint"].queryset = endpoints
        self.fields["judge"].queryset = endpoints
        for stage in DEFAULT_TEMPLATES:
            self.fields[f"template_{stage}"] = forms.CharField(required=False, strip=False)

    def run_arguments(self) -> dict[str, Any]:
        """The keyword arguments of `run_create` this valid form stands for (empty fields keep the defaults)."""
        data = self.cleaned_data
        templates = {
            stage: data[f"template_{stage}"].replace("\r\n", "\n")
            for stage in DEFAULT_TEMPLATES
            if data[f"template_{stage}"].strip()
        }
        return {
            "method": data["method"],
            "setting": data["setting"] or ScoringRun.Setting.SHORT,
            "endpoint": data["endpoint"],
            "label": data["label"].strip(),
            "templates": templates,
            "few_shot": data["few_shot"] or 0,
            "tools": data["tools"] or "all",
            "max_turns": data["max_turns"],  # empty: derived from the release's longest program
            "scale_mode": data["scale_mode"] or "predicted",
            "extraction": data["extraction"] or "default",
            "bertscore": data["bertscore"] or "minilm",
            "limit": data["limit"],
            "per_template": data["per_template"],
            "sample_seed": data["sample_seed"] or 0,
            "generation_params": {name: data[name] for name in ("max_tokens", "temperature") if data[name] is not None},
            "judge": data["judge"],
        }


class ErrorSampleForm(forms.Form):
    """Draw an error sample of a run (SciTaT §4.4): the seed and how many errors of each answer form."""

    seed = forms.IntegerField(min_value=-(2**63), max_value=2**63 - 1)
    per_form = forms.IntegerField(min_value=1, max_value=MAX_PER_FORM, required=False)
