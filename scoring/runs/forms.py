"""Input forms of the scoring pages: types and choices here; the rules stay in the run services."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet

from scoring.methods.templates import DEFAULT_TEMPLATES
from scoring.runs.models import ScoringRun

METHOD_CHOICES = [choice for choice in ScoringRun.Method.choices if choice[0] != ScoringRun.Method.UPLOAD]


class ScoringRunForm(forms.Form):
    """Start a run of a model over a release: method, context setting, generation and tool-loop settings."""

    endpoint = forms.ModelChoiceField(queryset=None)
    method = forms.ChoiceField(choices=METHOD_CHOICES)
    setting = forms.ChoiceField(choices=ScoringRun.Setting.choices, required=False)
    limit = forms.IntegerField(required=False, min_value=1)
    max_tokens = forms.IntegerField(required=False, min_value=1)
    temperature = forms.FloatField(required=False, min_value=0)
    label = forms.CharField(required=False, max_length=200)
    tools = forms.ChoiceField(choices=(("all", "all tools"), ("data", "data tools only")), required=False)
    few_shot = forms.TypedChoiceField(choices=((0, "0"), (1, "1"), (3, "3")), coerce=int, required=False)
    max_turns = forms.IntegerField(required=False, min_value=1, max_value=30)

    def __init__(self, *args: Any, endpoints: QuerySet, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["endpoint"].queryset = endpoints
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
            "max_turns": data["max_turns"] or 6,
            "limit": data["limit"],
            "generation_params": {name: data[name] for name in ("max_tokens", "temperature") if data[name] is not None},
        }
