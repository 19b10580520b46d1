"""Geometry of every inline SVG chart (dashboard, release, scoring): pure, rows in, coordinates out, one palette."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from curation.toolkit.numbers import fixed

# One palette for every chart, so a series has the same colour wherever it is drawn.
PALETTE = ("#2457c5", "#12b76a", "#f79009", "#ee46bc", "#7a5af8", "#53b1fd", "#f04438", "#475467")
LABEL_CHARS = 22  # at the chart's 11 px, 22 characters fit in one group's width: a grouped chart's label line
LABEL_LINES = 2  # a grouped chart's label wraps onto at most this many lines, the rest cut with "…"
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 640, 200, 36, 24, 10


def colour(index: int) -> str:
    """The palette colour of the index-th series, cycling."""
    return PALETTE[index % len(PALETTE)]


def _nice_max(value: float) -> int:
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000):
        if value <= step:
            return step
    return int(value) + 1


def _frame(
    rows: Sequence[dict[str, Any]], label: Callable[[dict[str, Any]], str], top: float
) -> tuple[Callable[[int], float], Callable[[float], float], dict[str, Any]]:
    """The x of the index-th of evenly spaced rows, the y of a value up to `top`, and the frame both line charts
    share (a few x labels)."""
    step = (WIDTH - LEFT - 8) / max(len(rows) - 1, 1)
    plot_h = HEIGHT - BOTTOM - TOP

    def x(index: int) -> float:
        return round(LEFT + index * step, 1)

    def y(value: float) -> float:
        return round(TOP + plot_h - plot_h * value / top, 1)

    every = max(len(rows) // 6, 1)
    frame = {"width": WIDTH, "height": HEIGHT, "left": LEFT, "baseline": HEIGHT - BOTTOM, "right": WIDTH - 8}
    frame["xlabels"] = [{"x": x(i), "text": label(row)} for i, row in enumerate(rows) if i % every == 0]
    return x, y, frame


def line_chart(
    rows: Sequence[dict[str, Any]], *, series: Sequence[str], label: Callable[[dict[str, Any]], str]
) -> dict[str, Any]:
    """Polylines for each series over evenly spaced rows, with y ticks and a few x labels."""
    top = _nice_max(max([row[name] for row in rows for name in series] or [0]) or 1)
    x, y, frame = _frame(rows, label, top)

    lines = []
    for index, name in enumerate(series):
        points = [(x(i), y(row[name])) for i, row in enumerate(rows)]
        lines.append(
            {
                "name": name,
                "colour": colour(index),
                "points": " ".join(f"{px},{py}" for px, py in points),
                "dots": [
                    {"x": px, "y": py, "value": row[name], "label": label(row)}
                    for (px, py), row in zip(points, rows, strict=True)
                    if row[name]
                ],
                "total": sum(row[name] for row in rows),
            }
        )
    return {**frame, "lines": lines, "yticks": [{"y": y(v), "value": v} for v in (0, top // 2, top)]}


GROUPED_BARS_WIDTH = 400


def grouped_bars(
    rows: Sequence[dict[str, Any]], *, label: str, series: Sequence[str], names: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Horizontal bars, one group per person and one bar per series (named in the legend by `names`, else by its
    key), scaled to the largest value. Drawn 400 wide
    (`GROUPED_BARS_WIDTH`), about a phone's width, so a phone shows its 12-px text at nearly its size (at 580 wide a
    390-px screen drew it 7 px high)."""
    named = {name: (names or {}).get(name, name) for name in series}
    largest = max([row[name] or 0 for row in rows for name in series] or [0])
    top = largest or 1
    # A label is cut to 16 characters (the template's truncatechars): at 12 px such a name ("template change…") is
    # about 125 px wide, so the label column is wider than that or the chart's left edge cuts off its first letters.
    bar_h, gap, label_w = 12, 10, 132
    plot_w = GROUPED_BARS_WIDTH - label_w - 50  # 50 left of the width for the value after the longest bar
    groups = []
    y = 0
    for row in rows:
        bars = []
        for index, name in enumerate(series):
            value = row[name] or 0
            width = round(plot_w * value / top, 1)
            bars.append(
                {"name": named[name], "value": value, "y": y + index * bar_h, "width": width, "colour": colour(index)}
            )
        groups.append({"label": row[label], "y": y, "mid": y + len(series) * bar_h / 2 + 4, "bars": bars})
        y += len(series) * bar_h + gap
    return {
        "width": GROUPED_BARS_WIDTH,
        "height": max(y, 20),
        "label_w": label_w,
        "groups": groups,
        "legend": [{"name": named[n], "colour": colour(i)} for i, n in enumerate(series)],
        "is_empty": not largest,  # nothing to draw: the page says so instead of rows of zeros
    }


