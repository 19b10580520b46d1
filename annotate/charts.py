"""Geometry for the dashboard's inline SVG charts (pure: rows in, coordinates out; templates draw them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

COLOURS = ("#2457c5", "#12b76a", "#f79009", "#ee46bc", "#7a5af8")
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 640, 200, 36, 24, 10


def _nice_max(value: float) -> int:
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000):
        if value <= step:
            return step
    return int(value) + 1


def line_chart(
    rows: Sequence[dict[str, Any]], *, series: Sequence[str], label: Callable[[dict[str, Any]], str]
) -> dict[str, Any]:
    """Polylines for each series over evenly spaced rows, with y ticks and a few x labels."""
    top = _nice_max(max([row[name] for row in rows for name in series] or [0]) or 1)
    plot_w, plot_h = WIDTH - LEFT - 8, HEIGHT - BOTTOM - TOP
    step = plot_w / max(len(rows) - 1, 1)

    def y(value: float) -> float:
        return round(TOP + plot_h - plot_h * value / top, 1)

    lines = []
    for index, name in enumerate(series):
        points = [(round(LEFT + i * step, 1), y(row[name])) for i, row in enumerate(rows)]
        lines.append(
            {
                "name": name,
                "colour": COLOURS[index % len(COLOURS)],
                "points": " ".join(f"{px},{py}" for px, py in points),
                "dots": [
                    {"x": px, "y": py, "value": row[name], "label": label(row)}
                    for (px, py), row in zip(points, rows, strict=True)
                    if row[name]
                ],
                "total": sum(row[name] for row in rows),
            }
        )
    every = max(len(rows) // 6, 1)
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "baseline": TOP + plot_h,
        "right": WIDTH - 8,
        "lines": lines,
        "yticks": [{"y": y(v), "value": v} for v in (0, top // 2, top)],
        "xlabels": [
            {"x": round(LEFT + i * step, 1), "text": label(row)} for i, row in enumerate(rows) if i % every == 0
        ],
    }


def grouped_bars(rows: Sequence[dict[str, Any]], *, label: str, series: Sequence[str]) -> dict[str, Any]:
    """Horizontal bars, one group per person and one bar per series, scaled to the largest value."""
    top = max([row[name] or 0 for row in rows for name in series] or [0]) or 1
    bar_h, gap, label_w, plot_w = 12, 10, 120, 400
    groups = []
    y = 0
    for row in rows:
        bars = []
        for index, name in enumerate(series):
            value = row[name] or 0
            bars.append(
                {
                    "name": name,
                    "value": value,
                    "y": y + index * bar_h,
                    "width": round(plot_w * value / top, 1),
                    "colour": COLOURS[index % len(COLOURS)],
                }
            )
        groups.append({"label": row[label], "y": y, "mid": y + len(series) * bar_h / 2 + 4, "bars": bars})
        y += len(series) * bar_h + gap
    return {
        "width": label_w + plot_w + 60,
        "height": max(y, 20),
        "label_w": label_w,
        "groups": groups,
        "legend": [{"name": n, "colour": COLOURS[i % len(COLOURS)]} for i, n in enumerate(series)],
    }
