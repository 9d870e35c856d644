"""Every ``NOTEWELL_*`` environment variable, defined once: its name, what it takes, its default and
what it does. Code reads them through :func:`setting`; ``notewell config`` prints what each is and
where that came from; the reference is written from :data:`SETTINGS`; a test fails on a variable
read anywhere else."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import NamedTuple

__all__ = ["SETTINGS", "Setting", "effective_settings", "setting"]


class Setting(NamedTuple):
    """One ``NOTEWELL_*`` variable."""

    name: str
    takes: str  # what the value is, as the reference says it
    default: str | None  # None: unset unless given
    help: str
    secret: bool = False  # shown masked by `notewell config`


SETTINGS: tuple[Setting, ...] = (
    Setting("NOTEWELL_STORE", "folder", "./notes", "the notes folder every command works on (or --store)"),
    Setting(
        "NOTEWELL_DATABASE",
        "postgresql:// URL",
        None,
        "work on this database instead of a folder (or --database)",
        secret=True,
    ),
    Setting("NOTEWELL_MAX_BYTES", "bytes", "1048576", "the largest note a store takes"),
    Setting(
        "NOTEWELL_AUTHOR",
        "name",
        None,
        "who writes notes, starts attempts, imports (unset: a note has no author, an attempt takes your user"
        " name; `notewell assistant`: assistant)",
    ),
    Setting("NOTEWELL_MODEL", "name", None, "the model that wrote a note, in its header (or --model)"),
    Setting(
        "NOTEWELL_ATTEMPT", "attempt id", None, "the attempt new notes land on and reads are recorded on (or --attempt)"
    ),
    Setting("NOTEWELL_PROJECT", "project", None, "the project a session hook briefs and records on"),
    Setting(
        "NOTEWELL_AUTOWATCH",
        "on | off | notes",
        "on (from 20000 notes; any search by meaning)",
        "start a background watcher (30 minutes idle, then it exits) from one-shot commands on folders this big,"
        " and from any one-shot search by meaning (it keeps the model loaded); off: never",
    ),
    Setting(
        "NOTEWELL_EMBEDDER",
        "default | openai | fastembed:<dir> | sentence-transformers:<dir> | hash",
        "default",
        "the embedding model of the CLI and servers (unset, with NOTEWELL_EMBED_URL set: openai)",
    ),
    Setting("NOTEWELL_EMBED_URL", "URL", None, "an OpenAI-compatible embeddings endpoint (with NOTEWELL_EMBED_MODEL)"),
    Setting("NOTEWELL_EMBED_MODEL", "name", None, "the model asked of NOTEWELL_EMBED_URL"),
    Setting("NOTEWELL_EMBED_KEY", "key", None, "the key sent to NOTEWELL_EMBED_URL", secret=True),
    Setting(
        "NOTEWELL_ANN",
        "on | off | passages",
        "off",
        "an approximate vector index (the 'ann' extra); a number: from that many passages",
    ),
    Setting(
        "NOTEWELL_CHAT_URL",
        "URL",
        None,
        "an OpenAI-compatible chat endpoint for `notewell assistant` and memory compression",
    ),
    Setting("NOTEWELL_CHAT_MODEL", "name", None, "the model asked of NOTEWELL_CHAT_URL"),
    Setting("NOTEWELL_CHAT_KEY", "key", None, "the key sent to NOTEWELL_CHAT_URL", secret=True),
    Setting(
        "NOTEWELL_TOKENIZER",
        "auto | estimate | cl100k_base | o200k_base",
        "auto",
        "how tokens are counted for budgets (auto: cl100k_base when bpe-openai is installed, else estimate)",
    ),
    Setting("NOTEWELL_NOTEBOOK", "name", None, "the working-context notebook `notewell notebook` uses"),
    Setting(
        "NOTEWELL_STATE_DIR", "folder", "$XDG_STATE_HOME/notewell", "where hooks and the installer keep their state"
    ),
    Setting(
        "NOTEWELL_REDACT",
        "mask | refuse | off",
        "mask",
        "what a store does with a secret or personal data in a text it is given: mask it as [redacted: KIND],"
        " refuse the write, or keep it (off); <private>…</private> is never stored",
    ),
    Setting(
        "NOTEWELL_NOTEBOOK_BUDGET",
        "tokens",
        "3000",
        "the token budget `notewell notebook init` gives a new notebook (or --budget)",
    ),
)
_BY_NAME = {s.name: s for s in SETTINGS}


def setting(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The value *name* is given in *env* (the process environment by default), stripped; None
    when unset or empty (its default is the reader's to apply: it may depend on other things).
    KeyError for a name that is not in :data:`SETTINGS`."""
    if name not in _BY_NAME:
        raise KeyError(f"{name} is not a notewell setting")
    value = (os.environ if env is None else env).get(name, "").strip()
    return value or None


def effective_settings(env: Mapping[str, str] | None = None) -> list[dict[str, str | None]]:
    """Each setting, its value and where that came from (``environment`` or ``default``); a
    secret masked whole unless it is a URL, and in any URL its user and password and every
    parameter that may hold a credential shown as ``***`` (the rest as given, not re-encoded)."""
    out: list[dict[str, str | None]] = []
    for s in SETTINGS:
        given = setting(s.name, env)
        value = given if given is not None else s.default
        if given is not None:
            url = _URL.match(given) is not None
            value = "***" if s.secret and not url else _without_credentials(given)
        out.append({"name": s.name, "value": value, "source": "environment" if given is not None else "default"})
    return out


_URL = re.compile(r"(?:postgres(?:ql)?|https?)://", re.IGNORECASE)
_SEPARATORS = re.compile(r"([?&;#])")
_CREDENTIAL_WORDS = ("pass", "pw", "key", "token", "secret", "sig", "auth", "credential", "code")


def _without_credentials(value: str) -> str:
    """*value* with, after any ``://``, everything up to the last ``@`` (the user and password,
    however they are written) and the value of every parameter whose name may hold a
    credential shown as ``***``."""
    scheme = value.find("://")
    if scheme < 0:
        return value
    head, rest = value[: scheme + 3], value[scheme + 3 :]
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    pieces = _SEPARATORS.split(rest)  # [text, separator, text, separator, ...]: each piece once, linear
    for i in range(2, len(pieces), 2):
        name, eq, _value = pieces[i].partition("=")
        if eq and any(word in name.lower() for word in _CREDENTIAL_WORDS):
            pieces[i] = f"{name}=***"
    return head + "".join(pieces)
