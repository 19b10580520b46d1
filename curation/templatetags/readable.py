"""Filters that show values as a person reads them: settings, shares, figures, answer forms."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from django import template

from curation.models import Instance
from curation.toolkit.numbers import fixed

register = template.Library()


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "":
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


# `{{ value|setting_value }}`: one setting's value as settings_text writes it (yes/no, —, JSON for lists).
register.filter("setting_value", _value)


@register.filter
def json_text(value: Any) -> str:
    """A JSON field's value for a text box: what was typed comes back as typed, a stored value as one line of JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@register.filter
def settings_text(mapping: Mapping[str, Any] | None) -> str:
    """A flat mapping of settings or figures as a person reads them ("temperature 0.0 · max tokens 256")."""
    if not mapping:
        return "—"
    return " · ".join(f"{str(key).replace('_', ' ')} {_value(value)}" for key, value in mapping.items())


@register.filter
def percent(value: float | None, digits: int = 0) -> str:
    """A share in [0, 1] as a percentage rounded half-up (`fixed`, the one rounding of printed figures), — for None."""
    return fixed(value, int(digits), scale=100)


@register.filter
def figure(value: float | None) -> str:
    """A figure (an agreement, a correlation) to two decimals, rounded as `percent` rounds; — for None."""
    return fixed(value, 2)


@register.filter
def answer_form(name: str) -> str:
    """An answer form as a person reads it, from the instance's answer-form labels: "short_form" (the key scoring's
    results and error analysis use) or "short" gives "Short-form"; an unknown name is shown as it is."""
    form = str(name).removesuffix("_form")
    return Instance.AnswerForm(form).label if form in Instance.AnswerForm.values else str(name)


@register.filter
def placed(messages: Iterable[Any], place: str) -> list[Any]:
    """The messages shown at `place`: the page's top (""), or the section a form sends the person back to (its id,
    the message's extra_tags), where they land rather than above it."""
    return [message for message in messages if (message.extra_tags or "") == place]
