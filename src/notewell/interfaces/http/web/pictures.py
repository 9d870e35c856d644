"""Small pictures for the web page, drawn on the server as inline SVG text.

The page fetches this text from the HTTP API and inserts it into its DOM, so the markup is built
to be safe to insert: every piece of user text (ids, titles, authors, outcomes) goes through
:func:`html.escape` with quotes, and lands only in text nodes, ``<title>`` tooltips, the root's
``aria-label`` and ``href`` values of the form ``?note=ID`` / ``?attempt=ID`` (the id URL-quoted
with nothing safe, then escaped). Every other attribute is a number or a constant of this module:
no scripts, event or style attributes, ids, ``url(#...)`` references or external resources, which
also means several pictures can share one page without their ids colliding (arrowheads are
polygons, not markers). Characters XML 1.0 forbids are dropped, so the text always parses.

The cost is bounded by caps (:data:`ROWS_MAX` attempts, :data:`NODES_MAX` notes a side,
:data:`MARKS_MAX` marks a side, tooltips of :data:`TIP_MAX` characters), so the output stops
growing with the input; the rest is said as "+N more". Widths are fixed with a ``viewBox`` so the
page can scale them; labels are cut by display columns, counting CJK characters as two, so a
Chinese title fits its box as a Latin one does. Each function returns "" when there is nothing
to draw, and the page then shows no picture.
"""

from __future__ import annotations

import heapq
import html
import math
import re
import unicodedata
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

__all__ = [
    "COLOURS",
    "FONT_FAMILY",
    "MARKS_MAX",
    "NODES_MAX",
    "ROWS_MAX",
    "TIP_MAX",
    "WIDTH",
    "attempt_svg",
    "clip_text",
    "graph_svg",
    "timeline_svg",
    "wrap_text",
]

WIDTH = 640
ROWS_MAX = 40
NODES_MAX = 12
MARKS_MAX = 40
TIP_MAX = 500
# Debian ships Noto CJK or WenQuanYi; system-ui alone falls back to tofu on some browsers
FONT_FAMILY = "system-ui, 'Noto Sans CJK SC', 'WenQuanYi Micro Hei', sans-serif"
COLOURS = {"succeeded": "#2e7d32", "failed": "#c62828", "abandoned": "#9e9e9e", "running": "#1565c0"}
OTHER = "#8d6e63"
INK = "#333333"
FAINT = "#9aa0a6"
BOX = "#f4f5f7"

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _esc(value: object) -> str:
    """Escaped for a text node or a double-quoted attribute."""
    return html.escape(_NOT_XML.sub("", str(value)), quote=True)


def _href(kind: str, ident: object) -> str:
    # errors="replace": a lone surrogate in an id must not crash the page
    return _esc(f"?{kind}=" + quote(str(ident), safe="", errors="replace"))


def _tip(text: str) -> str:
    return _esc(text if len(text) <= TIP_MAX else text[: TIP_MAX - 1] + "…")


def clip_text(text: object, columns: int) -> str:
    """*text* on one line in at most *columns* display columns (CJK counts two), ending in "…" if cut."""
    raw = str(text or "")
    # bound the work for a huge title: only the first columns*4 characters can ever be shown
    cut = len(raw) > columns * 4
    words = " ".join(raw[: columns * 4].split())
    widths = [2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in words]
    if not cut and sum(widths) <= columns:
        return words
    used = 0
    for index, width in enumerate(widths):
        if used + width > columns - 1:
            return words[:index] + "…"
        used += width
    return words + "…"


def _when(value: object) -> float | None:
    """Seconds since the epoch for an ISO 8601 string (naive means UTC), None if it does not parse."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        seconds = moment.timestamp()
    except (ValueError, OverflowError):
        return None
    # Years 1970-9000 only: near the calendar's ends the axis's padding would step outside it.
    return seconds if 0 <= seconds <= _LATEST else None


_LATEST = datetime(9000, 1, 1, tzinfo=UTC).timestamp()


def _stamp(seconds: float) -> str:
    """A moment in full, as the page writes times (a tooltip, an end of a line): UTC."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _axis_format(span: float) -> str:
    """One format for every tick of an axis *span* seconds long, as fine as the span needs:
    seconds for minutes, minutes for hours, the day with the time for days, the date beyond."""
    if span <= 600:
        return "%H:%M:%S"
    if span <= 86400:
        return "%H:%M"
    return "%m-%d %H:%M" if span <= 4 * 86400 else "%Y-%m-%d"


