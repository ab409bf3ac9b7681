"""Charts as SVG strings, drawn by hand: each one a pure function of numbers (no I/O, no clock).

A charting library would bring a dependency (and for most, a script) to draw a few lines, guide
lines and coloured strips; these are a hundred lines of arithmetic that a test can read. Colours come
from the page's CSS classes, so a chart holds no style of its own. Every label passes through
``html.escape``: a spreadsheet's name can hold anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

WIDTH, HEIGHT = 720, 180  # the viewBox: the page scales it to the screen's width
LEFT, RIGHT, TOP, BOTTOM = 44, 8, 10, 22  # room for the axis labels


@dataclass(frozen=True)
class Series:
    name: str
    css: str  # the CSS class that colours it
    points: Sequence[tuple[float, float]]  # (epoch seconds, value), in time order


@dataclass(frozen=True)
class Guide:
    """A horizontal line at ``value``: a budget, an interval, a quota."""

    label: str
    value: float
    css: str = "guide"


def line_chart(title: str, series: Sequence[Series], guides: Sequence[Guide] = (), *,
               start: float, end: float, unit: str = "") -> str:
    """Lines over [start, end] (epoch seconds) against a y axis from 0 to above the highest value or
    guide, with the guides drawn dashed and named at their right end."""
    top = max([value for s in series for _, value in s.points] + [g.value for g in guides] + [1.0]) * 1.1
    x = _scale(start, end, LEFT, WIDTH - RIGHT)
    y = _scale(0.0, top, HEIGHT - BOTTOM, TOP)
    parts = [_frame(), *_y_axis(top, y, unit), *_x_axis(start, end, x)]
    for guide in guides:
        at = y(guide.value)
        parts.append(_across(guide.css, at))
        parts.append(f'<text class="glabel" x="{WIDTH - RIGHT - 2}" y="{at - 3:.1f}" text-anchor="end">'
                     f'{escape(guide.label)}</text>')
    for line in series:
        if len(line.points) == 1:  # a line through one point has no length: the first run is a dot
            [(t, v)] = line.points
            parts.append(f'<circle class="{line.css}" cx="{x(t):.1f}" cy="{y(v):.1f}" r="3">'
                         f"<title>{escape(line.name)}</title></circle>")
        elif line.points:
            path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in line.points)
            parts.append(f'<polyline class="{line.css}" points="{path}"><title>{escape(line.name)}</title>'
                         "</polyline>")
    parts.append(_legend([(s.name, s.css) for s in series]))
    return _svg(title, parts)


def strip(segments: Sequence[tuple[float, float, str]], *, start: float, end: float, label: str) -> str:
    """A one-line timeline: (from, to, health) segments coloured by health class, over [start, end]."""
    x = _scale(start, end, 0.0, 1000.0)
    rects = [f'<rect class="{escape(health)}" x="{x(begin):.1f}" width="{max(x(stop) - x(begin), 0.5):.1f}" '
             'height="10"/>' for begin, stop, health in segments if stop > begin]
    return (f'<svg class="strip" viewBox="0 0 1000 10" preserveAspectRatio="none" role="img" '
            f'aria-label="{escape(label)}">{"".join(rects)}</svg>')


def _scale(low: float, high: float, to_low: float, to_high: float):
    span = (high - low) or 1.0
    return lambda value: to_low + (value - low) / span * (to_high - to_low)


def _across(css: str, at: float) -> str:
    return f'<line class="{css}" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{at:.1f}" y2="{at:.1f}"/>'


def _frame() -> str:
    return (f'<rect class="plot" x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" '
            f'height="{HEIGHT - TOP - BOTTOM}"/>')


def _y_axis(top: float, y, unit: str) -> list[str]:
    parts = []
    for value in _ticks(top):
        at = y(value)
        parts.append(_across("grid", at))
        parts.append(f'<text class="axis" x="{LEFT - 4}" y="{at + 4:.1f}" text-anchor="end">'
                     f'{_number(value)}{escape(unit)}</text>')
    return parts


def _x_axis(start: float, end: float, x) -> list[str]:
    """A few time labels: days over a span of days, hours and minutes over a shorter one."""
    days = (end - start) > 2 * 86400
    parts = []
    for step in range(5):
        moment = start + (end - start) * step / 4
        when = datetime.fromtimestamp(moment, UTC).strftime("%b %d" if days else "%H:%M")
        anchor = ("start", "middle", "middle", "middle", "end")[step]
        parts.append(f'<text class="axis" x="{x(moment):.1f}" y="{HEIGHT - 6}" text-anchor="{anchor}">'
                     f"{when}</text>")
    return parts


def _legend(entries: Sequence[tuple[str, str]]) -> str:
    items = []
    for n, (name, css) in enumerate(entries):
        items.append(f'<text class="legend {css}" x="{LEFT + 6 + n * 150}" y="{TOP + 12}">'
                     f"&#9632; {escape(name)}</text>")
    return "".join(items)


def _ticks(top: float) -> list[float]:
    """Round values for a y axis from 0 to ``top``: 0 and three or four more."""
    raw = top / 4
    magnitude = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [step * n for n in range(int(top // step) + 1)]


def _number(value: float) -> str:
    return f"{value:g}" if value < 10_000 else f"{value / 1000:g}k"


def _svg(title: str, parts: list[str]) -> str:
    return (f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">'
            f"<title>{escape(title)}</title>{''.join(parts)}</svg>")
