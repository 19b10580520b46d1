"""Reads of double annotation: the second annotator's own copy (never the first version), the two versions side by
side for the round-one verifier, and the managers' agreement figures per batch and per annotator pair."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from annotate.agreement.metrics import answer_em_f1, cohen_kappa, jaccard, krippendorff_alpha_nominal
from annotate.agreement.models import DoubleAnnotation
from annotate.agreement.services import (
    CHOSEN_FIELDS,
    FIELD_LABELS,
    agreement_settings_of,
    awaiting_second_q,
    copy_problems,
    own_copy,
    second_fields,
)
from annotate.diffing import field_text, word_diff
from annotate.work.selectors import context_read
from curation.errors import NotFound
from curation.models import Context, Instance, Project, ReasoningType, Table
from curation.selectors import roles_of
from curation.services.projects import require_role
from curation.states import Role
from curation.visibility import CURATORS

# The figures with their labels, in the order the dashboard, the API, the CSV and the command give them.
FIGURE_LABELS = {
    "answer_em": "Answer EM",
    "answer_f1": "Answer F1",
    "answer_form_kappa": "Answer form κ",
    "answer_source_kappa": "Answer source κ",
    "reasoning_type_kappa": "Reasoning type κ",
    "relevant_tables_jaccard": "Relevant tables Jaccard",
    "answer_form_alpha": "Answer form α",
    "answer_source_alpha": "Answer source α",
    "reasoning_type_alpha": "Reasoning type α",
}
FIGURES = tuple(FIGURE_LABELS)
CHART_SERIES = ("answer_em", "answer_f1", "answer_form_kappa", "answer_source_kappa", "reasoning_type_kappa")
# The coded fields two versions agree on by κ and α (each pair's values under these names: `_pair_scores`).
CODED = ("answer_form", "answer_source", "reasoning_type")


def copy_shown(*, user: AbstractBaseUser, copy_id: int) -> dict[str, Any]:
    """The second annotator's own copy with its context, as a draft looks: the context's paragraphs and tables,
    never the first annotator's fields, marks or comments."""
    copy = own_copy(copy_id=copy_id, user=user)
    context = copy.instance.context
    shown, _ = context_read(copy.instance, own_only=context is not None and context.kind == Context.Kind.SHORT)
    return {
        "copy": copy,
        "project": copy.project,
        "paper_title": context.paper.title if context is not None else "",
        "paragraphs": shown["context_paragraphs"],
        "tables": shown["context_tables"],
        "reasoning_types": list(ReasoningType.objects.filter(project=copy.project).order_by("pk")),
        "problems": copy_problems(copy),
    }


def double_for_review(*, user: AbstractBaseUser, instance: Instance) -> dict[str, Any] | None:
    """Both versions of a double-annotated instance, field by field with a word diff, for its project's verifiers
    and managers only — never for either annotator (nor anyone else), so neither sees the other's work. None when
    the instance is not double-annotated or the viewer may not see the pair."""
    double = DoubleAnnotation.objects.filter(instance_id=instance.pk).select_related("second_annotator").first()
    if double is None:
        return None
    if not roles_of(user=user, project=instance.project) & {str(role) for role in CURATORS}:
        return None
    if user.pk in (double.first_annotator_id, double.second_annotator_id):
        return None
    tables = (
        {
            table.pk: f"Table {table.number or table.order + 1}"
            for table in Table.objects.filter(paper__project_id=instance.project_id, paper_id=instance.context.paper_id)
        }
        if instance.context_id
        else {}
    )
    types = dict(ReasoningType.objects.filter(project_id=instance.project_id).values_list("pk", "name"))
    second = second_fields(double)
    rows = []
    for name in CHOSEN_FIELDS:
        first_value, second_value = double.first_fields.get(name), second[name]
        first_text = field_text(name, first_value, tables=tables, types=types)
        second_text = field_text(name, second_value, tables=tables, types=types)
        rows.append(
            {
                "field": name,
                "label": FIELD_LABELS[name],
                "first": first_text,
                "second": second_text,
                "is_same": _normal(name, first_value) == _normal(name, second_value),
                "parts": word_diff(first_text, second_text),
                "chosen": double.decision_fields.get(name, ""),
            }
        )
    return {
        "double": double,
        "rows": rows,
        "is_ready": double.state in (DoubleAnnotation.State.SUBMITTED, DoubleAnnotation.State.DECIDED),
        "first_annotator": get_user_model().objects.filter(pk=double.first_annotator_id).first(),
        "second_annotator": double.second_annotator,
    }


def _normal(name: str, value: Any) -> Any:
    if name in ("answer", "relevant_table_ids"):
        return sorted(str(item) for item in value or [])
    return value or ""


def _pair_scores(double: DoubleAnnotation) -> dict[str, Any]:
    """What one double-annotated instance contributes: the raters and the per-field values of both versions."""
    first, second = double.first_fields, second_fields(double)
    em, f1 = answer_em_f1(
        list(first.get("answer") or []),
        list(second["answer"] or []),
        first_scale=first.get("scale") or "",
        second_scale=second["scale"] or "",
    )
    return {
        "raters": (double.first_annotator_id, double.second_annotator_id),
        "em": em,
        "f1": f1,
        "jaccard": jaccard(first.get("relevant_table_ids") or [], second["relevant_table_ids"] or []),
        **{name: (first.get(name) or "", second[name] or "") for name in ("answer_form", "answer_source")},
        "reasoning_type": (first.get("reasoning_type_id"), second["reasoning_type_id"]),
    }


