"""Anthropic's memory tool (memory_20250818) over a store, without the SDK: the six commands, the
protocol's answers and refusals, every write a revision, notes written elsewhere left alone,
visibility, and the worst inputs within the limits."""

from __future__ import annotations

import time

import pytest

from notewell.agents.memory_files import MemoryCommandError, MemoryFiles, StoreNotes, memory_text
from notewell.errors import FrozenError, NotFoundError
from notewell.model.visibility import Viewer

LISTING = "Here're the files and directories up to 2 levels deep in {}, excluding hidden items and node_modules:"


def refused(files: MemoryFiles, **command) -> str:
    with pytest.raises(MemoryCommandError) as caught:
        files.execute(command)
    assert "\n" not in caught.value.message
    return caught.value.message


def test_a_session_of_every_command(backend):
    files = MemoryFiles(backend, author="agent-7")
    assert files.execute({"command": "view", "path": "/memories"}) == LISTING.format("/memories") + "\n0B\t/memories"
    assert files.create("/memories/progress.md", "# Progress\n- read the logs\n") == (
        "File created successfully at: /memories/progress.md"
    )
    files.create("/memories/people/alice.md", "likes tea\n")
    files.create("/memories/people/deep/er/bob.md", "x" * 1536)
    assert files.view("/memories") == "\n".join(
        [
            LISTING.format("/memories"),
            "1.5K\t/memories",  # a directory's size: its files' bytes
            "1.5K\t/memories/people/",
            "10B\t/memories/people/alice.md",
            "1.5K\t/memories/people/deep/",  # two levels: deep/er/bob.md is left out
            "27B\t/memories/progress.md",
        ]
    )
    assert files.view("/memories/progress.md") == (
        "Here's the content of /memories/progress.md with line numbers:\n"
        "     1\t# Progress\n     2\t- read the logs\n     3\t"
    )
    assert files.view("/memories/progress.md", [2, -1]).endswith(":\n     2\t- read the logs\n     3\t")
    assert files.view("/memories/progress.md", [1, 1]).endswith(":\n     1\t# Progress")
    assert files.str_replace("/memories/progress.md", "read the logs", "read the logs twice") == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\t# Progress\n     2\t- read the logs twice\n     3\t"
    )
    assert files.insert("/memories/progress.md", 1, "- found the cause\n") == (
        "The file /memories/progress.md has been edited."
    )
    assert files.view("/memories/progress.md").split("\n")[1:] == [
        "     1\t# Progress",
        "     2\t- found the cause",
        "     3\t- read the logs twice",
        "     4\t",
    ]
    assert (
        files.rename("/memories/people", "/memories/team") == "Successfully renamed /memories/people to /memories/team"
    )
    assert files.view("/memories/team/alice.md").endswith("     1\tlikes tea\n     2\t")
    assert files.delete("/memories/team") == "Successfully deleted /memories/team"
    assert files.delete("/memories/progress.md") == "Successfully deleted /memories/progress.md"
    assert files.view("/memories") == LISTING.format("/memories") + "\n0B\t/memories"


