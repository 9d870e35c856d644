"""A progress report written out: Markdown, or a standalone HTML page in the web page's colours
(its own style inside, nothing loaded from elsewhere, every text from a note escaped).

Each line cites its note by id, title and date (a superseded note's line its corrections too); in
HTML the id links to the page's view of the note (``/?note=ID``, under *base_url* when the file is
read away from the server). An optional *summary* (a model's paragraph) goes on top, marked as
generated.
"""

from __future__ import annotations

import html
import re
import unicodedata

from ..errors import InvalidArgumentError
from ..model.ids import ATTEMPT_ID_RE
from .reports import Report, ReportLine, SupersededLine

__all__ = ["BASE_URL_PATTERN", "FORMATS", "check_base_url", "render_html", "render_markdown", "render_report"]

FORMATS = ("md", "html")
SECTIONS = (
    ("done", "Done"),
    ("open", "Open blockers and actions"),
    ("decisions", "Decisions"),
    ("ruled_out", "Tried and ruled out"),
    ("superseded", "Superseded"),
)
# What Markdown would read as markup in a title: escaped with a backslash (CommonMark).
_MARKUP = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|~&"})
_EMPTY = "None."
# A server's address, and a path under it: nothing a link could be made to break out of.
BASE_URL_PATTERN = r"https?://[A-Za-z0-9.\-\[\]:]+(?:/[A-Za-z0-9._~\-/%]*)?"
_BASE_URL = re.compile(BASE_URL_PATTERN)


def _one_line(text: str) -> str:
    """*text* on one line, control characters (a terminal's escapes among them) made spaces."""
    if text.isprintable():  # the common case, in C; the rest is looked at character by character
        return text.strip()
    return "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in text).strip()


def _md(text: str | None) -> str:
    return _one_line(text or "").translate(_MARKUP)


def _code(slug: str) -> str:
    """A kind or a project (slugs: no backtick, so nothing can end the span early) as code."""
    return f"`{slug}`" if slug and "`" not in slug and slug.isprintable() else _md(slug)


def _when(stamp: str) -> str:
    """``2026-12-01T14:05:09.123456Z`` as ``2026-12-01 14:05``."""
    return stamp[:16].replace("T", " ")


def _heading(report: Report) -> tuple[str, str]:
    what = f"project {report.project}" if report.project else "all projects"
    end = f"{_when(report.until)} UTC" if report.until_given else "now"
    return f"Progress report: {what}", f"Notes written from {_when(report.since)} UTC to {end}."


def _meta(line: ReportLine, whole_store: bool) -> list[str]:
    parts = [line.kind or "note"]
    if whole_store and line.project:
        parts.append(line.project)
    if line.author:
        parts.append(f"by {line.author}")
    return parts


def _notes(count: int, what: str = "note") -> str:
    return f"{count:,} {what}{'' if count == 1 else 's'}"


def _others(report: Report) -> str:
    if not report.written:
        return "No notes written in the window."
    rest = sum(c for _, c in report.other_kinds)
    said = ", ".join(f"{c:,} {k or 'without a kind'}" for k, c in report.other_kinds)
    tail = f": {_notes(rest, 'other note')} ({said})." if rest else "; each is listed above."
    return f"{_notes(report.written)} written in the window{tail}"


def render_markdown(report: Report, *, summary: str | None = None, model: str | None = None) -> str:
    """The report as Markdown: a heading, the window, then one list per section."""
    title, window = _heading(report)
    out = [f"# {_md(title)}", "", window, ""]
    if summary:
        said = f"by the chat model {_md(model or 'configured')}; the lists below are the record"
        out += [f"> **Generated summary** ({said}): {_md(summary)}", ""]
    for key, heading in SECTIONS:
        lines: list[ReportLine] = getattr(report, key)
        out += [f"## {heading}", ""]
        if not lines:
            out += [_EMPTY, ""]
            continue
        for line in lines:
            cite = f"`{line.ref}`" + (f", note `{line.note_id}`" if line.note_id and line.note_id != line.ref else "")
            kind, *rest = _meta(line, report.project is None)
            meta = " · ".join([_code(kind), *(_code(m) if m == line.project else _md(m) for m in rest)])
            out.append(f"- {_when(line.date)} · **{_md(line.title)}** · {cite} · {meta}{_md_fixes(line)}")
        out.append("")
    out += ["## In numbers", "", _md(_others(report)), ""]
    return "\n".join(out)


def _md_fixes(line: ReportLine) -> str:
    """A superseded note's corrections, after its line: each one's title, id and date."""
    if not isinstance(line, SupersededLine):
        return ""
    fixes = (f"**{_md(fix.title)}** `{fix.ref}` ({_when(fix.date)})" for fix in line.superseded_by)
    return " · superseded by " + ", ".join(fixes)


def check_base_url(base_url: str | None) -> str:
    """*base_url* (where the page is served, for the report's links) without its last slash;
    None: links relative to the server the report is read on."""
    if base_url is None:
        return ""
    if _BASE_URL.fullmatch(base_url) is None:
        raise InvalidArgumentError(f"base_url must be http(s)://host[:port], got {base_url[:80]!r}")
    return base_url.rstrip("/")


