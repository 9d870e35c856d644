"""Reads on many threads of one store (issue 20): they run beside each other and beside a
write, each on its own connection in one snapshot, and a swap of the index waits for them.

The tests hold a read (or a write) still at a known point with a hook and events, then check
what another thread could do meanwhile: no test measures a duration.
"""

from __future__ import annotations

import gc
import hashlib
import random
import sqlite3
import threading

import pytest

import notewell
from notewell.backends.sqlite import backend as store_module
from notewell.backends.sqlite import records as sqlite_records
from notewell.search.embedders import HashEmbedder
from tests.conftest import wait_for

LONG = 30.0  # seconds any event is waited for: only a hang (the old store-wide lock) takes it


@pytest.fixture
def s(store_dir):
    store = notewell.open(store_dir, embedder=HashEmbedder(64))
    store.add_notes([f"# note {i}\n\nplain words about otters, number {i}\n" for i in range(30)])
    store.list_notes()  # the first read checks the folder
    yield store
    store.close()


class Held:
    """A hook that stops the thread calling it (the first *times* calls) until released."""

    def __init__(self, times: int = 1) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.times = times
        self.owner: int | None = None

    def stop_here(self) -> None:
        if self.times and (self.owner is None or self.owner == threading.get_ident()):
            self.times -= 1
            self.owner = threading.get_ident()
            self.entered.set()
            assert self.release.wait(LONG), "never released"