def test_the_protocols_refusals(backend):
    files = MemoryFiles(backend)
    files.create("/memories/a.md", "one\ntwo\none\n")
    files.create("/memories/dir/b.md", "b\n")
    missing = "/memories/nope.md"
    assert refused(files, command="view", path=missing) == (
        "The path /memories/nope.md does not exist. Please provide a valid path."
    )
    assert refused(files, command="create", path="/memories/a.md", file_text="x") == (
        "Error: File /memories/a.md already exists"
    )
    assert refused(files, command="str_replace", path="/memories/a.md", old_str="three", new_str="x") == (
        "No replacement was performed, old_str `three` did not appear verbatim in /memories/a.md."
    )
    assert refused(files, command="str_replace", path="/memories/a.md", old_str="one", new_str="x") == (
        "No replacement was performed. Multiple occurrences of old_str `one` in lines: 1, 3. Please ensure it is unique"
    )
    assert refused(files, command="str_replace", path=missing, old_str="a", new_str="b") == (
        "Error: The path /memories/nope.md does not exist. Please provide a valid path."
    )
    assert refused(files, command="insert", path="/memories/a.md", insert_line=4, insert_text="x") == (
        "Error: Invalid `insert_line` parameter: 4. It should be within the range of lines of the file: [0, 3]"
    )
    assert refused(files, command="insert", path="/memories/a.md", insert_line=-1, insert_text="x").startswith(
        "Error: Invalid `insert_line` parameter: -1."
    )
    assert refused(files, command="insert", path=missing, insert_line=0, insert_text="x") == (
        "Error: The path /memories/nope.md does not exist"
    )
    assert refused(files, command="delete", path=missing) == "Error: The path /memories/nope.md does not exist"
    assert refused(files, command="rename", old_path=missing, new_path="/memories/c.md") == (
        "Error: The path /memories/nope.md does not exist"
    )
    assert refused(files, command="rename", old_path="/memories/a.md", new_path="/memories/dir/b.md") == (
        "Error: The destination /memories/dir/b.md already exists"
    )
    assert refused(files, command="rename", old_path="/memories/a.md", new_path="/memories/dir") == (
        "Error: The destination /memories/dir already exists"
    )
    assert refused(files, command="rename", old_path="/memories/dir", new_path="/memories/dir/sub").startswith(
        "Error: Cannot move /memories/dir into itself"
    )
    assert refused(files, command="delete", path="/memories") == "Error: Cannot delete the /memories directory itself"
    assert refused(files, command="rename", old_path="/memories", new_path="/memories/x") == (
        "Error: Cannot rename the /memories directory itself"
    )
    assert refused(files, command="create", path="/memories/a.md/x.md", file_text="x") == (
        "Error: The path /memories/a.md is a file, not a directory"
    )
    assert refused(files, command="create", path="/memories/dir", file_text="x") == (
        "Error: The path /memories/dir is a directory"
    )
    assert refused(files, command="str_replace", path="/memories/dir", old_str="a", new_str="b") == (
        "Error: The path /memories/dir is not a file."
    )
    assert refused(files, command="view", path="/memories/a.md", view_range=[0, 2]).startswith(
        "Error: Invalid `view_range` parameter: [0, 2]."
    )
    assert refused(files, command="view", path="/memories/a.md", view_range=[1]).startswith(
        "Error: Invalid `view_range` parameter"
    )
    assert refused(files, command="str_replace", path="/memories/a.md", old_str="", new_str="x").startswith(
        "Error: old_str must be"
    )
    assert refused(files, command="view") == "Error: the view command needs path"
    assert refused(files, command="undo", path="/memories").startswith("Error: Unknown command 'undo'")
    assert refused(files, command="view", path="/etc/passwd") == "Path must start with /memories, got: /etc/passwd"
    assert (
        refused(files, command="view", path="/memories/../etc")
        == "Path /memories/../etc would escape /memories directory"
    )
    # Nothing the refusals met was written.
    assert files.view("/memories/a.md").endswith("     1\tone\n     2\ttwo\n     3\tone\n     4\t")
    assert [c.title for c in backend.list_notes(kind="memory")] == ["/memories/dir/b.md", "/memories/a.md"]


def test_every_write_is_a_revision_and_rename_keeps_the_note(store):
    files = MemoryFiles(store, author="agent")
    files.create("/memories/plan.md", "step one\n")
    files.str_replace("/memories/plan.md", "one", "two")
    files.insert("/memories/plan.md", 0, "# Plan")
    (card,) = store.list_notes(kind="memory")
    files.rename("/memories/plan.md", "/memories/done/plan.md")
    (moved,) = store.list_notes(kind="memory")
    assert moved.id == card.id and moved.title == "/memories/done/plan.md"
    note = store.get_note(card.id)
    assert note.revisions == 4 and note.body == "# Plan\nstep two\n" and note.tags == ["memory"]
    assert store.get_note(card.id, revision=1).body == "step one\n"
    assert store.get_note(card.id, revision=1).title == "/memories/plan.md"
    files.delete("/memories/done/plan.md")
    assert store.get_note(card.id, revision=4).body == "# Plan\nstep two\n"  # the last text stays readable


def test_the_listing_leaves_out_hidden_items_and_node_modules(store):
    files = MemoryFiles(store)
    for path in (
        "/memories/.hidden.md",
        "/memories/app/node_modules/x.js",
        "/memories/a/.git/config",
        "/memories/b.md",
    ):
        files.create(path, "x")
    assert files.view("/memories") == LISTING.format("/memories") + "\n1B\t/memories\n1B\t/memories/b.md"
    assert files.view("/memories/.hidden.md").endswith("     1\tx")  # there, if not listed


def test_a_file_keeps_its_bytes(store):
    files = MemoryFiles(store)
    text = "---\nkind: decision\n---\n\n  crlf\r\nno newline at the end: 中文"
    files.create("/memories/odd.md", text)
    (card,) = store.list_notes(kind="memory")
    assert store.get_note(card.id).body == text
    assert files.view("/memories/odd.md").split("\n")[1:3] == ["     1\t---", "     2\tkind: decision"]
    files.create("/memories/empty.md", "")
    assert files.view("/memories/empty.md") == "Here's the content of /memories/empty.md with line numbers:\n     1\t"


