"""Markdown to HTML for the web page, safe for untrusted note text, in bounded time.

CommonMark with tables and strikethrough; raw HTML in a note is escaped (shown as text,
never parsed), and links and images whose URL is ``javascript:``, ``vbscript:``, ``file:``
or a non-image ``data:`` are left as text (markdown-it's link validation).

markdown-it is linear, but its cost is in the syntax, not the length: 4-24 µs for each
character that is not a letter, digit or blank, against 0.02 µs for plain prose, so a body of
nothing but ``![`` took 4 s at 200,000 characters. A body over :data:`SYNTAX_MAX` such
characters (or :data:`RENDER_MAX` characters in all) is shown as plain text instead, which
bounds a render to about half a second here; the README of the time, 93 KB, held 6,200 of them. A
rendered body is kept (by its text's digest, so an edit is never shown stale) up to
:data:`CACHE_BYTES` of HTML, and one body renders at a time, in a worker process for a server,
so renders queue behind each other and never hold the interpreter from the searches.
"""

from __future__ import annotations

import hashlib
import html
import multiprocessing
import re
import threading
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import lru_cache
from typing import Any

from ....errors import UnavailableError

__all__ = [
    "CACHE_BYTES",
    "CELLS_MAX",
    "COPIES_MAX",
    "RENDER_MAX",
    "RENDER_SECONDS",
    "SYNTAX_MAX",
    "reference_copies",
    "render_markdown",
    "syntax_count",
    "table_cells",
]

RENDER_MAX = 200_000  # characters
SYNTAX_MAX = 20_000  # characters that are neither word characters nor blanks (a newline counts)
# markdown-it fills every row of a table out to its header's width: 22 tables of 181 columns by
# 363 one-cell rows (32 KB, under SYNTAX_MAX) made 1.4 million cells, 14.6 MB of HTML and 21 s.
CELLS_MAX = 20_000
# A link reference definition is copied into every link that uses it: one 90,000-letter URL and
# title used by 10,000 "[a]" made 849 MB of HTML. Definitions' length times the "[" that may use
# them stays under this.
COPIES_MAX = 2_000_000
CACHE_BYTES = 16 * 1024 * 1024  # of rendered HTML kept, newest used last out
RENDER_SECONDS = 10.0  # a render in the worker taking longer is given up (the caps keep it under 1 s)

_SYNTAX = re.compile(r"[^\w \u00a0\u3000]")
_RULE = re.compile(r"[ \t|:-]+")  # a table's delimiter row
# What a table may sit in: blockquote markers and list items, nested (a table in "> " was not counted).
_CONTAINER = re.compile(r"^(?:[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])))*[ \t]*")
_DEFINITION = re.compile(r"^ {0,3}\[[^\n]*\]:.*$", re.M)  # a line that may open a link reference definition
_render_turn = threading.Lock()
_cache_lock = threading.Lock()
_cache: OrderedDict[bytes, str] = OrderedDict()
_sizes: dict[bytes, int] = {}  # bytes of each kept HTML
_cached_bytes = 0
_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


@lru_cache(maxsize=1)
def _renderer() -> Any:
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        raise UnavailableError(
            "the web page needs the 'server' extra: pip install '.[server]' in notewell's clone"
        ) from None
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    return md.enable(["table", "strikethrough"])


def syntax_count(text: str) -> int:
    """How many characters of *text* Markdown may read as syntax (what a render costs)."""
    return len(text) - len(_SYNTAX.sub("", text))


def _plain(text: str, why: str) -> str:
    return f'<p class="plain">(shown as plain text: {why})</p><pre>{html.escape(text)}</pre>'


def _render(text: str) -> str:
    if len(text) > RENDER_MAX:
        return _plain(text, f"{len(text):,} characters")
    syntax = syntax_count(text)
    if syntax > SYNTAX_MAX:
        return _plain(text, f"{syntax:,} characters of Markdown syntax, over {SYNTAX_MAX:,}")
    cells = table_cells(text)
    if cells > CELLS_MAX:
        return _plain(text, f"tables of {cells:,} cells, over {CELLS_MAX:,}")
    copies = reference_copies(text)
    if copies > COPIES_MAX:
        return _plain(text, "link references that would be copied too many times")
    return str(_renderer().render(text))


