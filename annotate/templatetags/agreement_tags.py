"""Filters of the agreement section: a figure to two decimals (— when undefined) and a share as a percentage."""

from __future__ import annotations

from django import template

from curation.toolkit.numbers import fixed

register = template.Library()


@register.filter
def figure(value: float | None) -> str:
    """An agreement figure to two decimals; an undefined one (None) as a dash."""
    return fixed(value, 2)


@register.filter
def percent(value: float | None) -> str:
    """A share in [0, 1] as a whole percentage."""
    return "—" if value is None else f"{fixed(value, 0, scale=100)} %"
