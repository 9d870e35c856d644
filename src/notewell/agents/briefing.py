"""What an agent should read first when a session starts: a question-less pack of the notes.

``Briefing(store, config).build(intro)`` gathers the newest digest, the open blockers and
actions and the most recent notes (within ``config.filters``, a project for example), and packs
them under ``config.budget`` tokens with the context builder's own scoring and shortening, each
note cited by its id. The whole text is counted, headings and intro included.
"""

from __future__ import annotations

from datetime import UTC, datetime

from .context import NOTES_ARE_DATA, ContextBuilder, ContextPacket, note_packet

__all__ = ["Briefing", "BriefingText"]

_DIGEST_RELEVANCE = 1.0  # the digest is the one thing to read first
_RECENT_RELEVANCE = 0.3  # the recent stream, newest first; recency does the rest of the ordering


class BriefingText:
    """The packed briefing: its ``text``, its token count and the ids it cites."""

    def __init__(self, text: str, tokens: int, budget: int, cited: list[str], left_out: int) -> None:
        self.text = text
        self.tokens = tokens
        self.budget = budget
        self.cited = cited
        self.left_out = left_out  # notes gathered that did not fit, whole or shortened


class Briefing(ContextBuilder):
    """The start-of-session pack: digest, open blockers and actions, recent notes."""

    SECTIONS = {
        "digest": "[Newest digest]",
        "open": "[Open blockers and actions]",
        "recent": "[Recent notes]",
    }

    def gather(self, recent: int) -> list[ContextPacket]:
        """The newest digest, the open blockers and actions, then up to *recent* other notes."""
        if self.store is None:
            return []
        filters = self.config.filters
        packets: list[ContextPacket] = []
        # A superseded note (a later note corrects it) is left out: its correction is what to read.
        digests = [c for c in self.store.list_notes(limit=10, **{**filters, "kind": "digest"}) if not c.superseded_by]
        for card in digests[:1]:
            packets.append(note_packet(self.store.get_note(card.id), relevance=_DIGEST_RELEVANCE, section="digest"))
        opened, _ = self.gather_notes("")  # with no question: the open blockers and actions only
        packets += opened
        taken = {p.source for p in packets}
        # A few more than wanted, as superseded notes are skipped.
        for card in self.store.list_notes(limit=min(recent + len(taken) + 25, 1000), **filters):
            if card.id in taken or card.superseded_by or len(packets) - len(taken) >= recent:
                continue
            note = self.store.get_note(card.id)
            packets.append(
                note_packet(note, relevance=_RECENT_RELEVANCE, section="recent", closed_tags=self.config.closed_tags)
            )
        return packets

    def build(  # type: ignore[override]
        self, intro: str, *, recent: int = 8, outro: str = "", now: datetime | None = None
    ) -> BriefingText:
        """The briefing within ``config.budget`` tokens: *intro* first, *outro* last, and the
        notes that fit between them."""
        now = now or datetime.now(UTC)
        unique = self.unique(self.gather(recent))

        def render(chosen: list[tuple[ContextPacket, int | None, float]]) -> list[dict[str, str]]:
            parts = [intro.strip()]
            if any(p.source for p in unique):  # counted in the base too: notes may come
                parts.append(NOTES_ARE_DATA)
            for section, heading in self.SECTIONS.items():
                items = [(p, n, s) for p, n, s in chosen if p.section == section]
                if section == "open":
                    items.sort(key=lambda t: (t[0].kind != "blocker", -t[2]))
                elif section == "recent":  # newest first, as a stream reads
                    items.sort(key=lambda t: str(t[0].timestamp or ""), reverse=True)
                if items:
                    parts.append(heading + "\n" + "\n\n".join(self.block(p, n) for p, n, _ in items))
            if outro.strip():
                parts.append(outro.strip())
            return [{"role": "system", "content": "\n\n".join(parts)}]

        base = self.tokens_of(render([]))
        chosen, shortened, dropped = self.pack(unique, base, now) if base <= self.config.budget else ([], [], unique)
        messages, tokens = self._settle(chosen, shortened, dropped, render)
        cited = [p.source for p, _, _ in chosen if p.source]
        return BriefingText(messages[0]["content"], tokens, self.config.budget, cited, len(dropped))