_STYLE = """
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --subtle: #f6f8fa; --accent: #0969da;
  --chip: #eef1f4; --kind: #ddf4ff; --kind-fg: #0550ae;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.55 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC",
  "PingFang SC", "Microsoft YaHei", sans-serif; color: var(--fg); background: #fff; }
header.top { padding: .45rem 1.5rem; background: var(--subtle); border-bottom: 1px solid var(--line);
  font-weight: 700; }
main { max-width: 74rem; margin: 0 auto; padding: 1rem 1.5rem 2rem; }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
h1 { font-size: 1.6rem; font-weight: 600; margin: .2rem 0 .35rem; overflow-wrap: anywhere; }
h2 { font-size: 1rem; font-weight: 600; margin: 1.4rem 0 .4rem; }
.muted, .meta { color: var(--muted); } .meta { font-size: .84rem; }
ul.plain { list-style: none; margin: 0; padding: 0; }
ul.plain li { padding: .35rem 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.chip { display: inline-block; padding: .05rem .5rem; border-radius: 999px; background: var(--chip); font-size: .8rem; }
.chip.kind { background: var(--kind); color: var(--kind-fg); }
code { font: .84rem var(--mono); }
.summary { margin: .8rem 0; padding: .5rem .8rem; border-left: 3px solid var(--accent); background: var(--subtle); }
"""
# Opened from a file or served, the page runs nothing and loads nothing.
POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def _href(base: str, ref: str) -> str:
    # Ids are [0-9a-z_] only (model/ids.py): nothing in one needs quoting in a URL.
    key = "attempt" if ATTEMPT_ID_RE.fullmatch(ref) else "note"
    return f"{base}/?{key}={ref}"


def _html_line(line: ReportLine, base: str, whole_store: bool) -> str:
    e = html.escape
    cite = f'<a href="{e(_href(base, line.ref))}"><code>{e(line.ref)}</code></a>'
    if line.note_id and line.note_id != line.ref:
        cite += f' · note <a href="{e(_href(base, line.note_id))}"><code>{e(line.note_id)}</code></a>'
    kind, *rest = _meta(line, whole_store)
    meta = " · ".join(e(_one_line(m)) for m in rest)
    return (
        f'<li><a href="{e(_href(base, line.note_id or line.ref))}">{e(_one_line(line.title))}</a> '
        f'<span class="chip kind">{e(_one_line(kind))}</span>'
        f'<div class="meta">{e(_when(line.date))} · {cite}{" · " + meta if meta else ""}{_html_fixes(line, base)}</div>'
        "</li>"
    )


def _html_fixes(line: ReportLine, base: str) -> str:
    if not isinstance(line, SupersededLine):
        return ""
    e = html.escape
    links = ((e(_href(base, fix.ref)), fix) for fix in line.superseded_by)
    fixes = (
        f'<a href="{href}">{e(_one_line(fix.title))}</a> <a href="{href}"><code>{e(fix.ref)}</code></a> '
        f"({e(_when(fix.date))})"
        for href, fix in links
    )
    return " · superseded by " + ", ".join(fixes)


def render_html(
    report: Report, *, summary: str | None = None, model: str | None = None, base_url: str | None = None
) -> str:
    """The report as one standalone HTML page, styled like the web page."""
    e = html.escape
    base = check_base_url(base_url)
    title, window = _heading(report)
    body = [f"<h1>{e(title)}</h1>", f'<p class="muted">{e(window)}</p>']
    if summary:
        body.append(
            f'<div class="summary"><strong>Generated summary</strong> <span class="meta">(by the chat model '
            f"{e(_one_line(model or 'configured'))}; the lists below are the record)</span>"
            f"<p>{e(_one_line(summary))}</p></div>"
        )
    for key, heading in SECTIONS:
        lines: list[ReportLine] = getattr(report, key)
        body.append(f"<h2>{e(heading)}</h2>")
        if not lines:
            body.append(f'<p class="muted">{e(_EMPTY)}</p>')
            continue
        items = "\n".join(_html_line(line, base, report.project is None) for line in lines)
        body.append(f'<ul class="plain">\n{items}\n</ul>')
    body += ["<h2>In numbers</h2>", f"<p>{e(_others(report))}</p>"]
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        '<header class="top">notewell</header>\n<main>\n' + "\n".join(body) + "\n</main>\n</body>\n</html>\n"
    )


def render_report(
    report: Report,
    fmt: str = "md",
    *,
    summary: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
) -> str:
    """The report in *fmt*, ``md`` or ``html``."""
    if fmt == "md":
        return render_markdown(report, summary=summary, model=model)
    if fmt == "html":
        return render_html(report, summary=summary, model=model, base_url=base_url)
    raise InvalidArgumentError(f"format must be one of {', '.join(FORMATS)}, got {str(fmt)[:40]!r}")