def _alpha(scores: list[dict[str, Any]], field: str) -> float | None:
    """Krippendorff's α over the group: one unit per instance, one column per annotator (missing elsewhere)."""
    raters = sorted({rater for score in scores for rater in score["raters"]})
    column = {rater: index for index, rater in enumerate(raters)}
    units = []
    for score in scores:
        unit: list[Any] = [None] * len(raters)
        for rater, value in zip(score["raters"], score[field], strict=True):
            unit[column[rater]] = value
        units.append(unit)
    return krippendorff_alpha_nominal(units)


def agreement_of(scores: list[dict[str, Any]]) -> dict[str, Any]:
    """A group's figures with its count n (instances with both versions in) and how many annotators took part."""
    n = len(scores)
    if not n:
        return {"n": 0, "raters": 0, **dict.fromkeys(FIGURES)}
    return {
        "n": n,
        "raters": len({rater for score in scores for rater in score["raters"]}),
        "answer_em": sum(score["em"] for score in scores) / n,
        "answer_f1": sum(score["f1"] for score in scores) / n,
        **{f"{field}_kappa": cohen_kappa([score[field] for score in scores]) for field in CODED},
        "relevant_tables_jaccard": sum(score["jaccard"] for score in scores) / n,
        **{f"{field}_alpha": _alpha(scores, field) for field in CODED},
    }


def awaiting_second_count(project: Project) -> int:
    """How many instances wait for a second annotator (their copy is not in): held back from round one, so the
    round-one pile and the dashboard say so."""
    return Instance.objects.filter(project=project).filter(awaiting_second_q()).count()


def agreement_figures(*, user: AbstractBaseUser, project: Project) -> dict[str, Any]:
    """Managers only: agreement over every instance with both versions in, overall, per batch and per annotator
    pair, each with its count; plus the settings and how many copies are still open."""
    require_role(user=user, project=project, roles=(Role.MANAGER,), action="see agreement figures")
    return project_agreement(project)


def project_agreement(project: Project) -> dict[str, Any]:
    """The figures of `agreement_figures` without a viewer: for the operator's command (`manage.py agreement`)."""
    doubles = list(
        DoubleAnnotation.objects.filter(
            project=project, state__in=(DoubleAnnotation.State.SUBMITTED, DoubleAnnotation.State.DECIDED)
        )
        .select_related("batch")
        .order_by("id")
    )
    names = dict(
        get_user_model()
        .objects.filter(pk__in={d.first_annotator_id for d in doubles} | {d.second_annotator_id for d in doubles})
        .values_list("pk", "username")
    )
    by_batch: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    everything = []
    for double in doubles:
        score = _pair_scores(double)
        everything.append(score)
        batch_key = (double.batch_id or 0, double.batch.name if double.batch else "No batch")
        by_batch[batch_key].append(score)
        pair = tuple(sorted((names.get(double.first_annotator_id, "?"), names.get(double.second_annotator_id, "?"))))
        by_pair[pair].append(score)  # type: ignore[index]
    settings = agreement_settings_of(project)
    return {
        "agreement_settings": settings,
        "overall": agreement_of(everything),
        "batches": [
            {"batch_id": key[0] or None, "batch": key[1], **agreement_of(scores)}
            for key, scores in sorted(by_batch.items())
        ],
        "pairs": [
            {"annotators": list(pair), "pair": " & ".join(pair), **agreement_of(scores)}
            for pair, scores in sorted(by_pair.items())
        ],
        "open_copies": awaiting_second_count(project),
        "decided": sum(1 for double in doubles if double.state == DoubleAnnotation.State.DECIDED),
    }


def agreement_csv_rows(*, user: AbstractBaseUser, project: Project) -> list[dict[str, Any]]:
    """The figures as CSV rows (the dashboard's "agreement" table): one per batch, one per annotator pair and the
    overall row, each with its n."""
    figures = agreement_figures(user=user, project=project)

    def row(group: str, name: str, values: dict[str, Any]) -> dict[str, Any]:
        figures_of = {key: None if values[key] is None else round(values[key], 4) for key in FIGURES}
        return {"group": group, "name": name, "n": values["n"], "raters": values["raters"], **figures_of}

    return [
        *(row("batch", values["batch"], values) for values in figures["batches"]),
        *(row("pair", values["pair"], values) for values in figures["pairs"]),
        row("overall", "all", figures["overall"]),
    ]


def agreement_settings_shown(*, user: AbstractBaseUser, project: Project):
    """The double-annotation settings, for the project's managers."""
    require_role(user=user, project=project, roles=(Role.MANAGER,), action="see the double-annotation settings")
    return agreement_settings_of(project)


def double_shown(*, user: AbstractBaseUser, instance: Instance) -> dict[str, Any]:
    """Both versions side by side for the API: the instance's verifiers and managers only (404 otherwise, so an
    annotator cannot even learn that a second version exists)."""
    data = double_for_review(user=user, instance=instance)
    if data is None:
        raise NotFound(f"Instance {instance.pk} has no second version that you may see.")
    return data
