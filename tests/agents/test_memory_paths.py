"""The memory tool's paths: no path it accepts leads out of /memories, however it is read (as a
POSIX path, percent-decoded, with backslashes as separators), and each reads back exactly from
the header of the note it names."""

from __future__ import annotations

import posixpath
import unicodedata
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notewell.agents.memory_files import memory_text
from notewell.agents.memory_paths import MAX_PATH_CHARS, ROOT, MemoryCommandError, check_path
from notewell.model.header import parse_note, quote_value
from notewell.model.note import written_title

# Pieces an attacker (or a confused model) puts together: traversal, encodings, separators,
# look-alikes, control characters, and ordinary names.
PIECES = [
    "/",
    "..",
    ".",
    "%2e",
    "%2E%2e",
    "%2f",
    "%5c",
    "%00",
    "%",
    "\\",
    "\x00",
    "\n",
    "\r",
    "\t",
    "\x7f",
    "memories",
    "/memories",
    "/memories/",
    "/memories/..",
    "~",
    " ",
    "．．",
    "\u2024\u2024",
    "\u2215",
    "\uff0f",
    "\uff3c",
    "\u200b",
    "\u202e",
    "e\u0301",
    "\ufeff",
    ":",
    '"',
    "'",
    "#",
    "---",
    "a",
    "notes.md",
    "中文",
    "\udc80",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\x85",
    ".hidden",
    "node_modules",
]
paths = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
    st.lists(st.sampled_from(PIECES), max_size=12).map(lambda parts: "/memories/" + "".join(parts)),
    st.text(max_size=40).map(lambda tail: "/memories/" + tail),
    st.text(max_size=40),
)


def _inside(path: str) -> bool:
    base = "/srv/store"
    for reading in (path, unquote(path), path.replace("\\", "/"), unquote(unquote(path)).replace("\\", "/")):
        resolved = posixpath.normpath(posixpath.join(base, reading.lstrip("/")))
        if resolved != base + ROOT and not resolved.startswith(base + ROOT + "/"):
            return False
    return True


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths)
def test_no_path_it_accepts_leads_out(path):
    try:
        kept = check_path(path)
    except MemoryCommandError as refused:
        assert "\n" not in refused.message and "\x00" not in refused.message
        return
    assert kept == ROOT or kept.startswith(ROOT + "/")
    assert posixpath.normpath(kept) == kept  # nothing a reader would fold away
    assert unquote(kept) == kept and "\\" not in kept
    assert not any(ord(c) < 0x20 or c == "\x7f" for c in kept)
    assert _inside(kept) and _inside(unicodedata.normalize("NFKC", kept))  # as a reader folding look-alikes
    assert unicodedata.is_normalized("NFC", kept)  # no second name spelled alike
    assert not any(unicodedata.category(c) == "Cf" for c in kept)  # nothing invisible
    assert check_path(kept) == kept  # its one form


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(paths)
def test_a_path_reads_back_from_its_notes_header(path):
    try:
        kept = check_path(path)
    except MemoryCommandError:
        return
    parsed = parse_note(memory_text(kept, "body\n"))
    assert written_title(parsed) == kept and parsed.body == "body\n"
    assert f"memory_path: {quote_value(kept)}" in parsed.extra


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/memories/../etc/passwd", "would escape /memories directory"),
        ("/memories/a/../../x", "would escape"),
        ("/memories/./a", "would escape"),
        ("/memories//a", "would escape"),
        ("/memories/%2e%2e/x", "would escape"),
        ("/memories/%2E%2e%2Fetc", "would escape"),
        ("/memories/a%00.md", "would escape"),
        ("/memories\\..\\x", "would escape"),
        ("/memories/a\x00b", "would escape"),
        ("/memories/a\nb", "would escape"),
        ("/memoriesX/a", "Path must start with /memories, got: /memoriesX/a"),
        ("memories/a", "Path must start with /memories"),
        ("/etc/passwd", "Path must start with /memories, got: /etc/passwd"),
        ("", "Path must start with /memories"),
        ("/memories/" + "a" * MAX_PATH_CHARS, "over 1024 characters"),
        ("/memories" + "/a" * 33, "over 32 directories deep"),
        ("/memories/" + "é" * 128, "over 255 bytes"),
        ("/memories/\udc80", "is not valid UTF-8"),
        ("/memories/a.md ", "starts or ends with a blank"),
        ("/memories/ /a.md", "starts or ends with a blank"),
        ("/memories/a\u3000/b", "starts or ends with a blank"),
        ("/memories/a\u2028b", "would escape"),
        ("/memories/a\x85b", "would escape"),
        ("/memories/\uff0e\uff0e/x", "would escape"),
        ("/memories/a/\u2024\u2024", "would escape"),
        ("/memories/a\uff0f..\uff0f..\uff0fx", "would escape"),
        ("/memories/notes.md\u200b", "holds an invisible character"),
        ("/memories/a\u202etxt.md", "holds an invisible character"),
        ("/memories/\ufeffa", "holds an invisible character"),
        ("/memories/cafe\u0301.md", "is not in Unicode's composed form"),
        (None, "must be a string"),
    ],
)
def test_what_is_refused(path, said):
    with pytest.raises(MemoryCommandError, match=said.replace(".", r"\.").replace("/", "/")) as refused:
        check_path(path)
    assert "\n" not in refused.value.message and "\x00" not in refused.value.message


@pytest.mark.parametrize(
    ("path", "kept"),
    [
        ("/memories", "/memories"),
        ("/memories/", "/memories"),
        ("/memories/a/", "/memories/a"),
        ("/memories/a b.md", "/memories/a b.md"),
    ],
)
def test_the_one_form(path, kept):
    assert check_path(path) == kept


@pytest.mark.slow
def test_a_file_at_any_path_it_accepts_is_found_again(tmp_path):
    import notewell
    from notewell.agents.memory_files import MemoryFiles

    store = notewell.open(tmp_path / "notes")
    files = MemoryFiles(store)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(paths)
    def round_trip(path):
        try:
            kept = check_path(path)
        except MemoryCommandError:
            return
        if kept == ROOT:
            return
        assert files.create(kept, "x") == f"File created successfully at: {kept}"
        assert files.view(kept).endswith("     1\tx")
        parent, name = kept.rsplit("/", 1)
        listed = f"\t{kept}" in files.view(parent)
        assert listed == (not name.startswith(".") and name != "node_modules")  # the protocol hides those
        assert files.delete(kept) == f"Successfully deleted {kept}"

    try:
        round_trip()
    finally:
        store.close()
