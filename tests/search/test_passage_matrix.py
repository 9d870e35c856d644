"""The passage matrix both stores share, over an in-memory table: changes applied in place,
spare capacity, compaction at its threshold, the reload decision, and exact ranking."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from notewell.search import passage_matrix
from notewell.search.passage_matrix import PassageMatrix, rows_by_note

np = pytest.importorskip("numpy")

DIM = 8


def unit(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


class Table:
    """A store's note_vectors and vector_log: each put or delete is one log entry."""

    def __init__(self) -> None:
        self.vectors: dict[str, list[np.ndarray]] = {}
        self.log: list[tuple[int, str]] = []
        self.seq = 0

    def put(self, nid: str, *vectors: np.ndarray) -> None:
        self.vectors[nid] = [np.asarray(v, dtype=np.float32) for v in vectors]
        self.seq += 1
        self.log.append((self.seq, nid))

    def delete(self, nid: str) -> None:
        del self.vectors[nid]
        self.seq += 1
        self.log.append((self.seq, nid))

    def passages(self, notes):
        # start, stop: the chunk's number, so that a span says which passage it is
        return [(nid, k, k + 1, v.tobytes()) for nid in sorted(notes) for k, v in enumerate(self.vectors.get(nid, ()))]


class TableMatrix(PassageMatrix[Table]):
    def refresh(self, table: Table) -> None:
        first = table.log[0][0] if table.log else 0
        self._follow(table, first, table.seq, other=self._data is None)

    def _changed_notes(self, table, after, last):
        return sorted({nid for seq, nid in table.log if after < seq <= last})

    @contextmanager
    def _all_passages(self, table):
        rows = table.passages(table.vectors)
        yield len(rows), DIM, iter(rows)

    def _fresh_passages(self, table, notes):
        return table.passages(notes)


def loaded(n: int, per_note: int = 1) -> tuple[Table, TableMatrix]:
    table, matrix = Table(), TableMatrix()
    rng = np.random.default_rng(n)
    for i in range(n):
        table.put(f"n{i:04d}", *(unit(*rng.normal(size=DIM)) for _ in range(per_note)))
    matrix.refresh(table)
    return table, matrix


def assert_holds(matrix: TableMatrix, table: Table) -> None:
    """The matrix's live rows are exactly the table's passages; its dead rows are zero."""
    live = sorted((nid, matrix.spans[i], matrix.matrix[i].tobytes()) for i, nid in enumerate(matrix.notes) if nid)
    assert live == sorted((nid, (start, stop), blob) for nid, start, stop, blob in table.passages(table.vectors))
    assert not matrix.matrix[[i for i, nid in enumerate(matrix.notes) if nid is None]].any()
    assert (matrix._rows, matrix._dead) == rows_by_note(matrix.notes)
    assert matrix.live == len(matrix.notes) - matrix.notes.count(None)


def test_changes_are_applied_in_place_old_rows_dead_and_fresh_ones_appended():
    table, matrix = Table(), TableMatrix()
    table.put("a", unit(1), unit(1, 1))
    table.put("b", unit(0, 1))
    table.put("c", unit(0, 0, 1))
    matrix.refresh(table)
    assert (matrix.full_loads, matrix.seq, matrix.notes) == (1, 3, ["a", "a", "b", "c"])
    table.put("b", unit(0, 1, 1), unit(0, 1, 0, 1))
    table.delete("c")
    table.put("d", unit(0, 0, 0, 1))
    matrix.refresh(table)
    assert matrix.full_loads == 1 and matrix.seq == 6  # applied from the log
    assert matrix.notes == ["a", "a", None, None, "b", "b", "d"]
    assert matrix.spans[4:] == [(0, 1), (1, 2), (0, 1)]
    assert matrix._rows == {"a": [0, 1], "b": [4, 5], "d": [6]} and matrix.live == 5
    assert_holds(matrix, table)
    matrix.refresh(table)  # nothing new: nothing changes
    assert matrix.full_loads == 1 and len(matrix.notes) == 7


def test_fresh_rows_go_into_spare_capacity_and_the_array_grows_with_little_spare():
    table, matrix = loaded(2000)
    assert matrix._data.shape == (2000, DIM)  # a full load keeps no spare
    table.put("n0000", unit(1), unit(2), unit(3))
    matrix.refresh(table)
    grown = matrix._data
    assert len(grown) == 2000 + 3 + 2000 // 16  # spare: a sixteenth of the rows in use
    table.put("n0001", unit(4))
    matrix.refresh(table)
    assert matrix._data is grown and len(matrix.notes) == 2004  # fitted into the spare rows
    assert_holds(matrix, table)

    small_table, small = loaded(10)
    small_table.put("n0000", unit(1))
    small.refresh(small_table)
    assert len(small._data) == 11 + 64  # never less than 64 spare rows


def test_a_read_only_array_is_copied_into_memory_before_it_is_changed():
    table, matrix = loaded(5)
    table.put("n0001", unit(1))
    matrix.refresh(table)  # now with spare rows
    matrix._data.flags.writeable = False  # as a memory-mapped sidecar is
    before = matrix._data
    table.put("n0002", unit(2))
    matrix.refresh(table)
    assert matrix._data is not before and matrix._data.flags.writeable
    assert_holds(matrix, table)


