"""Secrets in a text, each found as a span with a kind: keys and tokens by their issuers' forms,
private key blocks, and values given to keys named like secrets (``password=...``, a URL's
password).

Careful about what is not one: ids, hashes, uuids and timestamps in agent logs have no issuer's
prefix, and a value given to a secret-looking key passes when it is a pointer or a placeholder
(``${TOKEN}``, ``vault:...``, ``***``). Every pattern's runs and lookaheads are bounded, so
that a text is scanned in time linear in its length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["SECRET_KINDS", "holds_secret", "secret_spans"]

# Lookaheads and runs are bounded: unbounded, each of the many starts in a line such as
# "sk-sk-sk-…" or "eyJ…-eyJ…-" scanned to its end (a 30 KB line: 3.2 s). One named group per
# kind: a group's name is its kind with "_" for "-".
_SECRET_TOKENS = re.compile(
    r"(?P<aws_key>(?:AKIA|ASIA)[0-9A-Z]{16})"
    r"|(?P<private_key>-----BEGIN [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----)"
    r"|(?P<github_token>\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{20,})"
    r"|(?P<gitlab_token>\bglpat-[A-Za-z0-9_-]{20,})"
    r"|(?P<anthropic_key>\bsk-ant-[\w-]{20,})"
    r"|(?P<openai_key>\bsk-(?:proj-)?(?=[\w-]{0,256}[A-Z])(?=[\w-]{0,256}\d)[A-Za-z0-9_-]{20,})"
    r"|(?P<stripe_key>\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,})"
    r"|(?P<slack_token>\bxox[abprs]-[A-Za-z0-9-]{10,}|hooks\.slack\.com/services/T\w+/B\w+/\w+)"
    r"|(?P<google_api_key>\bAIza[0-9A-Za-z_-]{35})"
    r"|(?P<npm_token>\bnpm_[A-Za-z0-9]{36})"
    r"|(?P<pypi_token>\bpypi-[A-Za-z0-9_-]{50,})"
    r"|(?P<notewell_token>\bnwt_[A-Za-z0-9_-]{20,})"
    r"|(?P<jwt>\beyJ[A-Za-z0-9_-]{10,4096}+\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*)"
    r"|(?:\b(?:Bearer|Basic)\s+(?P<bearer_token>[A-Za-z0-9._~+/=-]{16,}))"
)
# A key named like a secret and given a value: the value is checked (a pointer or a placeholder
# is what should be kept, so it passes).
_SECRET_PAIR = re.compile(
    r"(?<![\w-])(?P<key>[\w-]*(?:password|passwd|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token"
    r"|refresh[_-]?token|private[_-]?key)(?:[_-](?:access[_-])?(?:key|token|id))?|[\w-]*pass|[\w-]*token|pw)[\"']?\s*[:=]\s*[\"']?(?P<value>[^\s\"',;]+)"
    r"|\b(?:password|passphrase) (?:is|was) [\"']?(?P<said>[^\s\"',;]+)"
    r"|--(?P<flagname>password|token|secret|api-key)[= ][\"']?(?P<flag>[^\s\"',;]+)"
    r"|(?<![\w+.-])[a-z][a-z0-9+.-]*://[^\s/:@]*:(?P<userinfo>[^\s/@]+)@",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(
    r"^(?:\*+|x{3,}|\.{3}|…|<[^>]*>|\$\{?[\w.-]+\}?|\{\{.*\}\}|%\w+%|redacted|\[redacted\]|hidden|masked|none|null"
    r"|nil|empty|unset|missing|string|field|header|value|required|optional|set|stored|kept|rotated|expired|wrong"
    r"|invalid|changed|see|in|from|the|a|an|location|(?:vault|env|kv|ssm|secret|secrets|arn|op|sops|file):.*"
    r"|(?:kv|secret|secrets)/.*|/.*|~/.*)$",
    re.IGNORECASE,
)
_PASSWORD_KEY = re.compile(r"pass|pw", re.IGNORECASE)
_STRIPPED = "()[]{}.:"
# A private key's block: its END line, or else the lines of base64 that follow its BEGIN line.
_KEY_END = re.compile(r"-----END [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_BODY = re.compile(r"(?:[ \t]*\r?\n[ \t]*(?:[A-Za-z0-9+/=]{8,}|[\w-]{1,40}: [^\n]{0,200}))*")

SECRET_KINDS = (
    "aws-key",
    "private-key",
    "github-token",
    "gitlab-token",
    "anthropic-key",
    "openai-key",
    "stripe-key",
    "slack-token",
    "google-api-key",
    "npm-token",
    "pypi-token",
    "notewell-token",
    "jwt",
    "bearer-token",
    "password",
    "password-in-url",
    "secret",
)


def _token_spans(text: str) -> Iterator[tuple[str, int, int]]:
    end_at = -1  # where the next END line of a private key starts (len(text): none is left)
    for m in _SECRET_TOKENS.finditer(text):
        kind = m.lastgroup or "secret"
        if kind == "aws_key" and "EXAMPLE" in m.group():  # AWS documents AKIA...EXAMPLE as its sample key
            continue
        start, stop = m.span(kind)
        if kind == "private_key":
            if end_at < stop:  # each END line is looked for once: linear in the text however many BEGINs
                found = _KEY_END.search(text, stop)
                end_at = found.start() if found else len(text)
                end_stop = found.end() if found else len(text)
            if end_at < len(text):
                stop = end_stop
            else:
                body = _KEY_BODY.match(text, stop)
                stop = body.end() if body else stop
        yield kind.replace("_", "-"), start, stop


def _pair_spans(text: str) -> Iterator[tuple[str, int, int]]:
    for m in _SECRET_PAIR.finditer(text):
        group = next(g for g in ("value", "said", "flag", "userinfo") if m.group(g) is not None)
        raw = m.group(group)
        value = raw.strip(_STRIPPED)
        if len(value) < 6 or value.isdigit() or _PLACEHOLDER.match(value):
            continue
        start = m.start(group) + len(raw) - len(raw.lstrip(_STRIPPED))
        if group == "userinfo":
            kind = "password-in-url"
        else:
            key = m.group("key") or m.group("flagname") or "password"
            kind = "password" if _PASSWORD_KEY.search(key) else "secret"
        yield kind, start, start + len(value)


def secret_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """Each secret in *text* as (kind, start, end), kind one of :data:`SECRET_KINDS`: tokens
    first, then values of secret-looking keys (the two may overlap)."""
    yield from _token_spans(text)
    yield from _pair_spans(text)


def holds_secret(text: str) -> bool:
    """True when *text* holds at least one secret."""
    return next(secret_spans(text), None) is not None
