"""What a store does with a secret or personal data in a text it is given: the redaction rule.

``<private>…</private>`` spans are removed whole before anything else (under every mode: the
writer asked that they never be stored). Then, by the store's mode: ``mask`` puts
``[redacted: KIND]`` in place of each secret or piece of personal data, ``refuse`` refuses the
whole text naming the kind and the line, ``off`` keeps the text as given. In the header the
mask is ``(redacted: KIND)``: a value opening with ``[`` is a list there, which would break it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..errors import InvalidArgumentError, SensitiveDataError
from .header import HeaderLayout, header_layout
from .personal_data import PERSONAL_KINDS, personal_spans
from .secrets import SECRET_KINDS, secret_spans

__all__ = ["DEFAULT_MODE", "KINDS", "MODES", "Redacted", "check_mode", "redact", "sensitive_spans", "without_private"]

MODES = ("mask", "refuse", "off")
DEFAULT_MODE = "mask"
KINDS = (*SECRET_KINDS, *PERSONAL_KINDS)
# An opening or closing tag, in any case, with blanks or attributes before its ">" (as a writer
# of HTML would type one: "<private >", "<private reason=x>"); bounded, so a scan is linear.
_TAG = re.compile(r"<(/?)private(?:\s[^<>]{0,200})?>", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Redacted:
    """A text as a store keeps it, and what was taken out of it."""

    text: str
    masked: Counter[str] = field(default_factory=Counter)  # kind -> how many spans were masked
    private: int = 0  # <private> spans removed


def check_mode(mode: str | None) -> str:
    """*mode* as given (``mask``, ``refuse`` or ``off``; None: the default); InvalidArgumentError otherwise."""
    if mode is None:
        return DEFAULT_MODE
    if not isinstance(mode, str) or mode.strip().lower() not in MODES:
        raise InvalidArgumentError(f"NOTEWELL_REDACT must be mask, refuse or off, not {mode!r:.40}")
    return mode.strip().lower()


def without_private(text: str) -> tuple[str, int]:
    """*text* without its ``<private>…</private>`` spans (an unclosed one: to the end), and how
    many were removed. A span nested in another ends where the outer one closes (the first
    closing tag would otherwise leave the rest of the outer span stored); a closing tag outside
    any span stays as text. Linear: one scan of the tags."""
    out: list[str] = []
    at = removed = depth = 0
    for tag in _TAG.finditer(text):
        if not tag.group(1):
            if not depth:
                out.append(text[at : tag.start()])
                removed += 1
            depth += 1
        elif depth:
            depth -= 1
            if not depth:
                at = tag.end()
    if not removed:
        return text, 0
    if not depth:
        out.append(text[at:])
    return "".join(out), removed


def sensitive_spans(text: str) -> list[tuple[str, int, int]]:
    """Every secret and piece of personal data in *text* as (kind, start, end), in order, those
    that overlap merged into the first one's kind."""
    found = sorted([*secret_spans(text), *personal_spans(text)], key=lambda s: (s[1], -s[2]))
    merged: list[tuple[str, int, int]] = []
    for kind, start, end in found:
        if merged and start < merged[-1][2]:
            last = merged[-1]
            merged[-1] = (last[0], last[1], max(last[2], end))
        else:
            merged.append((kind, start, end))
    return merged


def _article(kind: str) -> str:
    return "an" if kind[0] in "aeiou" else "a"


def redact(text: str, mode: str, *, mask: str | None = None) -> Redacted:
    """*text* as a store in *mode* keeps it (see the module's docstring); SensitiveDataError in
    ``refuse`` mode when it holds a secret or personal data, naming the first one's kind and line.
    *mask*: what each span becomes instead (``{kind}`` in it is the kind), for a text that is no
    note (a project's name: the ":" of ``[redacted: KIND]`` would make it a namespace)."""
    text, private = without_private(text)
    if mode == "off":
        return Redacted(text, Counter(), private)
    spans = sensitive_spans(text)
    if not spans:
        return Redacted(text, Counter(), private)
    if mode == "refuse":
        kind, start, _ = spans[0]
        line = text.count("\n", 0, start) + 1
        raise SensitiveDataError(
            f"refused: line {line} holds {_article(kind)} {kind}; set NOTEWELL_REDACT=mask to store it masked",
            kind=kind,
            line=line,
        )
    layout = header_layout(text)
    header_end = layout.lines[-1][1] if layout is not None else 0
    pieces: list[str] = []
    at = 0
    for kind, start, end in _within_parts(spans, layout):
        # In the header, a value opening with "[" would be read as a list: the mask there is "(...)".
        if mask is not None:
            shown = mask.format(kind=kind)
        else:
            shown = f"(redacted: {kind})" if start < header_end else f"[redacted: {kind}]"
        pieces += [text[at:start], shown]
        at = end
    pieces.append(text[at:])
    return Redacted("".join(pieces), Counter(kind for kind, _, _ in spans), private)


def _within_parts(spans: list[tuple[str, int, int]], layout: HeaderLayout | None) -> list[tuple[str, int, int]]:
    """*spans* with one that runs from the header into the body (a private key's BEGIN line in
    the header, its END line below) cut in two around the header's closing line, which a mask
    would otherwise take with it: the header left open, the note would lose its title and kind."""
    if layout is None:
        return spans
    close_start, close_end = layout.lines[-1][0], layout.lines[-1][1]
    out: list[tuple[str, int, int]] = []
    for kind, start, end in spans:
        if start < close_start < end:
            if start < close_start - 1:  # up to the newline before the closing line
                out.append((kind, start, close_start - 1))
            if close_end < end:
                out.append((kind, close_end, end))
        else:
            out.append((kind, start, end))
    return out
