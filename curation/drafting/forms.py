"""The drafting run page's input form: it checks types and choices; the services check the rules."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet

from curation.drafting.models import DraftingRun
from curation.drafting.templates import TEMPLATES


class DraftingRunForm(forms.Form):
    """Start a drafting run over a batch or listed contexts, with the LLM or the template drafter."""

    batch = forms.ModelChoiceField(queryset=None, required=False)
    contexts = forms.CharField(required=False)
    kind = forms.ChoiceField(choices=DraftingRun.Kind.choices)
    endpoint = forms.ModelChoiceField(queryset=None, required=False)
    max_tokens = forms.IntegerField(required=False, min_value=1)
    temperature = forms.FloatField(required=False, min_value=0)
    per_template = forms.IntegerField(required=False, min_value=1)
    seed = forms.IntegerField(required=False)
    unanswerable = forms.ChoiceField(choices=(("skip", "skip"), ("keep", "keep")), required=False)
    template_ids = forms.MultipleChoiceField(
        choices=[(t.template_id, t.template_id) for t in TEMPLATES], required=False
    )
    paraphrase_headers = forms.BooleanField(required=False)
    redraft = forms.BooleanField(required=False)

    def __init__(self, *args: Any, batches: QuerySet, endpoints: QuerySet, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["batch"].queryset = batches
        self.fields["endpoint"].queryset = endpoints

    def clean_contexts(self) -> list[int]:
        tokens = self.cleaned_data["contexts"].replace(",", " ").split()
        if not all(token.isdigit() for token in tokens):
            raise forms.ValidationError("Context ids are whole numbers, separated by spaces or commas.")
        return [int(token) for token in tokens]

    def run_arguments(self) -> dict[str, Any]:
        """The keyword arguments of `run_create` this valid form stands for."""
        data = self.cleaned_data
        params = {name: data[name] for name in ("max_tokens", "temperature") if data[name] is not None}
        return {
            "kind": data["kind"],
            "batch": data["batch"],
            "context_ids": data["contexts"] or None,
            "endpoint": data["endpoint"],  # run_create drops it when the run needs no model
            "generation_params": params,
            "options": {
                "redraft": data["redraft"],
                # Left empty: run_create's default (models.DEFAULT_OPTIONS).
                **{name: data[name] for name in ("seed", "per_template", "unanswerable") if data[name]},
                "template_ids": data["template_ids"],
                "paraphrase_headers": data["kind"] == DraftingRun.Kind.TEMPLATE and data["paraphrase_headers"],
            },
        }