def bar_chart(counts: Mapping[str, Any], *, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Horizontal bars, one per key (a count, or a dict with a "count"), scaled to the largest."""
    rows = [(key, value if isinstance(value, int | float) else value.get("count", 0)) for key, value in counts.items()]
    top = max((value for _, value in rows), default=0) or 1
    total = sum(value for _, value in rows) or 1
    bars = [
        {
            "label": (labels or {}).get(key, key),
            "value": value,
            "percent": fixed(value / total, 1, scale=100),
            "width": round(300 * value / top, 1),
            "y": 24 * index,
            "colour": colour(index),
        }
        for index, (key, value) in enumerate(rows)
    ]
    return {"bars": bars, "height": 24 * len(bars)}


def _label_lines(name: str) -> list[str]:
    """A grouped chart's label wrapped at word boundaries into lines of at most LABEL_CHARS, at most LABEL_LINES of
    them; what does not fit ends the last line with "…"."""
    lines = textwrap.wrap(name, LABEL_CHARS) or [""]
    if len(lines) > LABEL_LINES:
        lines = lines[:LABEL_LINES]
        lines[-1] = lines[-1][: LABEL_CHARS - 1] + "…"
    return lines


def grouped_chart(
    groups: Mapping[str, Mapping[str, float | None]],
    *,
    series: Sequence[tuple[str, str]],
    as_percent: bool = True,
) -> dict[str, Any]:
    """Vertical bars, one group per key and one bar per (key, label) of series, values in [0, 1] (a value outside is
    drawn at the nearer end, its label says the value). The bars' labels and the axis are in the scale the page's
    table uses: percent (0–100, one decimal) or, with `as_percent=False`, the figure itself (0–1, two decimals)."""

    def shown(value: float) -> str:
        return fixed(value, 1, scale=100) if as_percent else fixed(value, 2)

    width_per_group, bar = 150, 30
    bars, labels = [], []
    for index, (name, values) in enumerate(groups.items()):
        x0 = 40 + index * width_per_group
        # Every label starts on one baseline and wraps within its group's width, so neighbours never overlap.
        labels.append({"x": x0 + 45, "y": 198, "label": name, "lines": _label_lines(name)})
        for offset, (key, label) in enumerate(series):
            value = values.get(key)
            height = round(160 * min(max(value or 0.0, 0.0), 1.0), 1)
            bars.append(
                {
                    "x": x0 + offset * bar,
                    "y": 180 - height,
                    "height": height,
                    "width": bar - 4,
                    "colour": colour(offset),
                    "title": f"{name} {label}: {'—' if value is None else shown(value)}",
                    "value": "" if value is None else shown(value),
                }
            )
    return {
        "bars": bars,
        "labels": labels,
        "width": 80 + width_per_group * max(len(groups), 1),
        "axis_top": "100" if as_percent else "1",
    }


def rate_chart(
    rows: Sequence[dict[str, Any]],
    *,
    series: Sequence[str],
    label: Callable[[dict[str, Any]], str],
    markers: Sequence[dict[str, Any]] = (),
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Lines of rates in [0, 1] over evenly spaced rows; a None value breaks its line (nothing was measured then).
    `markers` are {"index": row index, "text": …}: vertical rules, e.g. where a guidelines version changed."""
    x, y, frame = _frame(rows, label, 1)

    lines = []
    for index, name in enumerate(series):
        segments: list[list[tuple[float, float]]] = [[]]
        dots = []
        for i, row in enumerate(rows):
            value = row[name]
            if value is None:
                segments.append([])
                continue
            segments[-1].append((x(i), y(value)))
            dots.append({"x": x(i), "y": y(value), "value": fixed(value, 2), "label": label(row)})
        lines.append(
            {
                "name": (labels or {}).get(name, name),
                "colour": colour(index),
                "segments": [" ".join(f"{px},{py}" for px, py in seg) for seg in segments if seg],
                "dots": dots,
            }
        )
    return {
        **frame,
        "top": TOP,
        "lines": lines,
        "yticks": [{"y": y(v), "value": f"{v:g}"} for v in (0, 0.5, 1)],
        "markers": [{"x": x(m["index"]), "text": m["text"]} for m in markers],
    }