def in_thread(fn, *args, **kwargs) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc
        finally:
            out["done"] = True

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def finish(thread: threading.Thread, out: dict):
    thread.join(LONG)
    assert out.get("done"), "the thread did not finish"
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_a_read_held_up_does_not_hold_up_other_reads_or_a_write(s, monkeypatch):
    held = Held()
    real = sqlite_records.list_cards

    def slow_list_cards(*args, **kwargs):
        first = real(*args, **kwargs)  # the read's snapshot begins here
        held.stop_here()
        return first + real(*args, **kwargs)  # both halves, as one list of cards

    monkeypatch.setattr(sqlite_records, "list_cards", slow_list_cards)
    slow, slow_out = in_thread(s.list_notes, limit=100)
    assert held.entered.wait(LONG)
    # Other reads, and a write, run to the end while that read is held inside the store.
    searched, search_out = in_thread(s.search_notes, "otters", limit=5)
    assert len(finish(searched, search_out)) == 5
    wrote, write_out = in_thread(s.add_note, "# late\n\nwritten while a read was held up\n")
    new = finish(wrote, write_out)
    found, found_out = in_thread(s.get_note, new.id)
    assert finish(found, found_out).title == "late"  # a read sees every write committed before it
    assert not slow_out.get("done")
    held.release.set()
    both = finish(slow, slow_out)
    before, again = both[: len(both) // 2], both[len(both) // 2 :]
    # The held read saw one snapshot throughout: the note written meanwhile is in neither half.
    assert before and [c.id for c in before] == [c.id for c in again]
    assert new.id not in {c.id for c in before}
    assert len(before) == 30


def test_a_read_runs_beside_a_write_in_progress_and_sees_it_once_committed(s, monkeypatch):
    held = Held()
    target = s.list_notes(limit=1)[0].id
    real = s.backend.syncer.commit_records

    def slow_commit(records, **kwargs):
        real(records, **kwargs)  # the file and the journal line are written, nothing committed
        held.stop_here()

    monkeypatch.setattr(s.backend.syncer, "commit_records", slow_commit)
    writer, write_out = in_thread(s.add_note, "# pending\n\nwords only the pending note has: quagga\n")
    assert held.entered.wait(LONG)
    reader, read_out = in_thread(
        lambda: (s.search_notes("quagga"), s.get_note(target).id, len(s.list_notes(limit=100)))
    )
    assert finish(reader, read_out) == ([], target, 30)  # the index as last committed, whole
    assert not write_out.get("done")
    held.release.set()
    note = finish(writer, write_out)
    assert [c.id for c in s.search_notes("quagga")] == [note.id]


def test_a_reindex_waits_for_the_reads_inside_and_later_reads_use_the_new_index(s, monkeypatch):
    held = Held()
    order: list[str] = []
    real_list, real_begin = sqlite_records.list_cards, store_module.Rebuild.begin

    def slow_list_cards(*args, **kwargs):
        held.stop_here()
        cards = real_list(*args, **kwargs)  # the old index, not closed or moved under the read
        order.append("read done")
        return cards

    def begin(self):
        order.append("rebuild begins")
        return real_begin(self)

    real_keyword = store_module.keyword_search

    def later_keyword(*args, **kwargs):
        order.append("later read")
        return real_keyword(*args, **kwargs)

    monkeypatch.setattr(sqlite_records, "list_cards", slow_list_cards)
    monkeypatch.setattr(store_module.Rebuild, "begin", begin)
    monkeypatch.setattr(store_module, "keyword_search", later_keyword)
    old = s.backend.index
    reader, read_out = in_thread(s.list_notes, limit=100)
    assert held.entered.wait(LONG)
    rebuild, rebuild_out = in_thread(s.reindex)
    assert wait_for(lambda: s.backend.gate._swapper is not None, LONG)  # the rebuild waits at the gate
    later, later_out = in_thread(s.search_notes, "otters", limit=50)  # comes while the gate is shut
    held.release.set()
    assert len(finish(reader, read_out)) == 30
    finish(rebuild, rebuild_out)
    assert len(finish(later, later_out)) == 30
    # The later read waited at the shut gate: it ran only once the rebuild had begun.
    assert order == ["read done", "rebuild begins", "later read"]
    assert old.closed and s.backend.index is not old and old.readers() == 0


def test_a_read_waits_for_a_catch_up_in_progress_and_sees_what_it_applied(s, store_dir, monkeypatch):
    held = Held()
    real = s.backend.syncer.paths

    def slow_paths(*args, **kwargs):
        held.stop_here()  # the catch-up holds the lock, the change not applied yet
        return real(*args, **kwargs)

    waiting = threading.Event()

    class Turn(threading.Condition):
        def wait(self, timeout=None):
            waiting.set()
            return super().wait(timeout)

    monkeypatch.setattr(s.backend.syncer, "paths", slow_paths)
    monkeypatch.setattr(s.backend, "_refresh_turn", Turn(threading.Lock()))
    (store_dir / "outside.md").write_text("# outside\n\nwritten beside the store: wombat\n")
    first, first_out = in_thread(s.search_notes, "wombat")
    assert held.entered.wait(LONG)
    second, second_out = in_thread(s.search_notes, "wombat")
    assert waiting.wait(LONG)  # the second read waits for the catch-up, not for a lock
    held.release.set()
    assert [c.title for c in finish(first, first_out)] == ["outside"]
    assert [c.title for c in finish(second, second_out)] == ["outside"]


@pytest.mark.slow
def test_read_connections_are_read_only_per_thread_and_closed_with_their_thread(s):
    index = s.backend.index
    with index.reading():
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            index.conn.execute("INSERT INTO state(key, value) VALUES ('x', 'y')")
        with index.write():  # a write begun inside a read goes through the write connection
            index.set_state("x", "y")
        assert index.get_state("x") == "y"
    threads = [in_thread(s.search_notes, "otters") for _ in range(6)]
    for thread, out in threads:
        finish(thread, out)
    gc.collect()
    assert wait_for(lambda: index.readers() <= 1, LONG)  # this thread's own, from the block above
    # A thread that stays keeps its connection, until the store closes them all.
    read, go_on = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def stay() -> None:
        s.list_notes()
        read.set()
        go_on.wait(LONG)
        try:
            s.list_notes()
        except BaseException as exc:  # noqa: BLE001 - checked below
            errors.append(exc)

    stayer = threading.Thread(target=stay)
    stayer.start()
    assert read.wait(LONG)
    assert index.readers() == 2
    s.close()
    assert index.readers() == 0
    go_on.set()
    stayer.join(LONG)
    assert len(errors) == 1 and "closed" in str(errors[0])


def test_closing_waits_for_a_read_in_flight(s, monkeypatch):
    held = Held()
    real = sqlite_records.list_cards

    def slow_list_cards(*args, **kwargs):
        held.stop_here()
        return real(*args, **kwargs)

    monkeypatch.setattr(sqlite_records, "list_cards", slow_list_cards)
    reader, read_out = in_thread(s.list_notes, limit=100)
    assert held.entered.wait(LONG)
    closer, close_out = in_thread(s.close)
    assert wait_for(lambda: s.backend.gate._swapper is not None, LONG)
    held.release.set()
    assert len(finish(reader, read_out)) == 30  # finished on its connection, then closed
    finish(closer, close_out)
    assert s.backend.index.closed


def _text(owner: int, seq: int, version: int) -> str:
    payload = f"owner{owner} note{seq} version{version} " + "filler " * (version % 7)
    return f"# w{owner} {seq}\n\n{payload}\nsum {hashlib.sha256(payload.encode()).hexdigest()}\n"


def _whole(note) -> tuple[int, int, int]:
    """(owner, seq, version) of a note's text, checked against its checksum line."""
    body = note.text.split("\n\n", 1)[1]
    payload, _, tail = body.rpartition("\nsum ")
    assert hashlib.sha256(payload.encode()).hexdigest() == tail.strip(), f"torn text: {note.text!r}"
    words = payload.split()
    return int(words[0][5:]), int(words[1][4:]), int(words[2][7:])


@pytest.mark.slow
def test_writes_and_reads_from_many_threads_keep_every_invariant(store_dir):
    s = notewell.open(store_dir, embedder=HashEmbedder(64))
    stop = threading.Event()
    errors: list[str] = []
    acked: dict[int, dict[str, tuple[int, int, bool]]] = {w: {} for w in range(3)}  # id -> (seq, version, live)
    reads = [0]

    def writer(w: int) -> None:
        rng = random.Random(w)
        try:
            for seq in range(40):
                live = [nid for nid, (_sq, _v, alive) in acked[w].items() if alive]
                move = rng.random()
                if live and move < 0.35:
                    nid = rng.choice(live)
                    sq, version, _ = acked[w][nid]
                    note = s.edit_note(nid, _text(w, sq, version + 1))
                    assert note.revision == version + 1
                    acked[w][nid] = (sq, version + 1, True)
                elif live and move < 0.45:
                    nid = rng.choice(live)
                    s.delete_note(nid)
                    acked[w][nid] = (*acked[w][nid][:2], False)
                else:
                    note = s.add_note(_text(w, seq, 1), author=f"w{w}")
                    acked[w][note.id] = (seq, 1, True)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(f"writer {w}: {exc!r}")

    def reader(r: int) -> None:
        rng = random.Random(100 + r)
        try:
            while not stop.is_set():
                kind = rng.random()
                if kind < 0.4:
                    cards = s.search_notes(f"owner{rng.randrange(3)}", limit=50)
                else:
                    cards = s.list_notes(limit=50)
                ids = [c.id for c in cards]
                assert len(ids) == len(set(ids)), "a note listed twice"
                for card in rng.sample(cards, min(3, len(cards))):
                    try:
                        note = s.get_note(card.id)
                    except notewell.NotFoundError:
                        continue  # deleted since the list was made
                    owner, _seq, version = _whole(note)
                    assert note.revision == version, f"{note.id}: revision {note.revision} with version {version}"
                    assert note.author == f"w{owner}"
                reads[0] += 1
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(f"reader {r}: {exc!r}")

    writers = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
    readers = [threading.Thread(target=reader, args=(r,)) for r in range(4)]
    for t in writers + readers:
        t.start()
    for t in writers:
        t.join(300)
    stop.set()
    for t in readers:
        t.join(60)
    assert errors == []
    assert reads[0] > 0
    live = {nid: v for w in acked.values() for nid, v in w.items() if v[2]}
    listed = {c.id for c in s.list_notes(limit=1000)}
    assert listed == set(live)
    assert sorted(f"{nid}.md" for nid in live) == sorted(p.name for p in store_dir.glob("*.md"))
    for nid, (_seq, version, _alive) in live.items():
        note = s.get_note(nid)
        assert _whole(note)[2] == version == note.revision
        assert note.text == (store_dir / f"{nid}.md").read_text()
    for w in range(3):
        mine = {nid for nid, v in acked[w].items() if v[2]}
        assert {c.id for c in s.search_notes(f"owner{w}", limit=100)} == mine
    conn = s.backend.index.conn
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.execute("INSERT INTO notes_fts(notes_fts, rank) VALUES ('integrity-check', 1)")
    assert s.refresh().total == 0  # the index matches the folder: nothing to repair
    s.close()


@pytest.mark.slow
def test_semantic_searches_on_many_threads_while_the_vectors_change(s):
    s.embed_pending()
    errors: list[str] = []
    stop = threading.Event()

    def search(k: int) -> None:
        try:
            while not stop.is_set():
                cards = s.search_notes("otters number", mode="semantic", limit=10)
                assert cards and len({c.id for c in cards}) == len(cards)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(f"search {k}: {exc!r}")

    threads = [threading.Thread(target=search, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    try:
        for i, card in enumerate(s.list_notes(limit=12)):
            s.edit_note(card.id, f"# note {i}\n\nrewritten about badgers, round {i}\n")
            s.embed_pending()
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    assert errors == []
    assert s.search_notes("badgers", mode="semantic", limit=12)[0].title.startswith("note")
    assert s.backend.vectors.live == 30


def test_a_read_behind_the_matrix_still_gets_its_limit_of_cards(tmp_path, monkeypatch):
    # Another thread brings the shared matrix past this read's snapshot; the read must still
    # find *limit* notes among those its snapshot holds.
    from notewell.backends.sqlite import semantic
    from notewell.search.embedders import HashEmbedder

    store = notewell.open(tmp_path / "n", embedder=HashEmbedder(64))
    try:
        store.add_notes([f"# old {i}\n\nplain words about otters, number {i}\n" for i in range(12)])
        store.embed_pending()
        entered, release, held = threading.Event(), threading.Event(), []
        real = semantic.VectorMatrix.nearest

        def nearest(self, *args, **kwargs):
            if threading.get_ident() in held:
                entered.set()
                release.wait(30)
            return real(self, *args, **kwargs)

        monkeypatch.setattr(semantic.VectorMatrix, "nearest", nearest)
        out = {}

        def search():
            held.append(threading.get_ident())
            out["cards"] = store.search_notes("otters number", mode="semantic", limit=12)

        thread = threading.Thread(target=search)
        thread.start()
        assert entered.wait(30)
        store.add_notes([f"# new {i}\n\notters number otters number\n" for i in range(6)])
        store.embed_pending()
        store.search_notes("otters number", mode="semantic", limit=12)
        release.set()
        thread.join(30)
        assert len(out["cards"]) == 12 and all(c.title.startswith("old") for c in out["cards"])
    finally:
        store.close()


def test_a_read_with_nothing_to_catch_up_ends_a_deferral(tmp_path):
    from notewell.search.embedders import HashEmbedder

    store = notewell.open(tmp_path / "d", embedder=HashEmbedder(64))
    try:
        store.add_notes([f"# n{i}\n\nwords {i}\n" for i in range(5)])
        store.list_notes()
        entered, release = threading.Event(), threading.Event()
        real = store.backend.syncer.commit_records

        def held_commit(records, **kwargs):
            real(records, **kwargs)
            if threading.current_thread().name == "writer":
                entered.set()
                release.wait(30)

        store.backend.syncer.commit_records = held_commit
        writer = threading.Thread(target=lambda: store.start_attempt("proj", author="a"), name="writer")
        writer.start()
        assert entered.wait(30)
        reader, read_out = in_thread(store.list_notes)
        assert len(finish(reader, read_out)) == 5  # served beside the write, as last committed
        assert store.backend._deferred_since is not None
        release.set()
        writer.join(30)
        store.list_notes()  # nothing to catch up: the deferral is over
        # Left set, it would make a read beside a write more than 2 s later wait for the write.
        assert store.backend._deferred_since is None
    finally:
        store.close()
