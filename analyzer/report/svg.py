"""The activity charts: rows per agent per UTC day, as inline SVG drawn here (no script, no library).

One band per agent, one bar per day that has rows, bar height on a square-root
scale of that agent's busiest day (so a quiet day stays visible beside a busy
one); each bar's ``<title>`` gives the day and the exact count. A bundle gets
two charts, drawn apart and in two colours: rows timed by their own records
and rows timed only by a file's modification time (settings, logs), which
would otherwise pile up on the collection day and shrink real activity.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from html import escape

from aitrail.analyzer.report.timeline import visible

WIDTH = 880
LABEL = 150  # left margin for the agent's name
BAND = 46  # height of one agent's band
BAR_MAX = 34
BAR_WIDTH_MAX = 24.0  # a span of a few days draws narrow bars, not blocks
DAYS_MAX = 3660  # a span longer than ten years is drawn as its last ten years (the rest is named)


def _day(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


RECORD_COLOUR = "#3b6ea5"  # rows timed by their own records
FILE_COLOUR = "#c27c0e"  # rows timed by a file's modification time


def activity_svg(activity: Counter, colour: str = RECORD_COLOUR, what: str = "rows") -> str:
    """The chart for one bundle's ``(agent, day) -> rows`` counts; a sentence when there is nothing to draw."""
    days = {(agent, _day(day)): count for (agent, day), count in activity.items() if _day(day)}
    if not days:
        return f'<p class="muted">No {escape(what)}: nothing to chart.</p>'
    last = max(day for _, day in days)
    first = max(min(day for _, day in days), last - dt.timedelta(days=DAYS_MAX - 1))
    dropped = sum(count for (_, day), count in days.items() if day < first)
    agents = sorted({agent for agent, _ in days})
    span = (last - first).days + 1
    step = (WIDTH - LABEL - 10) / span
    bar = min(BAR_WIDTH_MAX, max(1.0, step * 0.8))
    height = BAND * len(agents) + 24
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(what)} per agent per day">']
    for band, agent in enumerate(agents):
        top = band * BAND
        bars = sorted((day, count) for (name, day), count in days.items() if name == agent and day >= first)
        peak = max((count for _, count in bars), default=1)
        parts.append(f'<text x="4" y="{top + BAND - 14}" class="axis">{escape(visible(agent))}</text>')
        parts.append(f'<line x1="{LABEL}" y1="{top + BAND - 8}" x2="{WIDTH - 10}" y2="{top + BAND - 8}" '
                     'stroke="#bbb" stroke-width="1"/>')
        for day, count in bars:
            size = max(2.0, BAR_MAX * math.sqrt(count / peak))
            x = LABEL + (day - first).days * step
            parts.append(f'<rect x="{x:.2f}" y="{top + BAND - 8 - size:.2f}" width="{bar:.2f}" '
                         f'height="{size:.2f}" fill="{colour}"><title>{escape(visible(agent))} {day.isoformat()}: '
                         f'{count} rows</title></rect>')
    axis = BAND * len(agents) + 16
    parts.append(f'<text x="{LABEL}" y="{axis}" class="axis">{first.isoformat()}</text>')
    parts.append(f'<text x="{WIDTH - 10}" y="{axis}" class="axis" text-anchor="end">{last.isoformat()}</text>')
    parts.append("</svg>")
    if dropped:
        parts.append(f'<p class="muted">{dropped} rows before {first.isoformat()} are not drawn.</p>')
    return "".join(parts)
