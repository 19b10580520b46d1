"""The instance browser's filters, one django-filter `FilterSet` for the page and the API: status, batch (0: in no
batch), paper, reasoning type (a code as the pages show it, e.g. "NR-1", or an id; its subtypes included), annotator
(author or assignee), the panel's k (how many panel models answer it) and text (question, answer or rationale)."""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db.models import Q, QuerySet, TextField
from django.db.models.functions import Cast

from curation.errors import InvalidInput
from curation.models import Instance, ReasoningType
from curation.states import Status


class InstanceFilterSet(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=Status.choices, empty_label="any")
    batch = django_filters.NumberFilter(method="filter_batch", min_value=0, help_text="0: instances in no batch")
    paper = django_filters.NumberFilter(field_name="context__paper_id", min_value=1)
    reasoning_type = django_filters.CharFilter(
        method="filter_reasoning_type", label="Reasoning type", help_text='a type code ("NR-1") or id; with subtypes'
    )
    annotator = django_filters.CharFilter(
        method="filter_annotator", label="Annotator", help_text="author or assignee username"
    )
    panel = django_filters.NumberFilter(
        field_name="panel_correct",
        min_value=0,
        label="Answered by k panel models",
        help_text="k of the latest calibration (0: no panel model answers it)",
    )
    q = django_filters.CharFilter(
        method="filter_text", label="Text", max_length=200, help_text="question, answer or rationale"
    )

    class Meta:
        model = Instance
        fields: list[str] = []

    def filter_batch(self, queryset: QuerySet[Instance], name: str, value: Any) -> QuerySet[Instance]:
        return queryset.filter(batch__isnull=True) if value == 0 else queryset.filter(batch_id=int(value))

    def filter_reasoning_type(self, queryset: QuerySet[Instance], name: str, value: str) -> QuerySet[Instance]:
        value = value.strip()
        if value.isdigit():
            return queryset.filter(Q(reasoning_type_id=int(value)) | Q(reasoning_type__parent_id=int(value)))
        if not ReasoningType.objects.filter(project__in=queryset.values("project_id")[:1], code=value).exists():
            raise InvalidInput(f"No reasoning type {value!r} in this project.", detail={"field": "reasoning_type"})
        return queryset.filter(Q(reasoning_type__code=value) | Q(reasoning_type__parent__code=value))

    def filter_annotator(self, queryset: QuerySet[Instance], name: str, value: str) -> QuerySet[Instance]:
        return queryset.filter(Q(author__username=value) | Q(assigned_to__username=value))

    def filter_text(self, queryset: QuerySet[Instance], name: str, value: str) -> QuerySet[Instance]:
        return matching_text(queryset, value.strip()) if value.strip() else queryset

    def offer(self, choices: dict[str, Any]) -> InstanceFilterSet:
        """For the page: the batches, papers, types and annotators this viewer may pick, as select boxes."""
        anything = [("", "any")]
        selects = {
            "batch": anything + [(0, "no batch")] + [(b.pk, b.name) for b in choices["batches"]],
            "paper": anything + [(p.pk, p.title[:80]) for p in choices["papers"]],
            "reasoning_type": anything
            + [(t.code, f"{t.parent.name} › {t.name}" if t.parent else t.name) for t in choices["reasoning_types"]],
            "annotator": anything + [(u.username, u.username) for u in choices["annotators"]],
        }
        for name, options in selects.items():
            self.form.fields[name].widget = forms.Select(choices=options)
        return self


def matching_text(instances: QuerySet[Instance], text: str) -> QuerySet[Instance]:
    """The instances whose question, answer or rationale holds `text`, in any case. On PostgreSQL the trigram
    indexes of migration 0019 cover exactly these expressions, so a search reads the rows that hold the text."""
    return instances.annotate(answer_text=Cast("answer", TextField())).filter(
        Q(question__icontains=text) | Q(answer_text__icontains=text) | Q(rationale__icontains=text)
    )
