"""Markdown to HTML for the web page, safe for untrusted note text.

CommonMark with tables and strikethrough; raw HTML in a note is escaped (shown as text,
never parsed), and links and images whose URL is ``javascript:``, ``vbscript:``, ``file:``
or a non-image ``data:`` are left as text (markdown-it's link validation).
"""

from __future__ import annotations

import html
from functools import lru_cache
from typing import Any

from ...errors import UnavailableError

__all__ = ["render_markdown"]


@lru_cache(maxsize=1)
def _renderer() -> Any:
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        raise UnavailableError("the web page needs the 'server' extra: pip install 'notewell[server]'") from None
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    return md.enable(["table", "strikethrough"])


RENDER_MAX = 200_000  # characters; markdown-it takes seconds on a hostile megabyte (45 s on 1 MiB of "[")


def render_markdown(text: str) -> str:
    """The HTML of *text* (a note's body without its header); a body over RENDER_MAX
    characters is shown as plain text instead."""
    if len(text) > RENDER_MAX:
        return f'<p class="plain">(shown as plain text: {len(text):,} characters)</p><pre>{html.escape(text)}</pre>'
    return _renderer().render(text)
