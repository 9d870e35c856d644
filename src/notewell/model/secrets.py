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

# Each kind: the literals one of which any of its secrets holds, and its pattern. A pattern runs
# only over a text holding one of its literals (one alternation of every kind's pattern, tried
# at each position, read 2 MB/s; a text holding no literal at all is told by one scan,
# _ANY_LITERAL). Runs and lookaheads are bounded: unbounded, each of the many starts in a line
# such as "sk-sk-sk-…" or "eyJ…-eyJ…-" scanned to its end (a 30 KB line: 3.2 s). A kind's
# secret is the pattern's group "s" when it has one (the rest is context).
_TOKENS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (kind, literals, re.compile(pattern))
    for kind, literals, pattern in (
        # Not inside a longer run of base64 (a sparse image's "...AwAaAKIAAQAAAAAABAAHAM0AAQ...").
        ("aws-key", ("AKIA", "ASIA"), r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"),
        ("private-key", ("PRIVATE KEY",), r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----"),
        (
            "github-token",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
            r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{20,}",
        ),
        ("gitlab-token", ("glpat-",), r"\bglpat-[A-Za-z0-9_-]{20,}"),
        ("anthropic-key", ("sk-ant-",), r"\bsk-ant-[\w-]{20,}"),
        # The whole run is taken, then checked for a capital and a digit (see _token_spans): a
        # lookahead for them at each "sk-" of "sk-sk-sk-…" read 0.5 MB/s.
        ("openai-key", ("sk-",), r"\bsk-(?!ant-)(?:proj-)?[A-Za-z0-9_-]{20,}"),
        ("stripe-key", ("k_live_", "k_test_"), r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
        (
            "slack-token",
            ("xox", "hooks.slack.com"),
            r"\bxox[abprs]-[A-Za-z0-9-]{10,}|hooks\.slack\.com/services/T\w+/B\w+/\w+",
        ),
        ("google-api-key", ("AIza",), r"\bAIza[0-9A-Za-z_-]{35}"),
        ("npm-token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}"),
        ("pypi-token", ("pypi-",), r"\bpypi-[A-Za-z0-9_-]{50,}"),
        ("notewell-token", ("nwt_",), r"\bnwt_[A-Za-z0-9_-]{20,}"),
        ("jwt", ("eyJ",), r"\beyJ[A-Za-z0-9_-]{10,4096}+\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"),
        ("bearer-token", ("Bearer", "Basic"), r"\b(?:Bearer|Basic)\s+(?P<s>[A-Za-z0-9._~+/=-]{16,})"),
    )
)
_ANY_LITERAL = re.compile("|".join(re.escape(literal) for _, literals, _ in _TOKENS for literal in literals))
# A key named like a secret and given a value: the value is checked (a pointer or a placeholder
# is what should be kept, so it passes). Every "word = value" is found first, its word then
# checked whole (one pattern trying each key at each start read 4 MB/s; this one, 18 MB/s).
# The value is on the key's line: "if user.password:\n    return" gave "return" to "password".
_ASSIGNED = re.compile(r"(?<![\w-])(?P<key>[\w-]++)[\"']?[ \t]*+[:=][ \t]*(?P<quote>[\"']?)(?P<value>[^\s\"',;]+)")
_KEY_HINTS = ("pass", "secret", "key", "token", "pw")  # what every such key holds
_SECRET_KEY = re.compile(
    r"[\w-]*(?:password|passwd|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token"
    r"|refresh[_-]?token|private[_-]?key)(?:[_-](?:access[_-])?(?:key|token|id))?|[\w-]*pass|[\w-]*token|pw",
    re.IGNORECASE,
)
_SAID = re.compile(
    r"\b(?:password|passphrase) (?:is|was) [\"']?(?P<value>[^\s\"',;]+)"
    r"|--(?P<key>password|token|secret|api-key)[= ][\"']?(?P<flag>[^\s\"',;]+)",
    re.IGNORECASE,
)
_USERINFO = re.compile(r"(?<![\w+.-])[a-z][a-z0-9+.-]*://[^\s/:@]*:(?P<value>[^\s/@]+)@", re.IGNORECASE)
_PLACEHOLDER = re.compile(
    r"^(?:\*+|x{3,}|\.{3}|…|<[^>]*>|\$\{?[\w.-]+\}?|\{\{.*\}\}|#[0-9a-f]{3,8}|%\w+%|redacted|\[redacted\]|hidden|masked|none|null"
    r"|nil|empty|unset|missing|string|field|header|value|required|optional|set|stored|kept|rotated|expired|wrong"
    r"|invalid|changed|see|in|from|the|a|an|location|(?:vault|env|kv|ssm|secret|secrets|arn|op|sops|file):.*"
    r"|(?:kv|secret|secrets)/.*|/.*|~/.*)$",
    re.IGNORECASE,
)
# An unquoted value that is code, not a secret: a call or a subscript ("self.get_token()",
# "Optional[str]"), a dotted name ("self.api_key"), a name of letters joined by "_"
# ("resolved_api_key", "API_KEY_SENTINEL") or a CamelCase type ("AccessToken"). In the Python
# of the standard library and site-packages these were 2,050 of the 2,085 such values found.
_CALL = re.compile(r"\w[(\[]|^\{[\w.!:]*\}$")  # or a format field: f"password={password!r}"
_CODE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z]+(?:_[A-Za-z]+)+|(?:[A-Z][a-z]+){2,}")
_PASSWORD_KEY = re.compile(r"pass|pw", re.IGNORECASE)
_CAPITAL = re.compile(r"[A-Z]")
_DIGIT = re.compile(r"\d")
_STRIPPED = "()[]{}.:`"  # and Markdown's code marks: `password=${DB_PASSWORD}`
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
    if not _ANY_LITERAL.search(text):  # one scan for the many short texts (an import's turns) holding none
        return
    for kind, literals, pattern in _TOKENS:
        if not any(literal in text for literal in literals):
            continue
        end_at = end_stop = -1  # the next END line of a private key (len(text): none is left)
        for m in pattern.finditer(text):
            start, stop = m.span("s") if "s" in pattern.groupindex else m.span()
            if kind == "aws-key" and "EXAMPLE" in m.group():  # AWS documents AKIA...EXAMPLE as its sample key
                continue
            if kind == "openai-key" and not (_CAPITAL.search(m.group()) and _DIGIT.search(m.group())):
                continue
            if kind == "private-key":
                if end_at < stop:  # each END line is looked for once: linear however many BEGINs
                    found = _KEY_END.search(text, stop)
                    end_at, end_stop = (found.start(), found.end()) if found else (len(text), len(text))
                stop = end_stop if end_at < len(text) else _key_body_end(text, stop)
            yield kind, start, stop


def _key_body_end(text: str, at: int) -> int:
    """Where the base64 lines after a private key's BEGIN line at *at* end (it has no END line)."""
    body = _KEY_BODY.match(text, at)
    return body.end() if body is not None else at


def _value_span(m: re.Match[str], group: str) -> tuple[int, int] | None:
    """The span of the value in *group* of *m*, without the brackets and dots around it; None
    when it is no secret (short, a number, a pointer or a placeholder)."""
    raw = m.group(group)
    value = raw.strip(_STRIPPED)
    if len(value) < 6 or value.isdigit() or _PLACEHOLDER.match(value):
        return None
    start = m.start(group) + len(raw) - len(raw.lstrip(_STRIPPED))
    return start, start + len(value)


def _code(m: re.Match[str]) -> bool:
    """True when the unquoted value given to a secret-looking key in *m* is code: a call, a
    subscript, a name (see _CODE_NAME) or the key's own name (``password=password``); or a
    word after "pass" (a pass of work, in prose), or a lower case word given to a token or a
    secret (which are random)."""
    raw = m.group("value")
    value = raw.strip(_STRIPPED)
    key = m.group("key").lower()
    if key == "pass" and value.isalpha():  # prose: "First pass: rewrite the parser"
        return True
    if value.isalpha() and value.islower() and not _PASSWORD_KEY.search(key):
        return True  # a word, not a token or a secret (random: "no token: public reads only")
    return bool(_CALL.search(raw) or _CODE_NAME.fullmatch(value)) or value.lower() == key


def _pair_spans(text: str) -> Iterator[tuple[str, int, int]]:
    lowered = text.lower()
    assigned = _ASSIGNED.finditer(text) if any(h in lowered for h in _KEY_HINTS) else ()  # most name no such key
    for m in assigned:
        if not _SECRET_KEY.fullmatch(m.group("key")) or (not m.group("quote") and _code(m)):
            continue
        if (span := _value_span(m, "value")) is not None:
            yield "password" if _PASSWORD_KEY.search(m.group("key")) else "secret", *span
    said = _SAID.finditer(text) if "--" in text or "password " in lowered or "passphrase " in lowered else ()
    for m in said:
        group = "value" if m.group("value") is not None else "flag"
        if (span := _value_span(m, group)) is not None:
            yield "password" if _PASSWORD_KEY.search(m.group("key") or "pass") else "secret", *span
    if "://" in text:
        for m in _USERINFO.finditer(text):
            if (span := _value_span(m, "value")) is not None:
                yield "password-in-url", *span


def secret_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """Each secret in *text* as (kind, start, end), kind one of :data:`SECRET_KINDS`: tokens
    first, then values of secret-looking keys (the two may overlap)."""
    yield from _token_spans(text)
    yield from _pair_spans(text)


def holds_secret(text: str) -> bool:
    """True when *text* holds at least one secret."""
    return next(secret_spans(text), None) is not None
