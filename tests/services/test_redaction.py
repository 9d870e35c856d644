"""Redaction at capture, the policy of the note service, on every backend: each way a text gets
into a store (add, bulk add, edit whole or body, tags, summaries, an attempt's summary) masks a
secret or personal data, or refuses the write and changes nothing, or (off) keeps it; a
<private> span is never stored."""

from __future__ import annotations

import pytest

import notewell
from notewell.errors import InvalidArgumentError, SensitiveDataError
from tests.services.conftest import _BACKENDS

AWS = "AKIAQ7ZK3M9XW2RT5VNB"  # made up, in AWS's form
CARD = "4539 7804 2817 6464"  # made up, passes the Luhn check


@pytest.fixture(params=_BACKENDS)
def opened(request, tmp_path):
    """A function opening the store of this backend in a redaction mode."""
    made = []

    def open_in(mode: str | None = None):
        if request.param == "memory":
            from notewell.services.service import NoteService
            from tests.fakes import MemoryBackend

            store = NoteService(MemoryBackend(embedder=None), redact=mode)
        elif request.param == "postgres":
            store = notewell.open(request.getfixturevalue("pg_store_url"), embedder=None, redact=mode)
        else:
            store = notewell.open(tmp_path / "notes", embedder=None, redact=mode)
        made.append(store)
        return store

    yield open_in
    for store in made:
        store.close()


def _leaks(note) -> bool:
    return AWS in note.text or CARD in note.text


def test_mask_is_the_default_and_covers_title_tags_header_and_body(opened):
    store = opened()
    assert store.redaction == "mask"
    note = store.add_note(f"---\ntitle: deploy with {AWS}\ntags: [ops]\nsummary: card {CARD}\n---\nuse {AWS} now\n")
    assert not _leaks(note)
    assert note.title == "deploy with (redacted: aws-key)" and note.summary == "card (redacted: card-number)"
    assert note.body == "use [redacted: aws-key] now\n"
    again = store.get_note(note.id)
    assert again.text == note.text and again.tags == ["ops"]
    assert [c.id for c in store.search_notes("redacted", limit=5)] == [note.id]
    assert store.search_notes(AWS.lower(), limit=5) == []


def test_every_later_write_masks_too(opened):
    store = opened()
    note = store.add_note("# plan\n\nnothing secret yet\n")
    steps = [
        lambda: store.edit_note(note.id, f"# plan\n\nkey {AWS}\n"),
        lambda: store.edit_note(note.id, f"card {CARD}\n", keep_header=True),
        lambda: store.add_tag(note.id, AWS),
        lambda: store.set_summary(note.id, f"paid with {CARD}"),
    ]
    for step in steps:
        assert not _leaks(step())
    history = store.history(note.id)
    assert len(history) == 5
    for entry in history:
        assert not _leaks(store.get_note(note.id, revision=entry["revision"]))
    assert "redacted-aws-key" in store.get_note(note.id).tags  # masked before it was slugged


def test_bulk_adds_and_an_attempts_summary_are_masked(opened):
    store = opened()
    notes = store.add_notes([f"# one\n\n{AWS}\n", f"# two\n\n{CARD}\n", "# three\n\nplain\n"])
    assert [n.text for n in notes] == [
        "# one\n\n[redacted: aws-key]\n",
        "# two\n\n[redacted: card-number]\n",
        "# three\n\nplain\n",
    ]
    attempt = store.start_attempt("ops", author="agent")
    ended = store.end_attempt(attempt.id, outcome="succeeded", summary=f"rotated {AWS}")
    assert not _leaks(store.get_note(ended.summary_note_id))


def test_labels_and_project_names_are_masked_too(opened):
    # Authors, models, owners, projects and campaigns are kept beside the notes (journal,
    # index, the database): a secret in one reached the disk unmasked, a project's lower cased.
    store = opened()
    attempt = store.start_attempt(f"deploy {AWS}", author=f"agent {AWS}", model=f"m {CARD}", campaign=f"c {AWS}")
    assert (attempt.project, attempt.campaign) == ("deploy-redacted-aws-key", "c-redacted-aws-key")
    assert (attempt.author, attempt.model) == ("agent [redacted: aws-key]", "m [redacted: card-number]")
    note = store.add_note("# one\n\nplain\n", author=f"by {AWS}", model=f"with {AWS}", attempt=attempt.id)
    assert (note.author, note.model) == ("by [redacted: aws-key]", "with [redacted: aws-key]")
    store.edit_note(note.id, "# one\n\nplain too\n", author=f"ed {CARD}")
    assert [h["author"] for h in store.history(note.id)][-1] == "ed [redacted: card-number]"
    project = store.set_project(f"p {AWS}", owner=f"o {AWS}", campaign=f"c {CARD}")
    assert AWS.lower() not in str(project) and AWS not in str(project) and CARD not in str(project)


