"""The redaction rule: secrets and personal data found as spans with a kind, masked or refused;
<private> spans removed; no false alarms on the ids, hashes and timestamps agent logs are full of."""

from __future__ import annotations

import time
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.errors import InvalidArgumentError, SensitiveDataError
from notewell.model.header import parse_note
from notewell.model.redaction import KINDS, check_mode, redact, sensitive_spans, without_private

# Made-up values in each issuer's form (none is a live credential).
AWS = "AKIAIOSFODNN7ABCDEFG"
SAMPLES = {
    "aws-key": f"key {AWS} here",
    "private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7Qk0123456789\n-----END RSA PRIVATE KEY-----",
    "github-token": "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 used",
    "gitlab-token": "glpat-abcdefghij0123456789xy",
    "anthropic-key": "ANTHROPIC_KEY sk-ant-api03-abcdefghijklmnopqrstuv",
    "openai-key": "sk-proj-Abc123def456ghi789jkl012",
    "stripe-key": "sk_live_abcdefghijklmnop1234",
    "slack-token": "xoxb-1234567890-abcdefghij",
    "google-api-key": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "npm-token": "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "pypi-token": "pypi-" + "A" * 60,
    "notewell-token": "nwt_abcdefghijklmnopqrstuv",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "bearer-token": "curl -H 'Authorization: Bearer abcdefghijklmnop1234'",
    "password": "db password=hunter2xyz",
    "password-in-url": "postgresql://app:s3cretpass@db.internal/app",
    "secret": "export API_KEY=q8w7e6r5t4y3",
    "card-number": "paid with 4111 1111 1111 1111 yesterday",
    "iban": "IBAN GB82 WEST 1234 5698 7654 32",
    "us-ssn": "ssn 123-45-6789",
    "national-id": "id 11010519491231002X",
}


def test_every_kind_is_found_by_its_name_and_masked():
    assert set(SAMPLES) == set(KINDS)
    for kind, text in SAMPLES.items():
        assert [k for k, _, _ in sensitive_spans(text)] == [kind], kind
        done = redact(text, "mask")
        assert f"[redacted: {kind}]" in done.text and done.masked == {kind: 1}, (kind, done.text)
        assert sensitive_spans(done.text) == [], kind  # masked once, nothing left to find
        assert redact(done.text, "mask").text == done.text  # and masking again changes nothing


def test_a_key_block_from_the_header_into_the_body_leaves_the_header_closed():
    # One mask over BEGIN (header) to END (body) took the closing "---": the header left open,
    # the note lost its title and kind.
    text = (
        "---\ntitle: deploy\nkind: finding\nnote: -----BEGIN RSA PRIVATE KEY-----\n---\n"
        "MIIEowIBAAKCAQEAx7Qk0123456789\n-----END RSA PRIVATE KEY-----\nafter\n"
    )
    done = redact(text, "mask")
    assert done.text == (
        "---\ntitle: deploy\nkind: finding\nnote: (redacted: private-key)\n---\n[redacted: private-key]\nafter\n"
    )
    assert done.masked == {"private-key": 1} and parse_note(done.text).header["kind"] == "finding"


def test_a_mask_keeps_what_is_around_the_secret():
    done = redact("url https://bob:s3cretpw@host/x and password: hunter2xyz.\n", "mask")
    assert done.text == "url https://bob:[redacted: password-in-url]@host/x and password: [redacted: password].\n"
    assert redact("Authorization: Bearer abcdefghijklmnop1234", "mask").text == (
        "Authorization: Bearer [redacted: bearer-token]"
    )


def test_a_private_key_block_is_masked_whole():
    block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\nQyNTUx\n-----END OPENSSH PRIVATE KEY-----"
    assert redact(f"before\n{block}\nafter", "mask").text == "before\n[redacted: private-key]\nafter"
    # Without its END line (cut off): its BEGIN line and the base64 lines after it.
    cut = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nMIIEowIBAAKCAQEAx7Qk0123\nabcdEFGH+/==\n\nnext"
    assert redact(cut, "mask").text == "[redacted: private-key]\n\nnext"


