"""How the commands print notes and cards: as text, or with ``--json`` as the API's shapes."""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["emit_json", "notice", "print_cards", "print_note", "score_text"]


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def notice(line: str) -> None:
    """Say *line* to the person on stderr (stdout stays the answer alone, for scripts). It starts
    a line of its own even where a tool shows stderr straight after stdout with the last line
    break taken off, as agents' shell tools do (``…with add_note.(export NOTEWELL_ATTEMPT=…)``):
    where stderr is not a terminal, a line break comes first."""
    stream = sys.stderr
    lead = "" if stream.isatty() else "\n"
    print(lead + line, file=stream, flush=True)


def score_text(score: float) -> str:
    """A score as the text output shows it: two decimals, and ``<0.01`` for one that would
    read as 0 (a word every note holds scores 1e-06 in BM25: still a match). JSON keeps the
    number whole."""
    return "<0.01" if abs(score) < 0.005 else f"{score:.2f}"


def _card_lines(card: dict[str, Any]) -> list[str]:
    chips = []
    if card["kind"]:
        chips.append(f"[{card['kind']}]")
    chips.extend(f"#{t}" for t in card["tags"])
    meta = [m for m in (card["author"], card["model"]) if m]
    if card["attempt_id"]:
        ended = f", {card['attempt_outcome']}" if card["attempt_outcome"] else ", running"
        kind = " summary" if card["note_kind"] == "summary" else ""
        meta.append(f"{card['project']}/{card['attempt_id']}{ended}{kind}")
    meta.append(f"updated {card['updated_at'][:16].replace('T', ' ')}")
    if card["score"] is not None:
        meta.append(f"score {score_text(card['score'])}")
    if card.get("matched_revision") is not None:
        meta.append(f"matched in revision {card['matched_revision']}")
    if card["builds_on"]:
        meta.append("builds on " + ", ".join(card["builds_on"]))
    if card.get("superseded_by"):
        meta.append("superseded by " + ", ".join(card["superseded_by"]))
    lines = [f"{card['id']}  {card['title']}" + ("  " + " ".join(chips) if chips else "")]
    lines.append("    " + " · ".join(meta))
    if card["snippet"]:
        lines.append("    " + card["snippet"])
    return lines


def print_cards(cards: list[dict[str, Any]], as_json: bool, empty: str) -> None:
    """*cards* as text, or as JSON in the API's shape: ``{"cards": [...]}``, as HTTP and MCP
    answer (an object, so that an answer can carry more than its cards)."""
    if as_json:
        emit_json({"cards": cards})
        return
    if not cards:
        print(empty)
        return
    for i, card in enumerate(cards):
        if i:
            print()
        print("\n".join(_card_lines(card)))


def print_note(note: dict[str, Any], as_json: bool, raw: bool) -> None:
    if as_json:
        emit_json(note)
        return
    if raw:
        sys.stdout.write(note["text"])
        return
    print(f"{note['id']}  {note['title']}")
    chips = [f"kind: {note['kind']}"] if note["kind"] else []
    if note["tags"]:
        chips.append("tags: " + ", ".join(note["tags"]))
    chips.extend(f"{k}: {note[k]}" for k in ("author", "model") if note[k])
    chips.append(f"revision {note['revision']}/{note['revisions']}")
    age = f" ({note['age']})" if note.get("age") else ""
    chips.append(f"updated {note['updated_at'][:19].replace('T', ' ')}{age}")
    print(" · ".join(chips))
    attempt = note.get("attempt")
    if attempt:
        state = f"ended {attempt['outcome'] or ''}, frozen".replace(" ,", ",") if attempt.get("ended_at") else "running"
        print(f"on attempt {attempt['id']} of {attempt['project']} ({state})")
    if note["summary"]:
        print(f"summary: {note['summary']}")
    if note["builds_on"]:
        print("builds on: " + ", ".join(note["builds_on"]))
    if note["backlinks"]:
        print("built on by: " + ", ".join(f"{b['id']} ({b['title']})" for b in note["backlinks"]))
    if note.get("supersedes"):
        print("supersedes: " + ", ".join(note["supersedes"]))
    if note.get("superseded_by"):
        print("superseded by: " + ", ".join(note["superseded_by"]) + " (read that first)")
    for line in note["extra"]:
        print(f"extra: {line}")
    print("─" * 40)
    body = note["body"]
    sys.stdout.write(body if body.endswith("\n") or not body else body + "\n")
