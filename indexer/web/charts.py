"""Charts for the overview, drawn on the server as SVG geometry (no script, nothing fetched):
each function returns the shapes and labels a template writes out as ``<rect>`` and ``<text>``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    colour: str
    title: str  # the exact figure, shown on hover (SVG <title>)


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "start"


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    labels: list[Label]
    legend: list[tuple[str, str]]  # (colour, name)


def stacked_days(per_day: dict[str, Counter], width: int = 760, height: int = 260) -> Chart:
    """Duplicates per publish day, one stacked bar a day, one colour a reason."""
    reasons = sorted({r for c in per_day.values() for r in c})
    colours = {r: PALETTE[i % len(PALETTE)] for i, r in enumerate(reasons)}
    days = list(per_day)
    left, bottom, top = 40, 40, 10
    plot_h = height - bottom - top
    peak = max((sum(c.values()) for c in per_day.values()), default=0) or 1
    step = (width - left - 10) / max(1, len(days))
    bars, labels = [], [Label(left - 6, top + 4, str(peak), "end"), Label(left - 6, top + plot_h, "0", "end")]
    every = max(1, len(days) // 12)
    for i, day in enumerate(days):
        x = left + i * step + step * 0.1
        y = top + plot_h
        for r in reasons:
            n = per_day[day][r]
            if not n:
                continue
            h = plot_h * n / peak
            y -= h
            bars.append(Bar(round(x, 1), round(y, 1), round(step * 0.8, 1), round(h, 1), colours[r], f"{day} {r}: {n}"))
        if i % every == 0:
            labels.append(Label(round(x + step * 0.4, 1), height - bottom + 16, day[5:], "middle"))
    return Chart(width, height, bars, labels, [(colours[r], r) for r in reasons])


def horizontal(rows: list[tuple[str, float, str]], width: int = 760, bar_h: int = 18, colour: str = PALETTE[0]) -> Chart:
    """One bar a row, ``(name, value 0..1 or any scale, figure shown)``, longest = full width."""
    left, gap = 220, 6
    peak = max((v for _, v, _ in rows), default=0) or 1
    bars, labels = [], []
    for i, (name, value, shown) in enumerate(rows):
        y = i * (bar_h + gap) + 4
        w = (width - left - 90) * value / peak
        bars.append(Bar(left, y, round(w, 1), bar_h, colour, f"{name}: {shown}"))
        labels.append(Label(left - 8, y + bar_h - 5, name[:28], "end"))
        labels.append(Label(round(left + w + 6, 1), y + bar_h - 5, shown))
    return Chart(width, len(rows) * (bar_h + gap) + 8, bars, labels, [])