def test_in_the_header_the_mask_keeps_the_header_a_header():
    text = f"---\ntitle: {AWS}\ntags: [ops, {AWS}]\nsummary: the key {AWS}\n---\nbody {AWS}\n"
    done = redact(text, "mask").text
    parsed = parse_note(done)
    assert parsed.header["title"] == "(redacted: aws-key)"
    assert parsed.header["tags"] == ["ops", "redacted-aws-key"]
    assert done.endswith("---\nbody [redacted: aws-key]\n") and AWS not in done


def test_refuse_names_the_kind_and_the_line_and_never_the_value():
    with pytest.raises(SensitiveDataError) as caught:
        redact("# deploy\n\nthe card is 4111-1111-1111-1111\n", "refuse")
    assert str(caught.value) == ("refused: line 3 holds a card-number; set NOTEWELL_REDACT=mask to store it masked")
    assert (caught.value.code, caught.value.kind, caught.value.line) == ("sensitive_data", "card-number", 3)
    with pytest.raises(SensitiveDataError, match="line 1 holds an aws-key"):
        redact(AWS, "refuse")
    assert redact("nothing here", "refuse").text == "nothing here"


def test_off_keeps_secrets_but_never_private_spans():
    assert redact(f"{AWS} <private>home address</private>!", "off").text == f"{AWS} !"


def test_a_nested_private_span_ends_where_the_outer_one_closes():
    # The first closing tag ended the span: the rest of the outer span was stored.
    assert without_private("a<private>x<private>y</private>rest of it</private>b") == ("ab", 1)
    assert without_private("a</private>b<private>c</private>d") == ("a</private>bd", 1)  # a stray close stays
    assert without_private("a<private><private>b</private>to the end") == ("a", 1)


def test_a_private_tag_may_have_blanks_or_attributes_as_html_does():
    for text in ("a<private >x</private>b", "a<private reason=home>x</private >b", "a<Private\n>x</PRIVATE>b"):
        assert without_private(text) == ("ab", 1), text
    assert without_private("a<privateer>x</privateer>b") == ("a<privateer>x</privateer>b", 0)


def test_private_spans_are_removed_before_anything_else():
    assert without_private("a<private>x</private>b<PRIVATE>y\nz</Private>c") == ("abc", 2)
    assert without_private("keep <private>unclosed to the end") == ("keep ", 1)
    assert without_private("no tags") == ("no tags", 0)
    # A secret inside a private span is gone with it: not refused, not counted.
    done = redact(f"a <private>{AWS}</private> b", "refuse")
    assert (done.text, done.masked, done.private) == ("a  b", {}, 1)


def test_a_mode_is_one_of_three():
    assert check_mode(None) == "mask" and check_mode(" Refuse ") == "refuse" and check_mode("off") == "off"
    with pytest.raises(InvalidArgumentError, match="NOTEWELL_REDACT must be mask, refuse or off"):
        check_mode("hide")