def test_dead_rows_are_compacted_once_more_than_compact_min_and_a_quarter(monkeypatch):
    monkeypatch.setattr(passage_matrix, "COMPACT_MIN", 3)
    table, matrix = loaded(8)
    for k, nid in enumerate(["n0000", "n0001", "n0002"]):
        table.put(nid, unit(k + 1))
        matrix.refresh(table)
    assert (len(matrix.notes), matrix._dead) == (11, 3)  # 3 dead: not more than max(3, 11 // 4)
    table.put("n0003", unit(5))
    matrix.refresh(table)  # 4 dead of 12: more than max(3, 3)
    assert (len(matrix.notes), matrix._dead, matrix.live) == (8, 0, 8) and None not in matrix.notes
    assert matrix._data.flags.c_contiguous and len(matrix._data) == 8
    assert matrix.full_loads == 1
    assert_holds(matrix, table)

    monkeypatch.setattr(passage_matrix, "COMPACT_MIN", 1)
    table, matrix = loaded(40)
    for nid in [f"n{i:04d}" for i in range(10)]:
        table.delete(nid)
    matrix.refresh(table)
    assert matrix._dead == 10  # a quarter of the 40 rows: not more
    table.delete("n0010")
    matrix.refresh(table)
    assert matrix._dead == 0 and len(matrix.notes) == matrix.live == 29
    assert_holds(matrix, table)


def test_every_note_deleted_compacts_to_an_empty_matrix(monkeypatch):
    monkeypatch.setattr(passage_matrix, "COMPACT_MIN", 0)
    table, matrix = loaded(3)
    for nid in list(table.vectors):
        table.delete(nid)
    matrix.refresh(table)
    assert matrix.notes == [] and matrix.live == 0 and matrix._data.shape == (0, DIM)
    assert matrix._rank(unit(1), 5, None) == []


def test_a_full_load_when_many_notes_changed_the_log_was_trimmed_or_the_matrix_holds_another(monkeypatch):
    monkeypatch.setattr(passage_matrix, "RELOAD_MIN", 2)
    table, matrix = loaded(20)
    for i in range(5):  # a quarter of the 20 live rows: not more
        table.put(f"n{i:04d}", unit(i + 1))
    matrix.refresh(table)
    assert matrix.full_loads == 1 and len(matrix.notes) == 25
    for i in range(6):
        table.put(f"n{i:04d}", unit(i + 2))
    matrix.refresh(table)
    assert matrix.full_loads == 2 and len(matrix.notes) == 20 and matrix.seq == table.seq
    assert_holds(matrix, table)

    table.put("n0007", unit(1))
    table.put("n0008", unit(2))
    table.log = table.log[-1:]  # the entry after the matrix's position is gone
    matrix.refresh(table)
    assert matrix.full_loads == 3 and matrix.seq == table.seq
    assert_holds(matrix, table)

    matrix._follow(table, table.log[0][0], table.seq, other=True)  # e.g. another model
    assert matrix.full_loads == 4
    assert_holds(matrix, table)


def test_ranking_gives_each_note_once_with_its_best_passage_among_the_allowed():
    table, matrix = Table(), TableMatrix()
    table.put("a", unit(0, 1), unit(1, 0.1))  # its second passage is the nearest
    table.put("b", unit(1, 0.5))
    table.put("c", unit(0, 0, 1))
    table.put("d", unit(1, 0.3))
    matrix.refresh(table)
    table.delete("d")  # a dead row scores 0 and is skipped
    matrix.refresh(table)
    got = matrix._rank(unit(1), 10, None)
    assert [(nid, span) for nid, _score, span in got] == [("a", (1, 2)), ("b", (0, 1)), ("c", (0, 1))]
    assert [round(score, 4) for _n, score, _s in got] == [round(float(unit(1, 0.1) @ unit(1)), 4), 0.8944, 0.0]
    assert [nid for nid, _s, _p in matrix._rank(unit(1), 2, None)] == ["a", "b"]
    assert [nid for nid, _s, _p in matrix._rank(unit(1), 10, {"c", "b", "d"})] == ["b", "c"]
    assert TableMatrix()._rank(unit(1), 5, None) == []


def test_too_few_notes_in_the_best_passages_widens_to_every_passage():
    table, matrix = Table(), TableMatrix()
    # 300 passages of one note score above every other note's: the best 256 hold one note.
    table.put("long", *(unit(1, 0.001 * k) for k in range(300)))
    table.put("short", unit(1, 1))
    table.put("other", unit(0, 1))
    matrix.refresh(table)
    assert [nid for nid, _s, _p in matrix._rank(unit(1), 2, None)] == ["long", "short"]
    assert [nid for nid, _s, _p in matrix._rank(unit(1), 1, {"other"})] == ["other"]


def test_candidates_from_a_store_are_ranked_and_widened_when_too_few():
    table = Table()
    for i in range(5):
        table.put(f"n{i}", unit(1, i))

    class Candidates(TableMatrix):
        asked: list[int] = []

        def _candidates(self, wanted, want):
            self.asked.append(want)
            pool = np.array([3, 1])
            return pool, self.matrix[pool] @ wanted

    matrix = Candidates()
    matrix.refresh(table)
    assert [nid for nid, _s, _p in matrix._rank(unit(1), 2, None)] == ["n1", "n3"]
    assert matrix.asked == [256]
    # too few among the candidates: every passage is scored
    assert [nid for nid, _s, _p in matrix._rank(unit(1), 3, None)] == ["n0", "n1", "n2"]
    assert [nid for nid, _s, _p in matrix._rank(unit(1), 1, {"n4"})] == ["n4"]