def test_an_outcome_holding_a_token_is_refused(opened):
    # An outcome is a short word, but a GitLab or Slack token fits its form and was kept as given.
    store = opened()
    attempt = store.start_attempt("ops", author="agent")
    with pytest.raises(InvalidArgumentError, match="an outcome is a word"):
        store.end_attempt(attempt.id, outcome="glpat-abcdefghij0123456789xy")
    assert store.get_attempt(attempt.id).running
    assert store.end_attempt(attempt.id, outcome="succeeded").outcome == "succeeded"


def test_refuse_refuses_a_secret_in_a_label_or_project_name(opened):
    store = opened("refuse")
    for step in (
        lambda: store.start_attempt(f"deploy {AWS}", author="agent"),
        lambda: store.start_attempt("ops", author=f"agent {AWS}"),
        lambda: store.add_note("# one\n\nplain\n", model=f"m {CARD}"),
        lambda: store.set_project("ops", campaign=f"c {AWS}"),
    ):
        with pytest.raises(SensitiveDataError):
            step()
    assert store.list_notes(limit=5) == [] and store.list_attempts() == []


def test_refuse_writes_nothing_and_names_the_kind_and_line(opened):
    store = opened("refuse")
    kept = store.add_note("# plan\n\nclean\n")
    with pytest.raises(SensitiveDataError, match=r"^refused: line 3 holds an aws-key; set NOTEWELL_REDACT=mask"):
        store.add_note(f"# plan\n\n{AWS}\n")
    refused = [
        lambda: store.add_notes(["# fine\n\nok\n", f"# card\n\n{CARD}\n"]),
        lambda: store.edit_note(kept.id, f"# plan\n\n{CARD}\n"),
        lambda: store.edit_note(kept.id, f"{AWS}\n", keep_header=True),
        lambda: store.add_tag(kept.id, AWS),
        lambda: store.set_summary(kept.id, CARD),
    ]
    for step in refused:
        with pytest.raises(SensitiveDataError) as caught:
            step()
        assert AWS not in str(caught.value) and CARD not in str(caught.value)
    attempt = store.start_attempt("ops", author="agent")
    with pytest.raises(SensitiveDataError):
        store.end_attempt(attempt.id, outcome="failed", summary=f"the key {AWS}")
    assert store.get_attempt(attempt.id).running  # the attempt did not end either
    assert [c.id for c in store.list_notes(limit=10)] == [kept.id]  # "# fine" was not written either
    assert len(store.history(kept.id)) == 1 and store.get_note(kept.id).text == "# plan\n\nclean\n"


def test_off_keeps_the_text_but_never_a_private_span(opened):
    store = opened("off")
    note = store.add_note(f"# plan\n\n{AWS} <private>my home address</private>\n")
    assert note.text == f"# plan\n\n{AWS} \n"


@pytest.mark.parametrize("mode", ["mask", "refuse"])
def test_private_spans_are_never_stored(opened, mode):
    store = opened(mode)
    note = store.add_note("# visit\n\nmeet at <private>12 Elm Street</private>the office\n<PRIVATE>unclosed")
    assert note.text == "# visit\n\nmeet at the office\n"
    edited = store.edit_note(note.id, "<private>only this</private>kept", keep_header=True)
    assert "only this" not in edited.text
    with pytest.raises(notewell.InvalidNoteError, match="empty"):
        store.add_note("<private>all of it</private>")


def test_a_mode_is_checked_when_the_store_is_opened(opened, monkeypatch):
    with pytest.raises(InvalidArgumentError, match="NOTEWELL_REDACT must be mask, refuse or off, not 'hide'"):
        opened("hide")
    monkeypatch.setenv("NOTEWELL_REDACT", "refuse")
    assert opened().redaction == "refuse"  # the setting, when open() is not told
    assert opened("off").redaction == "off"  # open(redact=...) wins over it


@pytest.mark.postgres
def test_a_masked_secret_is_in_no_row_of_the_database(pg_store_url):
    import psycopg

    with notewell.open(pg_store_url, embedder=None) as store:
        note = store.add_note(f"# deploy {AWS}\n\nthe card {CARD}\n")
        store.edit_note(note.id, f"# deploy\n\nagain {AWS} and {CARD}\n")
        store.add_tag(note.id, AWS)
        store.set_summary(note.id, f"key {AWS}")
        attempt = store.start_attempt("ops", author="agent")
        store.end_attempt(attempt.id, outcome="succeeded", summary=f"card {CARD}")
        assert len(store.history(note.id)) == 4
    with psycopg.connect(pg_store_url) as conn:
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        assert {"notes", "revisions"} <= set(tables)
        for table in tables:  # each row as text: every column, the keyword index's lexemes too
            for needle in (AWS[6:], CARD, CARD.replace(" ", "")):
                row = conn.execute(f'SELECT 1 FROM "{table}" r WHERE r::text ILIKE %s LIMIT 1', (f"%{needle}%",))
                assert row.fetchone() is None, (table, needle)
        # The same search finds what was written: the card's masked form is in the notes.
        found = conn.execute("SELECT count(*) FROM notes r WHERE r::text ILIKE %s", ("%redacted: card-number%",))
        assert found.fetchone()[0] == 2
