"""Markdown to HTML for the web page, safe for untrusted note text, in bounded time.

CommonMark with tables and strikethrough; raw HTML in a note is escaped (shown as text,
never parsed), and links and images whose URL is ``javascript:``, ``vbscript:``, ``file:``
or a non-image ``data:`` are left as text (markdown-it's link validation).

markdown-it is linear, but its cost is in the syntax, not the length: 4-24 µs for each
character that is not a letter, digit or blank, against 0.02 µs for plain prose, so a body of
nothing but ``![`` took 4 s at 200,000 characters. A body over :data:`SYNTAX_MAX` such
characters (or :data:`RENDER_MAX` characters in all) is shown as plain text instead, which
bounds a render to about half a second here; this README, 93 KB, holds 6,200 of them. A
rendered body is kept (by its text's digest, so an edit is never shown stale) up to
:data:`CACHE_BYTES` of HTML, and one body renders at a time, so renders queue behind each
other instead of taking every core from the searches.
"""

from __future__ import annotations

import hashlib
import html
import re
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Any

from ...errors import UnavailableError

__all__ = ["CACHE_BYTES", "RENDER_MAX", "SYNTAX_MAX", "render_markdown", "syntax_count"]

RENDER_MAX = 200_000  # characters
SYNTAX_MAX = 20_000  # characters that are neither word characters nor blanks (a newline counts)
CACHE_BYTES = 16 * 1024 * 1024  # of rendered HTML kept, newest used last out

_SYNTAX = re.compile(r"[^\w \u00a0\u3000]")
_render_turn = threading.Lock()
_cache_lock = threading.Lock()
_cache: OrderedDict[bytes, str] = OrderedDict()
_cached_bytes = 0


@lru_cache(maxsize=1)
def _renderer() -> Any:
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        raise UnavailableError("the web page needs the 'server' extra: pip install 'notewell[server]'") from None
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
    return str(_renderer().render(text))


def render_markdown(text: str) -> str:
    """The HTML of *text* (a note's body without its header): Markdown, or plain text when
    rendering it would cost too much (see the module's docstring)."""
    global _cached_bytes
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    with _cache_lock:
        if (hit := _cache.get(key)) is not None:
            _cache.move_to_end(key)
            return hit
    with _render_turn:
        with _cache_lock:  # rendered by the request ahead of this one meanwhile
            if (hit := _cache.get(key)) is not None:
                return hit
        made = _render(text)
    size = len(made)
    if size <= CACHE_BYTES // 4:
        with _cache_lock:
            if key not in _cache:
                _cache[key] = made
                _cached_bytes += size
            while _cached_bytes > CACHE_BYTES:
                _old, dropped = _cache.popitem(last=False)
                _cached_bytes -= len(dropped)
    return made
