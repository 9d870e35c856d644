"""The SQLite index beside the notes: tables and connection set-up.

Everything here is derived from the folder and can be rebuilt from it; the
schema version lives in ``PRAGMA user_version`` and a mismatch means rebuild.
"""

from __future__ import annotations

import sqlite3

__all__ = [
    "NOTE_INDEXES",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TITLE_WEIGHT",
    "configure",
    "create_schema",
]

# 14: a note without a title or heading is titled by its first line (model.note.line_title),
# not its file name: an index of 13 is rebuilt for it.
# 15: note_supersedes (the header's supersedes ids): an index of 14 is rebuilt for it.
SCHEMA_VERSION = 15
TITLE_WEIGHT = 3.0
FTS_HASH_BYTES = 64 * 1024 * 1024


SCHEMA = f"""
CREATE TABLE state(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;

-- The journal, applied: one row per note id ever seen, and one per revision.
CREATE TABLE journal_meta(
  id TEXT PRIMARY KEY,
  path TEXT,
  author TEXT,
  model TEXT,
  created_at TEXT,
  updated_at TEXT,
  revision INTEGER NOT NULL DEFAULT 0,
  sha256 TEXT,
  deleted INTEGER NOT NULL DEFAULT 0,
  attempt TEXT,
  note_kind TEXT,
  deleted_at TEXT
);
CREATE INDEX journal_meta_path ON journal_meta(path);
CREATE INDEX journal_meta_gone ON journal_meta(sha256) WHERE deleted = 1;
CREATE TABLE revisions(
  id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  op TEXT NOT NULL,
  at TEXT,
  author TEXT,
  sha256 TEXT,
  size INTEGER,
  PRIMARY KEY(id, revision)
) WITHOUT ROWID;

-- Attempts (runs on a project), from the journal's attempt and attempt_end records.
CREATE TABLE attempts(
  id TEXT PRIMARY KEY,
  project TEXT NOT NULL,
  campaign TEXT,
  author TEXT,
  model TEXT,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  outcome TEXT,
  summary_note TEXT
) WITHOUT ROWID;
CREATE INDEX attempts_project ON attempts(project, started_at);
-- Project settings (journal "project" records): a private project is seen by its owner only.
CREATE TABLE projects(name TEXT PRIMARY KEY, private INTEGER NOT NULL DEFAULT 0, owner TEXT, campaign TEXT)
  WITHOUT ROWID;
-- Notes read while working on an attempt (journal "read" records).
CREATE TABLE attempt_reads(attempt TEXT NOT NULL, note TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY(attempt, at, note))
  WITHOUT ROWID;

-- One row per note file, with its parsed header.
CREATE TABLE note_index(
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  kind TEXT,
  model TEXT,
  summary TEXT,
  tags TEXT NOT NULL,
  builds_on TEXT NOT NULL,
  author TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  revision INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  attempt_id TEXT,
  note_kind TEXT NOT NULL DEFAULT 'note'
);
-- The bulky columns live apart, so that the rows above stay small: a search joins
-- note_index for every note it filters, and small rows stay in the page cache.
-- The one copy of a note's text in the index: the body is text from body_at (0-based, in
-- characters), and meta is notes_fts.meta as written (see fts_rows: the keyword tables keep
-- no copy of their own).
CREATE TABLE note_text(rowid INTEGER PRIMARY KEY, body_at INTEGER NOT NULL, meta TEXT NOT NULL, text TEXT NOT NULL);
CREATE TABLE note_tags(tag TEXT NOT NULL, note INTEGER NOT NULL, PRIMARY KEY(tag, note)) WITHOUT ROWID;
CREATE TABLE note_links(target TEXT NOT NULL, note INTEGER NOT NULL, PRIMARY KEY(target, note)) WITHOUT ROWID;
-- The ids each note's header names in supersedes: "is this note superseded, and by whom" is one
-- range of the primary key.
CREATE TABLE note_supersedes(target TEXT NOT NULL, note INTEGER NOT NULL, PRIMARY KEY(target, note)) WITHOUT ROWID;
-- meta holds a token per filterable value (kind, tags, author, model, builds_on, attempt,
-- project, campaign), so a
-- filtered search is one FTS5 match that intersects lists of notes instead of a walk
-- that looks each match up in note_index. Its BM25 weight is 0.
-- Contentless: the words' lists only; a row is taken out with the values it was indexed
-- with, made again from note_index and note_text (fts_rows).
CREATE VIRTUAL TABLE notes_fts USING fts5(
  title, body, meta, content = '', tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO notes_fts(notes_fts, rank) VALUES('rank', 'bm25({TITLE_WEIGHT}, 1.0, 0.0)');
-- New terms are held in memory until a transaction ends (one b-tree segment per
-- batch) instead of being flushed every 1 MB, which makes bulk loads merge far less.
INSERT INTO notes_fts(notes_fts, rank) VALUES('hashsize', {FTS_HASH_BYTES});
-- The titles alone, so that finding the notes named after a query's words reads short
-- lists (a column filter on notes_fts walks every note holding the words anywhere).
-- Contentless, as notes_fts is: the title is note_index.title (see fts_rows).
CREATE VIRTUAL TABLE titles_fts USING fts5(
  title, content = '', tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO titles_fts(titles_fts, rank) VALUES('hashsize', {FTS_HASH_BYTES});
-- Semantic search: notes waiting to be embedded (queued in the write's own transaction),
-- and the vectors of each note's passages, with the model that made them and the key of
-- what they were made from (sha256 of model, dim and passage text: a rebuild reuses by it;
-- NULL in an index from before keys).
CREATE TABLE embed_queue(note_id TEXT PRIMARY KEY, queued_at TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE note_vectors(
  note_id TEXT NOT NULL,
  chunk INTEGER NOT NULL,
  model TEXT NOT NULL,
  dim INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  start INTEGER NOT NULL,
  stop INTEGER NOT NULL,
  vector BLOB NOT NULL,
  key BLOB,
  PRIMARY KEY(note_id, chunk)
) WITHOUT ROWID;

-- Whose vectors changed, in order: a process holding the matrix applies the changes
-- since the last it saw instead of reloading every vector. Trimmed to its newest rows.
CREATE TABLE vector_log(seq INTEGER PRIMARY KEY AUTOINCREMENT, note_id TEXT NOT NULL);

-- Superseded revisions of live notes (kept in .notewell-history/revisions/), so that a word
-- or a meaning only an older text has still finds its note, after the current texts. The
-- revision's title and body, CJK segmented as in notes_fts; its passages' vectors once embedded
-- (old_vectors).
-- searchable 0: a revision looked at and left out (only its header changed, or its file was
-- never kept), so that a later look reads only what is new.
CREATE TABLE old_revisions(rowid INTEGER PRIMARY KEY, note_id TEXT NOT NULL, revision INTEGER NOT NULL,
  searchable INTEGER NOT NULL DEFAULT 1, UNIQUE(note_id, revision));
-- The searchable older revisions whose passages are not all in old_vectors (or the current
-- vectors) for the store's model yet.
CREATE TABLE old_embed_queue(note_id TEXT NOT NULL, revision INTEGER NOT NULL, PRIMARY KEY(note_id, revision))
  WITHOUT ROWID;
CREATE VIRTUAL TABLE old_revisions_fts USING fts5(
  title, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO old_revisions_fts(old_revisions_fts, rank) VALUES('rank', 'bm25({TITLE_WEIGHT}, 1.0)');
-- Each distinct passage of a note's older revisions once, by its key (as note_vectors.key),
-- with the newest older revision holding it and its place in that revision's body; none for a
-- passage the note's current vectors hold (backends.sqlite.old_vectors says why). Until
-- version 13 a row per revision and passage: a conversation re-imported as it grew stored
-- revisions x passages.
-- seq never goes back (AUTOINCREMENT): with the row count it tells a reader's matrix it is stale.
CREATE TABLE old_vectors(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  note_id TEXT NOT NULL,
  key BLOB NOT NULL,
  revision INTEGER NOT NULL,
  model TEXT NOT NULL,
  dim INTEGER NOT NULL,
  start INTEGER NOT NULL,
  stop INTEGER NOT NULL,
  vector BLOB NOT NULL,
  UNIQUE(note_id, key)
);
CREATE INDEX old_vectors_model ON old_vectors(model, dim);

-- Files that could not be indexed (unreadable, not UTF-8, too large), reported.
CREATE TABLE problems(path TEXT PRIMARY KEY, error TEXT NOT NULL, mtime_ns INTEGER, size INTEGER)
  WITHOUT ROWID;
"""