NOT_SECRETS = [
    "commit 3f2a9c1d0e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49 passed",
    "run 550e8400-e29b-41d4-a716-446655440000 at 2026-12-06T16:14:36.123Z",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "order 1234 5678 9012 3456 shipped",  # four groups, no card's check digit
    "timestamp 1733501676123456 ms",
    "password=${DB_PASSWORD} and token: <your token> and api_key=vault:prod/api",
    "AKIAIOSFODNN7EXAMPLE is AWS's documented sample",
    "the task-id was 12345678 and pass=*** in the log",
    "sk-learn is a library; use sk-abc for short",
    # Code pasted into a note: a value that is a call, a subscript, a name or a type is no secret.
    "token = self.get_token()\napi_key=self.api_key,\nself.password = password\nkey_password=key_password",
    "token: Optional[str] = None\nclient_secret=client_secret\napi_key = API_KEY_SENTINEL\naccess_token: AccessToken",
    "self.api_key = resolved_api_key\ntokenizer.pad_token = tokenizer.eos_token\nurl.password = base.password",
    "if user.password:\n    return redirect(login_url)",  # the value is on the key's line, not the next
    "Token: '#d0d0d0'\nprint(f'password={password!r}')",  # a colour, a format field
    "First pass: determine the widths. Second pass: rewrite them.",
    "(no token: public reads only); keep `password=${DB_PASSWORD}` and `api_key=api_key` as written",
    "data:image/png;base64,AAAAQAHAEwAAQAAAAAAAgAHAGQAAQAAAAAAAwAaAKIAAQAAAAAABAAHAM0AAQAAAAAABQ==",
]


def test_a_quoted_or_literal_value_in_code_is_still_a_secret():
    for text in (
        'password = "hunter2xyz"',
        "api_key: 'q8w7e6r5t4y3'",
        "token=abcDEF123456",
        "PASSWORD=correct_horse_9",
        "pass: hunter2xyz",
        f"aws_access_key_id = {AWS}",
    ):
        assert sensitive_spans(text), text


def test_what_agent_logs_are_full_of_is_no_secret():
    for text in NOT_SECRETS:
        assert sensitive_spans(text) == [], text


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.uuids().map(str),
            st.binary(min_size=4, max_size=32).map(bytes.hex),
            st.datetimes().map(lambda d: d.isoformat()),
            st.integers(min_value=0, max_value=10**20).map(str),
            st.just("commit"),
            st.just("id:"),
        ),
        max_size=12,
    ).map(" ".join)
)
def test_random_hex_uuids_timestamps_and_numbers_are_not_flagged(text):
    assert sensitive_spans(text) == []


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.sampled_from(sorted(SAMPLES.values())))
def test_a_masked_text_holds_nothing_found_and_masking_is_stable(noise, secret):
    text = noise + " " + secret + " " + noise
    done = redact(text, "mask")
    assert sensitive_spans(done.text) == []
    assert redact(done.text, "mask").text == done.text


def test_spans_come_sorted_and_never_overlap():
    text = f"{AWS} password={AWS} 4111 1111 1111 1111"
    spans = sensitive_spans(text)
    assert all(a[2] <= b[1] for a, b in zip(spans, spans[1:], strict=False))
    assert str(uuid.uuid4()) not in redact(text, "mask").text


@pytest.mark.slow
def test_a_mebibyte_of_near_misses_is_read_in_linear_time():
    # Each input is 1 MiB of what almost matches: many starts, nothing (or little) found.
    worst = {
        "sk-": "sk-" * 350_000,
        "eyJ": "eyJaaaaaaaaaaaa-" * 65_536,
        "BEGIN": "-----BEGIN RSA PRIVATE KEY-----\n\n" * 32_000,
        "password": "password=" * 116_000,
        "url": "a://b:c" * 150_000,
        "card": "4111 1111 1111 " * 70_000,
        "iban": "GB82 " * 210_000,
        "private": "<private>" * 116_000,
        "private-attributes": ("<private " + "a" * 199 + "<") * 5_000,  # each reads 200 and fails
        "hex": "deadbeef" * 131_072,
        "pass": "pass" * 262_144,
        "key": "key" * 350_000,
        "assigned": "a=" * 524_288,
        "ssn": "123-45-" * 150_000,
    }
    for name, text in worst.items():
        small = text[: len(text) // 8]
        started = time.thread_time()
        redact(small, "mask")
        eighth = time.thread_time() - started
        started = time.thread_time()
        redact(text, "mask")
        whole = time.thread_time() - started
        # Linear: eight times the text, about eight times the time (quadratic would be 64).
        assert whole < max(16 * eighth, 0.05) and whole < 5, (name, eighth, whole)