def table_cells(text: str) -> int:
    """At most how many cells the tables of *text* can make: for each header line followed by
    a delimiter row (``|---|---|``), the header's columns times the lines up to the next blank
    one (each row is filled out to the header's width, a row of one cell too). Lines are read
    without the blockquote and list markers they may sit in (``> a|b``)."""
    lines = [_CONTAINER.sub("", line, count=1) for line in text.split("\n")]
    cells = 0
    i = 0
    while i + 1 < len(lines):
        header, rule = lines[i], lines[i + 1]
        if "|" in header and "-" in rule and _RULE.fullmatch(rule):
            width = header.count("|") + 1
            j = i + 2
            while j < len(lines) and lines[j].strip():
                j += 1
            cells += width * (j - i - 1)
            i = j
            continue
        i += 1
    return cells


def reference_copies(text: str) -> int:
    """How many characters link reference definitions could put into the HTML at most: the
    longest definition (with the line after it, where a title may go) once per "[" of the text."""
    if "]:" not in text:
        return 0
    longest = 0
    for match in _DEFINITION.finditer(text):
        end = text.find("\n", match.end() + 1)
        longest = max(longest, (len(text) if end < 0 else end) - match.start())
    return longest * text.count("[") if longest else 0


def _worker() -> ProcessPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            # Spawned, not forked: the server has threads (and their locks) a fork would copy.
            _pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        return _pool


def _isolated(text: str) -> str:
    """_render in a process of its own: markdown-it is pure Python, and on a thread of the
    server its 0.4 s of a heavy page held the interpreter's lock from every other request
    (other clients' search p95 went from 22 ms to 808 ms beside one client rendering). A
    render past RENDER_SECONDS, or one whose worker died, is shown as plain text (never done
    again in the server) and the worker replaced."""
    global _pool
    try:
        pool = _worker()
    except (OSError, RuntimeError):  # no processes here (a sandbox): on this thread, then
        return _render(text)
    try:
        return str(pool.submit(_render, text).result(timeout=RENDER_SECONDS))
    except (BrokenProcessPool, OSError, RuntimeError, TimeoutError):
        with _pool_lock:
            if _pool is pool:
                _pool = None
        for process in list(getattr(pool, "_processes", {}).values()):  # a render stuck in it
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        return _plain(text, "it could not be rendered in time")


def render_markdown(text: str, *, isolated: bool = False, note: str = "") -> str:
    """The HTML of *text* (a note's body without its header): Markdown, or plain text when
    rendering it would cost too much (see the module's docstring). *isolated*: rendered in a
    worker process (for a server, so that a render never slows its other requests). *note*:
    the note and revision the text is of, kept apart in the cache, so that how fast a page
    comes never tells one viewer that another's note holds the same text."""
    global _cached_bytes
    key = hashlib.sha256(note.encode("utf-8", "surrogatepass") + b"\0" + text.encode("utf-8", "surrogatepass")).digest()
    with _cache_lock:
        if (hit := _cache.get(key)) is not None:
            _cache.move_to_end(key)
            return hit
    with _render_turn:
        with _cache_lock:  # rendered by the request ahead of this one meanwhile
            if (hit := _cache.get(key)) is not None:
                return hit
        made = _isolated(text) if isolated else _render(text)
    size = len(made) if made.isascii() else len(made.encode("utf-8"))
    if size <= CACHE_BYTES // 4:
        with _cache_lock:
            if key not in _cache:
                _cache[key] = made
                _sizes[key] = size
                _cached_bytes += size
            while _cached_bytes > CACHE_BYTES:
                old, _dropped = _cache.popitem(last=False)
                _cached_bytes -= _sizes.pop(old)
    return made