# Secondary indexes on the note tables. A rebuild drops them and makes them again at
# the end (one sort instead of a b-tree update per row); every open makes any that
# are missing, so a rebuild cut short leaves nothing missing for long.
# Kept through bulk loads (a rebuild asks it for every file it does not know).
GONE_INDEX = "CREATE INDEX IF NOT EXISTS journal_meta_gone ON journal_meta(sha256) WHERE deleted = 1"

NOTE_INDEXES = (
    # Covers the outside-change check, which reads these three columns of every row.
    "CREATE INDEX IF NOT EXISTS note_index_files ON note_index(path, mtime_ns, size)",
    "CREATE INDEX IF NOT EXISTS note_index_updated ON note_index(updated_at)",
    "CREATE INDEX IF NOT EXISTS note_index_created ON note_index(created_at)",
    "CREATE INDEX IF NOT EXISTS note_index_kind ON note_index(kind, updated_at)",
    "CREATE INDEX IF NOT EXISTS note_index_author ON note_index(author)",
    "CREATE INDEX IF NOT EXISTS note_index_model ON note_index(model)",
    "CREATE INDEX IF NOT EXISTS note_index_attempt ON note_index(attempt_id, updated_at)",
    "CREATE INDEX IF NOT EXISTS note_tags_note ON note_tags(note)",
    "CREATE INDEX IF NOT EXISTS note_links_note ON note_links(note)",
    "CREATE INDEX IF NOT EXISTS note_supersedes_note ON note_supersedes(note)",
    # Counting notes embedded by another model reads two ranges of this, not every vector.
    "CREATE INDEX IF NOT EXISTS note_vectors_model ON note_vectors(model, note_id)",
)


def configure(conn: sqlite3.Connection, *, busy_timeout_ms: int) -> None:
    """Connection settings: WAL so readers never wait for a writer."""
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    # Before WAL, which makes the file (on an existing file this changes nothing): free pages
    # can be given back after a bulk load (Index.give_back_space), where a merge of the keyword
    # index frees about as many as it writes. (16 KiB pages would save another 6% of the disk,
    # but a 16 MB log between checkpoints: writes failed on a small disk that 4 KiB pages fit.)
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    conn.execute("PRAGMA journal_mode = WAL")
    # The index is derived and repairs itself from the folder, so NORMAL (no
    # fsync per commit) is enough; the note files themselves are fsynced.
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("PRAGMA cache_size = -64000")  # FTS5 inserts slow down sharply with a small cache


def create_schema(conn: sqlite3.Connection) -> None:
    """Create every table in an empty database."""
    indexes = "".join(f"{sql};" for sql in NOTE_INDEXES)
    conn.executescript("BEGIN;" + SCHEMA + indexes + f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
