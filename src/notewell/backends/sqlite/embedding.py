"""The embedding queue: notes waiting for vectors, embedded off the write path.

Every write queues its note in the same transaction; :func:`embed_pending` embeds the
queue a batch at a time, outside any transaction, and replaces each note's vectors in
one, so a crash leaves the old vectors or the new. Each vector is stored with the key of
what made it (:func:`passage_key`), so that a rebuilt index can take it over.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from ...model.header import parse_note
from ...search.embedders import Embedder, numpy
from ...search.passages import passages
from .index import Index
from .old_revisions import keep_superseded_vectors

__all__ = ["embed_pending", "note_passages", "passage_key", "pending_count"]

_BATCH = 64


# The notes with vectors of a model other than the one given twice: two ranges of the model
# index, not !=, which the planner answers by reading every vector (1 s at 1M passages).
_OTHER_MODELS = (
    "SELECT note_id FROM note_vectors WHERE model < ? UNION SELECT note_id FROM note_vectors WHERE model > ?"
)
_OTHER_MODELS_COUNT = f"SELECT count(*) FROM ({_OTHER_MODELS}) WHERE note_id NOT IN (SELECT note_id FROM embed_queue)"


def passage_key(model_id: str, dim: int, text: str) -> bytes:
    """What a vector was made from: sha256 of the model, its dimension and the passage text."""
    return hashlib.sha256(f"{model_id}\0{dim}\0{text}".encode("utf-8", "surrogatepass")).digest()


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
    return queued + other


def embed_pending(
    index: Index,
    embedder: Embedder,
    read_text: Callable[[str], str | None],
    *,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed queued notes (and notes embedded by another model); returns how many.

    Each note's vectors replace the old ones in one transaction, so a crash leaves the
    old vectors or the new, and the note stays queued until its new ones are in.
    """
    np = numpy()
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
    done = 0
    for at in range(0, len(todo), _BATCH):
        group = todo[at : at + _BATCH]
        work: list[tuple[str, str, list[tuple[int, int, str]]]] = []
        for nid in group:
            row = index.conn.execute("SELECT sha256, title FROM note_index WHERE id = ?", (nid,)).fetchone()
            have = index.conn.execute(
                "SELECT sha256, model FROM note_vectors WHERE note_id = ? AND chunk = 0", (nid,)
            ).fetchone()
            if row is None or (have is not None and have == (row[0], embedder.model_id)):
                work.append((nid, "", []))  # gone, or already embedded from this very text
                continue
            text = read_text(nid)
            if text is None:
                work.append((nid, "", []))
                continue
            work.append((nid, row[0], note_passages(row[1], text)))
        texts = [p[2] for _nid, _sha, parts in work for p in parts]
        vectors = embedder.embed_documents(texts) if texts else np.zeros((0, embedder.dim), np.float32)
        model, dim = embedder.model_id, embedder.dim  # a remote model's dim is known once it answered
        with index.write():
            position = 0
            written = False
            for nid, sha, parts in work:
                current = index.conn.execute("SELECT sha256 FROM note_index WHERE id = ?", (nid,)).fetchone()
                if parts and (current is None or current[0] != sha):
                    position += len(parts)
                    continue  # changed while embedding: it was queued again, its turn comes
                if parts:
                    written = True
                    keep_superseded_vectors(index.conn, nid)  # an older revision's meaning stays searchable
                    index.conn.execute("DELETE FROM note_vectors WHERE note_id = ?", (nid,))
                    index.conn.executemany(
                        "INSERT INTO note_vectors(note_id, chunk, model, dim, sha256, start, stop, vector, key)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [
                            (nid, k, model, dim, sha, a, b, vectors[position + k].tobytes(), passage_key(model, dim, t))
                            for k, (a, b, t) in enumerate(parts)
                        ],
                    )
                    position += len(parts)
                # Only the queue entry that was read: an edit meanwhile queued the note again.
                index.conn.execute(
                    "DELETE FROM embed_queue WHERE note_id = ? AND queued_at = ?", (nid, queued.get(nid, ""))
                )
            if written:
                index.log_vectors([nid for nid, _sha, parts in work if parts])
        done += len(group)
        if progress is not None:
            progress(done, len(todo))
    return done
