"""The embedding queue: notes waiting for vectors, embedded off the write path.

Every write queues its note in the same transaction; :func:`embed_pending` embeds the
queue a batch at a time, outside any transaction, and replaces each note's vectors in
one, so a crash leaves the old vectors or the new. Each vector is stored with the key of
what made it (:func:`passage_key`), so that a rebuilt index can take it over.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...model.header import parse_note
from ...search.embedders import Embedder, numpy
from ...search.passages import OLD_CAP, passage_key, passages
from .index import Index
from .old_vectors import keep_superseded_vectors

__all__ = ["embed_pending", "note_passages", "passage_key", "pending_count"]

_BATCH = 64  # notes embedded and written together...
_BATCH_PASSAGES = 256  # ...or fewer, once their passages reach this many
# The index state that says its notes of exactly OLD_CAP vectors were queued once.
_UNCAPPED = "passages_uncapped"


# The notes with vectors of a model other than the one given twice: two ranges of the model
# index, not !=, which the planner answers by reading every vector (1 s at 1M passages).
_OTHER_MODELS = (
    "SELECT note_id FROM note_vectors WHERE model < ? UNION SELECT note_id FROM note_vectors WHERE model > ?"
)
_OTHER_MODELS_COUNT = f"SELECT count(*) FROM ({_OTHER_MODELS}) WHERE note_id NOT IN (SELECT note_id FROM embed_queue)"


def note_passages(title: str, text: str) -> list[tuple[int, int, str]]:
    """The passages embedded for a note with this indexed title and text."""
    return passages(title, parse_note(text).body)


def pending_count(index: Index, model_id: str) -> int:
    """Notes waiting to be embedded, plus notes with vectors of another model."""
    (queued,) = index.conn.execute("SELECT count(*) FROM embed_queue").fetchone()
    (other,) = index.conn.execute(
        _OTHER_MODELS_COUNT,
        (model_id, model_id),
    ).fetchone()
    return int(queued + other)


def embed_pending(
    index: Index,
    embedder: Embedder,
    read_text: Callable[[str], str | None],
    *,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    passages_limit: int | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> int:
    """Embed queued notes (and notes embedded by another model); returns how many.

    Each note's vectors replace the old ones in one transaction, so a crash leaves the
    old vectors or the new, and the note stays queued until its new ones are in. Notes go
    in groups of at most _BATCH notes and about _BATCH_PASSAGES passages (a long note's
    hundreds of passages are a group of their own); a passage whose text the note's vectors
    already hold (a conversation that grew at its end) keeps its vector. With
    *passages_limit*, no new group starts once that many passages were embedded; *should_stop*
    is asked between the model's calls (of _BATCH_PASSAGES each) and before each group, and a
    True leaves the group in hand unwritten, queued still (a note of a thousand passages need
    not hold a reindex for minutes).
    """
    _requeue_capped(index)
    with index.write():
        # Vectors of another model are never mixed with this one's: their notes are queued again.
        index.conn.execute(
            f"INSERT OR IGNORE INTO embed_queue(note_id, queued_at) SELECT note_id, '' FROM ({_OTHER_MODELS})",
            (embedder.model_id, embedder.model_id),
        )
    queued = dict(index.conn.execute("SELECT note_id, queued_at FROM embed_queue ORDER BY queued_at, note_id"))
    todo = list(queued)
    if limit is not None:
        todo = todo[:limit]
    done = spent = 0
    group: list[_Work] = []
    size = 0
    for at, nid in enumerate(todo):
        if not group and should_stop is not None and should_stop():
            break
        work = _read_work(index, embedder, nid, read_text)
        group.append(work)
        size += len(work.parts)
        if len(group) < _BATCH and size < _BATCH_PASSAGES and at + 1 < len(todo):
            continue
        embedded = _embed_group(index, embedder, group, queued, should_stop)
        if embedded is None:
            break
        spent += embedded
        done += len(group)
        group, size = [], 0
        if progress is not None:
            progress(done, len(todo))
        if passages_limit is not None and spent >= passages_limit:
            break
    return done


@dataclass(slots=True)
class _Work:
    """One queued note: its text's hash and passages (none: gone, or embedded from this text)."""

    nid: str
    sha: str = ""
    parts: list[tuple[int, int, str]] = field(default_factory=list)