def _axis_dates(t0: float, t1: float, form: str) -> str:
    """The dates an axis whose ticks leave them out runs over, said once beside it (and UTC)."""
    if "%Y" in form:
        return "UTC"
    first, last = (datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d") for t in (t0, t1))
    return f"{first} UTC" if first == last else f"{first} – {last[5:] if first[:4] == last[:4] else last} UTC"


def _colour(status: str) -> str:
    return COLOURS.get(status.lower(), OTHER)


def _svg(height: float, label: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{_esc(clip_text(label, 200))}" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" width="{WIDTH}" height="{height:.0f}" '
        f'font-family="{FONT_FAMILY}" font-size="11" fill="{INK}">{"".join(body)}</svg>'
    )


def timeline_svg(attempts: list[dict[str, Any]], *, now: str | None = None, total: int | None = None) -> str:
    """A project's attempts as bars on a time axis, newest on top; "" when none has times that parse."""
    rows, skipped = [], 0
    for attempt in attempts:
        start, ended = _when(attempt.get("started_at")), attempt.get("ended_at")
        end = None if ended is None else _when(ended)
        if start is None or (ended is not None and end is None):
            skipped += 1  # one bad row must not cost the whole picture
            continue
        rows.append((start, end, attempt))
    if not rows:
        return ""
    latest = max(max(start, end or start) for start, end, _ in rows)
    stop = _when(now) if now is not None else None
    stop = latest if stop is None else stop
    shown = heapq.nlargest(ROWS_MAX, rows, key=lambda row: row[0])
    t0 = min(start for start, _, _ in shown)
    t1 = max(max(start, stop if end is None else end) for start, end, _ in shown)
    span = max(t1 - t0, 60.0)  # one attempt, or all at one instant, still gets an axis
    x0, x1, row_h = 236.0, WIDTH - 12.0, 18

    def x(seconds: float) -> float:
        return x0 + (x1 - x0) * (seconds - t0) / span

    body = []
    for index, (start, end, attempt) in enumerate(shown):
        y = 6 + index * row_h
        status = "running" if end is None else str(attempt.get("outcome") or "ended")
        colour = COLOURS["running"] if end is None else _colour(status)
        left, right = x(start), x(max(start, stop if end is None else end))
        who = " ".join(str(attempt.get(key)) for key in ("author", "model") if attempt.get(key)) or "unknown"
        tip = f"{attempt.get('id')}\nby {who}\n{_stamp(start)} → {'running' if end is None else _stamp(end)}\n{status}"
        body.append(
            f'<a href="{_href("attempt", attempt.get("id") or "")}">'
            f'<svg x="4" y="{y}" width="{x0 - 10:.0f}" height="{row_h}"><text y="12">'
            f'{_esc(clip_text(attempt.get("id"), 22))} <tspan fill="{colour}">{_esc(clip_text(status, 10))}</tspan>'
            "</text></svg>"
            f'<rect x="{min(left, x1 - 3):.1f}" y="{y + 3}" width="{max(right - left, 3):.1f}" height="12" rx="2" '
            f'fill="{colour}"><title>{_tip(tip)}</title></rect></a>'
        )
    axis = 6 + len(shown) * row_h + 4
    body.append(f'<line x1="{x0}" y1="{axis}" x2="{x1}" y2="{axis}" stroke="{FAINT}"/>')
    # Four ticks in one format; the date they leave out is said once, under the row labels.
    form = _axis_format(span)
    for tick in range(4):
        at = x0 + (x1 - x0) * tick / 3
        anchor = "start" if tick == 0 else "end" if tick == 3 else "middle"
        label = datetime.fromtimestamp(t0 + span * tick / 3, UTC).strftime(form)
        body.append(f'<line x1="{at:.1f}" y1="{axis}" x2="{at:.1f}" y2="{axis + 4}" stroke="{FAINT}"/>')
        body.append(f'<text x="{at:.1f}" y="{axis + 16}" text-anchor="{anchor}" fill="{FAINT}">{label}</text>')
    body.append(f'<text x="4" y="{axis + 16}" fill="{FAINT}">{_esc(_axis_dates(t0, t0 + span, form))}</text>')
    # *total*: how many the project has, when the caller passed only the newest of them.
    count = max(len(rows), total or 0)
    notes = [f"+{count - len(shown)} more"] if count > len(shown) else []
    notes += [f"{skipped} with unreadable times not shown"] if skipped else []
    if notes:
        body.append(f'<text x="4" y="{axis + 34}">{_esc(", ".join(notes))}</text>')
    return _svg(axis + (42 if notes else 24), f"Timeline of {count} attempts", body)


def _arrow(x1: float, y1: float, x2: float, y2: float) -> str:
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    bx, by = x2 - 7 * ux, y2 - 7 * uy
    head = f"{x2:.1f},{y2:.1f} {bx - 3.5 * uy:.1f},{by + 3.5 * ux:.1f} {bx + 3.5 * uy:.1f},{by - 3.5 * ux:.1f}"
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{bx:.1f}" y2="{by:.1f}" stroke="{FAINT}"/>'
        f'<polygon points="{head}" fill="{FAINT}"/>'
    )