def test_a_note_written_elsewhere_is_never_taken_for_a_file(store):
    mine = store.add_note("---\ntitle: /memories/plan.md\nkind: memory\n---\nmy own plan\n", author="person")
    files = MemoryFiles(store)
    assert files.view("/memories") == LISTING.format("/memories") + "\n0B\t/memories"
    files.create("/memories/plan.md", "the agent's plan\n")
    files.str_replace("/memories/plan.md", "agent's", "agent's new")
    files.delete("/memories/plan.md")
    kept = store.get_note(mine.id)
    assert kept.revisions == 1 and kept.body == "my own plan\n"


class Meddling(StoreNotes):
    """The store's notes, with someone else editing each note right after it is read."""

    def read(self, note_id):
        note = super().read(note_id)
        self.store.edit_note(note_id, note["text"] + "someone else\n")
        return note


def test_an_edit_made_meanwhile_is_never_overwritten(store):
    MemoryFiles(store).create("/memories/a.md", "one\n")
    (card,) = store.list_notes(kind="memory")
    files = MemoryFiles(notes=Meddling(store))
    with pytest.raises(MemoryCommandError, match="changed while this command ran; view it and try again"):
        files.str_replace("/memories/a.md", "one", "two")
    assert store.get_note(card.id).body == "one\nsomeone else\n"


def test_a_viewer_sees_only_files_it_may_see(store):
    store.set_project("alice:private", private=True, owner="alice")
    attempt = store.start_attempt("alice:private", author="alice").id
    alice = MemoryFiles(store, author="alice", viewer=Viewer("alice"), attempt=attempt)
    bob = MemoryFiles(store, author="bob", viewer=Viewer("bob"))
    alice.create("/memories/secret/codes.md", "zebra\n")
    assert "codes.md" in alice.view("/memories")
    listing = bob.view("/memories")
    assert "secret" not in listing and listing.endswith("0B\t/memories")
    for command in (
        {"command": "view", "path": "/memories/secret/codes.md"},
        {"command": "view", "path": "/memories/secret"},
        {"command": "str_replace", "path": "/memories/secret/codes.md", "old_str": "zebra", "new_str": "x"},
        {"command": "delete", "path": "/memories/secret"},
    ):
        assert "does not exist" in refused(bob, **command)
    # Bob's own file at the same path is his: the answer says nothing of Alice's.
    assert (
        bob.create("/memories/secret/codes.md", "mine\n") == "File created successfully at: /memories/secret/codes.md"
    )
    # Each is shown its own file (see the test below).
    assert alice.view("/memories/secret/codes.md").endswith("     1\tzebra\n     2\t")
    assert bob.view("/memories/secret/codes.md").endswith("     1\tmine\n     2\t")
    with pytest.raises(NotFoundError):
        store.get_note(store.list_notes(kind="memory", project="alice:private")[0].id, viewer=Viewer("bob"))


def test_a_file_put_later_at_ones_path_never_takes_its_place(backend):
    # Bob, who may not see Alice's private file, makes one at its path: Alice's agent must still
    # read and write its own (it wrote her secret into Bob's public note, which Bob then read).
    backend.set_project("alice:private", private=True, owner="alice")
    attempt = backend.start_attempt("alice:private", author="alice").id
    alice = MemoryFiles(backend, author="alice", viewer=Viewer("alice"), attempt=attempt)
    bob = MemoryFiles(backend, author="bob", viewer=Viewer("bob"))
    alice.create("/memories/progress.md", "plan\n")
    bob.create("/memories/progress.md", "bob's\n")
    assert alice.view("/memories/progress.md").endswith("     1\tplan\n     2\t")
    alice.str_replace("/memories/progress.md", "plan", "the key is hunter2")
    assert "hunter2" not in bob.view("/memories/progress.md")
    assert "hunter2" in alice.view("/memories/progress.md")
    # One who sees both and wrote neither (the owner) is shown the older, whichever changes last.
    owner = MemoryFiles(backend)
    assert "hunter2" in owner.view("/memories/progress.md")
    bob.str_replace("/memories/progress.md", "bob's", "bob's again")
    assert "hunter2" in owner.view("/memories/progress.md")
    # A note added by hand later at the path (kind, title and memory_path as the tool writes
    # them) does not take its place either.
    backend.add_note(memory_text("/memories/progress.md", "planted\n"), author="mallory")
    assert "hunter2" in owner.view("/memories/progress.md") and "hunter2" in alice.view("/memories/progress.md")


def test_a_rename_keeps_what_a_person_added_to_the_header(store):
    files = MemoryFiles(store)
    files.create("/memories/a.md", "body\n")
    (card,) = store.list_notes(kind="memory")
    text = store.get_note(card.id).text
    # A person rewrites the title line unquoted, tags the file and gives it a summary.
    text = text.replace('title: "/memories/a.md"', "title: /memories/a.md")
    text = text.replace("tags: [memory]", "tags: [memory, keep]")
    store.edit_note(card.id, text.replace("kind: memory", "kind: memory\nsummary: why it matters"))
    assert files.rename("/memories/a.md", "/memories/b.md") == "Successfully renamed /memories/a.md to /memories/b.md"
    moved = store.get_note(card.id)
    assert moved.title == "/memories/b.md" and moved.tags == ["memory", "keep"] and moved.summary == "why it matters"
    assert moved.body == "body\n" and files.view("/memories/b.md").endswith("     1\tbody\n     2\t")