def _read_work(index: Index, embedder: Embedder, nid: str, read_text: Callable[[str], str | None]) -> _Work:
    row = index.conn.execute("SELECT sha256, title FROM note_index WHERE id = ?", (nid,)).fetchone()
    have = index.conn.execute(
        "SELECT sha256, model FROM note_vectors WHERE note_id = ? AND chunk = 0", (nid,)
    ).fetchone()
    if row is None:
        return _Work(nid)  # gone
    embedded = have is not None and have == (row[0], embedder.model_id)
    if embedded and _vector_count(index, nid) != OLD_CAP:
        return _Work(nid)  # already embedded from this very text
    text = read_text(nid)
    parts = [] if text is None else note_passages(row[1], text)
    if embedded and len(parts) == OLD_CAP:
        return _Work(nid)  # as many passages as the cap held: all of them
    return _Work(nid, row[0], parts) if parts else _Work(nid)


def _vector_count(index: Index, nid: str) -> int:
    (count,) = index.conn.execute("SELECT count(*) FROM note_vectors WHERE note_id = ?", (nid,)).fetchone()
    return int(count)


def _requeue_capped(index: Index) -> None:
    """Once per index: queue the notes embedded while a note's passages stopped at OLD_CAP, so
    that the rest of them is embedded (their first OLD_CAP keep their vectors)."""
    if index.get_state(_UNCAPPED) == "1":
        return
    with index.write():
        index.conn.execute(
            "INSERT OR IGNORE INTO embed_queue(note_id, queued_at)"
            " SELECT note_id, '' FROM note_vectors GROUP BY note_id HAVING count(*) = ?",
            (OLD_CAP,),
        )
        index.set_state(_UNCAPPED, "1")


def _held_vectors(index: Index, embedder: Embedder, group: list[_Work]) -> dict[bytes, bytes]:
    """The vectors the group's notes hold now, by passage key (this model's only)."""
    held: dict[bytes, bytes] = {}
    for work in group:
        if work.parts:
            for key, vector in index.conn.execute(
                "SELECT key, vector FROM note_vectors WHERE note_id = ? AND model = ? AND key IS NOT NULL",
                (work.nid, embedder.model_id),
            ):
                held[bytes(key)] = vector
    return held


def _embed_group(
    index: Index,
    embedder: Embedder,
    group: list[_Work],
    queued: dict[str, str],
    should_stop: Callable[[], bool] | None = None,
) -> int | None:
    """Embed and write one group; returns how many passages the model embedded, or None when
    *should_stop* said so between two calls of the model (nothing written: the notes stay queued)."""
    np = numpy()
    held = _held_vectors(index, embedder, group)
    asked = embedder.dim
    # Which passages the note holds already is decided once, under the dimension asked with.
    reuse = [[held.get(passage_key(embedder.model_id, asked, t)) for _a, _b, t in w.parts] for w in group]
    fresh = [
        t
        for w, kept in zip(group, reuse, strict=True)
        for (_a, _b, t), v in zip(w.parts, kept, strict=True)
        if v is None
    ]
    chunks = []
    for at in range(0, len(fresh), _BATCH_PASSAGES):
        if at and should_stop is not None and should_stop():
            return None
        chunks.append(embedder.embed_documents(fresh[at : at + _BATCH_PASSAGES]))
    vectors = np.concatenate(chunks) if chunks else np.zeros((0, embedder.dim), np.float32)
    model, dim = embedder.model_id, embedder.dim  # a remote model's dim is known once it answered
    keys = [[passage_key(model, dim, t) for _a, _b, t in w.parts] for w in group]
    position = 0
    with index.write():
        written = []
        for work, ks, kept in zip(group, keys, reuse, strict=True):
            rows = []
            for k, ((a, b, _t), key, blob) in enumerate(zip(work.parts, ks, kept, strict=True)):
                if blob is None:
                    blob = vectors[position].tobytes()
                    position += 1
                rows.append((work.nid, k, model, dim, work.sha, a, b, blob, key))
            current = index.conn.execute("SELECT sha256 FROM note_index WHERE id = ?", (work.nid,)).fetchone()
            if work.parts and (current is None or current[0] != work.sha):
                continue  # changed while embedding: it was queued again, its turn comes
            if work.parts:
                written.append(work.nid)
                keep_superseded_vectors(index.conn, work.nid, set(ks))  # an older revision's meaning stays searchable
                index.conn.execute("DELETE FROM note_vectors WHERE note_id = ?", (work.nid,))
                index.conn.executemany(
                    "INSERT INTO note_vectors(note_id, chunk, model, dim, sha256, start, stop, vector, key)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
            # Only the queue entry that was read: an edit meanwhile queued the note again.
            index.conn.execute(
                "DELETE FROM embed_queue WHERE note_id = ? AND queued_at = ?", (work.nid, queued.get(work.nid, ""))
            )
        if written:
            index.log_vectors(written)
    return len(fresh)