def _width(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def wrap_text(text: object, columns: int, lines: int) -> list[str]:
    """*text* on at most *lines* lines of *columns* display columns each (CJK counts two),
    broken at a space where one is near, the last line ending in "…" if the text goes on."""
    rest = " ".join(str(text or "")[: columns * lines * 4].split())
    out: list[str] = []
    while rest and len(out) < lines - 1:
        used, cut = 0, len(rest)
        for index, ch in enumerate(rest):
            if used + _width(ch) > columns:
                cut = index
                break
            used += _width(ch)
        if cut == len(rest):
            break
        space = rest.rfind(" ", 0, cut + 1)
        cut = space if space > columns // 2 else cut  # a long word is broken where the line ends
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        out.append(clip_text(rest if len(str(text or "")) <= columns * lines * 4 else rest + "…", columns))
    return out


_NODE_LINES = 3  # of a title, in a node of the graph
_NODE_H = 8 + 14 * _NODE_LINES


def _node(x: float, y: float, note: dict[str, Any], *, link: bool) -> str:
    title = str(note.get("title") or note.get("id") or "")
    tip = "\n".join(str(part) for part in (title, note.get("kind"), note.get("id")) if part)
    lines = wrap_text(title, 26 if not link else 28, _NODE_LINES)
    top = (_NODE_H - 14 * (len(lines) - 1)) / 2 + 4  # the lines in the middle of the box
    texts = "".join(f'<text y="{top + 14 * n:.0f}">{_esc(line)}</text>' for n, line in enumerate(lines))
    stroke = INK if not link else FAINT
    box = (
        f"<title>{_tip(tip)}</title>"
        f'<rect x="{x}" y="{y}" width="190" height="{_NODE_H}" rx="4" fill="{BOX}" stroke="{stroke}"/>'
        # a nested <svg> clips without an id: a run of wide Latin letters still cannot leave the box
        f'<svg x="{x + 8}" y="{y}" width="174" height="{_NODE_H}">{texts}</svg>'
    )
    return f'<a href="{_href("note", note.get("id") or "")}">{box}</a>' if link else f'<g font-weight="bold">{box}</g>'


def graph_svg(note: dict[str, Any], builds_on: list[dict[str, Any]], built_by: list[dict[str, Any]]) -> str:
    """What *note* builds on (left), the note (middle), what builds on it (right); "" when both are empty."""
    if not builds_on and not built_by:
        return ""
    left, right = builds_on[:NODES_MAX], built_by[:NODES_MAX]
    step, top, half = _NODE_H + 8, 24, _NODE_H / 2
    rows = max(len(left), len(right))
    mid_y = top + (rows - 1) * step / 2
    body = [
        f'<text x="{x}" y="14" fill="{FAINT}">{label}</text>'
        for x, label in ((8, "builds on"), (225, "this note"), (442, "built on by"))
    ]
    for index, item in enumerate(left):
        y = top + index * step
        body.append(_arrow(225, mid_y + half, 198, y + half) + _node(8, y, item, link=True))
    for index, item in enumerate(right):
        y = top + index * step
        body.append(_arrow(442, y + half, 415, mid_y + half) + _node(442, y, item, link=True))
    body.append(_node(225, mid_y, note, link=False))
    more = False
    for x, items, shown in ((8, builds_on, left), (442, built_by, right)):
        if len(items) > len(shown):
            more = True
            body.append(f'<text x="{x + 8}" y="{top + len(shown) * step + 14}">+{len(items) - len(shown)} more</text>')
    title = clip_text(note.get("title") or note.get("id"), 80)
    return _svg(top + rows * step + (20 if more else 0), f"What {title} builds on and what builds on it", body)


def _marks(items: list[dict[str, Any]], when: str, ident: str) -> tuple[list[tuple[float, str, str]], int]:
    """The newest MARKS_MAX items whose time parses, oldest first, and how many more there are."""
    valid = []
    for item in items:
        seconds = _when(item.get(when))
        if seconds is not None:
            valid.append((seconds, str(item.get(ident) or ""), str(item.get("title") or item.get(ident) or "")))
    return sorted(heapq.nlargest(MARKS_MAX, valid, key=lambda mark: mark[0])), max(len(valid) - MARKS_MAX, 0)


def attempt_svg(
    attempt: dict[str, Any], notes: list[dict[str, Any]], reads: list[dict[str, Any]], *, now: str | None = None
) -> str:
    """An attempt's time line: notes written above it, notes read below, the outcome at its end.

    A running attempt (``ended_at`` None) is drawn to *now*, or to its last event. "" when no time parses.
    """
    written, written_more = _marks(notes, "created_at", "id")
    read, read_more = _marks(reads, "at", "note")
    start, ended = _when(attempt.get("started_at")), attempt.get("ended_at")
    end = None if ended is None else _when(ended)
    events = [mark[0] for mark in written + read]
    if start is None and end is None and not events:
        return ""
    t0 = start if start is not None else min(events + [end or math.inf])
    stop = _when(now) if ended is None and now is not None else None
    t1 = end if end is not None else max(events + [t0] + ([stop] if stop is not None else []))
    span = max(t1 - t0, 1.0)
    status = "running" if ended is None else str(attempt.get("outcome") or "ended")
    colour = COLOURS["running"] if ended is None else _colour(status)
    x0, x1, line_y = 16.0, 540.0, 80

    def x(seconds: float) -> float:
        # a note stamped a moment after the end still belongs on the line
        return x0 + (x1 - x0) * min(max((seconds - t0) / span, 0.0), 1.0)

    body = [
        # The legend at the bottom, between the two times: the labels above the line may reach the top.
        f'<text x="{(x0 + x1) / 2:.0f}" y="162" text-anchor="middle" fill="{FAINT}">'
        "● written above, ○ read below</text>",
        f'<line x1="{x0}" y1="{line_y}" x2="{x1}" y2="{line_y}" stroke="{colour}" stroke-width="3"/>',
        f'<text x="{x1 + 8}" y="{line_y + 4}" fill="{colour}" font-weight="bold">{_esc(clip_text(status, 12))}</text>',
        f'<text x="{x0}" y="162" fill="{FAINT}">{_stamp(t0)}</text>',
        f'<text x="{x1}" y="162" text-anchor="end" fill="{FAINT}">{_stamp(t1)}</text>',
    ]
    for marks, above, verb in ((written, True, "written"), (read, False, "read")):
        sign = -1 if above else 1
        for index, (seconds, ident, title) in enumerate(marks):
            at = x(seconds)
            fill = colour if above else "#ffffff"
            label = ""
            if len(marks) <= 8:  # more labels than this would only overlap; the tooltips still say it all
                lane = line_y + sign * (32 + 13 * (index % 3)) + (0 if above else 8)
                label = (
                    f'<text x="{min(max(at, 50), WIDTH - 110):.1f}" y="{lane}" text-anchor="middle" font-size="10">'
                    f"{_esc(clip_text(title, 16))}</text>"
                )
            tip = "\n".join(dict.fromkeys((title, ident, f"{verb} {_stamp(seconds)}")))
            body.append(
                f'<a href="{_href("note", ident)}"><title>{_tip(tip)}</title>'
                f'<line x1="{at:.1f}" y1="{line_y}" x2="{at:.1f}" y2="{line_y + sign * 15}" stroke="{FAINT}"/>'
                f'<circle cx="{at:.1f}" cy="{line_y + sign * 20}" r="5" fill="{fill}" stroke="{colour}"/>{label}</a>'
            )
    more = [f"+{n} more {verb}" for n, verb in ((written_more, "written"), (read_more, "read")) if n]
    if more:
        body.append(f'<text x="{WIDTH - 8}" y="14" text-anchor="end">{_esc(", ".join(more))}</text>')
    label = f"Attempt {attempt.get('id')}: {len(written) + written_more} notes written, {len(read) + read_more} read"
    return _svg(170, f"{label}, {status}", body)