def test_a_directory_changes_whole_or_not_at_all(store):
    attempt = store.start_attempt("shop", author="agent").id
    MemoryFiles(store, attempt=attempt).create("/memories/run/log.md", "ended\n")
    store.end_attempt(attempt, outcome="succeeded")
    files = MemoryFiles(store)
    files.create("/memories/run/open.md", "still open\n")
    before = files.view("/memories")
    with pytest.raises(FrozenError):
        files.rename("/memories/run", "/memories/old")
    with pytest.raises(FrozenError):
        files.delete("/memories/run")
    assert files.view("/memories") == before  # nothing moved, nothing deleted
    assert files.delete("/memories/run/open.md") == "Successfully deleted /memories/run/open.md"
    with pytest.raises(FrozenError):  # one file: refused by the edit itself
        files.str_replace("/memories/run/log.md", "ended", "x")


def test_the_note_of_a_file(store):
    text = memory_text('/memories/a "quoted" name.md', "body\n")
    note = store.add_note(text)
    assert note.title == '/memories/a "quoted" name.md' and note.kind == "memory" and note.body == "body\n"
    assert MemoryFiles(store).view('/memories/a "quoted" name.md').endswith("     1\tbody\n     2\t")


@pytest.mark.slow
def test_the_worst_inputs_are_linear(store):
    # A file near the store's 1 MiB limit: view, str_replace and insert on it, and a refusal of a
    # text found on every line, each in thread CPU time against a file a tenth its size.
    files = MemoryFiles(store)

    def work(lines: int, name: str) -> float:
        files.create(name, "ab\n" * lines)
        files.str_replace(name, "ab\n" * lines, "cd\n" * lines)  # the whole file replaced
        start = time.thread_time()
        files.view(name)
        files.view(name, [lines // 2, -1])
        files.insert(name, lines // 2, "middle")
        files.str_replace(name, "middle", "centre")
        with pytest.raises(MemoryCommandError, match=r"in lines: 1, 2, 3, .*, 100, \.\.\.\. Please ensure"):
            files.str_replace(name, "cd", "x")
        return time.thread_time() - start

    small, big = work(33_000, "/memories/small.md"), work(330_000, "/memories/big.md")
    assert big < 1.5 and big < 25 * small + 0.2, (small, big)


@pytest.mark.slow
def test_deep_directories_and_many_files(store):
    files = MemoryFiles(store)
    deep = "/memories/" + "/".join(f"d{i}" for i in range(31)) + "/f.md"
    files.create(deep, "x\n")
    assert files.view("/memories").endswith("2B\t/memories/d0/\n2B\t/memories/d0/d1/")
    files.rename("/memories/d0", "/memories/e0")
    assert files.view(deep.replace("/d0/", "/e0/")).endswith("     1\tx\n     2\t")
    with pytest.raises(MemoryCommandError, match="over 32 directories deep"):
        files.rename("/memories/e0", "/memories/z/e0")  # a file would land 33 levels deep: nothing moves
    assert files.view(deep.replace("/d0/", "/e0/")).endswith("     1\tx\n     2\t")
    for i in range(150):
        files.create(f"/memories/many/{i:03}.md", "y\n")
    start = time.thread_time()
    listing = files.view("/memories/many")
    assert listing.count("\n") == 151 and time.thread_time() - start < 1.0


def test_a_path_the_store_would_mask_is_refused_and_a_text_is_kept_masked(store):
    # The store masks a secret in a note's title, the path a file is found by: such a path is
    # refused (else the file made there could never be found again); in the text it is masked.
    files = MemoryFiles(store)
    key = "AKIAQ7ZK3M9XW2RT5VNB"  # made up, in AWS's form
    assert refused(files, command="create", path=f"/memories/{key}.md", file_text="x") == (
        "Error: a memory path cannot hold an aws-key: the store never keeps it"
    )
    files.create("/memories/ok.md", "x")
    assert "cannot hold" in refused(files, command="rename", old_path="/memories/ok.md", new_path=f"/memories/{key}")
    assert "<private>" in refused(files, command="create", path="/memories/<private>x</private>.md", file_text="x")
    files.create("/memories/deploy.md", f"use {key}\n")
    assert files.view("/memories/deploy.md").endswith("     1\tuse [redacted: aws-key]\n     2\t")
