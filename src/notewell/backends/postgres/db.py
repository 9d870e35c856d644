"""The PostgreSQL database behind a shared store: a connection pool, transactions, and the
versioned schema (``notewell db upgrade``).

In this mode the database is canonical: each note's text as written plus its metadata;
the Markdown folder is what ``notewell export`` writes. psycopg 3 is imported only when a
database is opened (the ``postgres`` extra), so ``import notewell`` stays light.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import BusyError, ConflictError, InvalidArgumentError, StorageError, UnavailableError
from ...model.header import parse_note
from ...model.note import derive_title, superseded_texts
from .old_vectors import key_vectors

__all__ = ["MIGRATIONS", "PgDatabase", "is_database_url", "supersedes_of"]

# Each entry moves the schema one version up; a released entry never changes (add a new one).
MIGRATIONS: list[tuple[str, str]] = [
    (
        "notes, revisions, attempts, projects, links and keyword search",
        """
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE TABLE projects(
          name text PRIMARY KEY,
          campaign text,
          private boolean NOT NULL DEFAULT false,
          owner text
        );
        CREATE TABLE attempts(
          id text PRIMARY KEY,
          project text NOT NULL,
          campaign text,
          author text,
          model text,
          started_at text NOT NULL,
          ended_at text,
          outcome text,
          summary_note text
        );
        CREATE INDEX attempts_project ON attempts(project, started_at DESC);
        CREATE TABLE notes(
          seq bigserial UNIQUE,
          id text PRIMARY KEY,
          path text NOT NULL UNIQUE,
          text text NOT NULL,
          title text NOT NULL,
          body text NOT NULL,
          kind text,
          tags text[] NOT NULL DEFAULT '{}',
          builds_on text[] NOT NULL DEFAULT '{}',
          model text,
          summary text,
          author text,
          created_at text NOT NULL,
          updated_at text NOT NULL,
          revision integer NOT NULL,
          attempt_id text,
          note_kind text NOT NULL DEFAULT 'note',
          tsv tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B')
          ) STORED
        );
        -- fastupdate off: a new note goes straight into the index instead of a pending list that
        -- every search would scan until a vacuum (searches stay as fast right after a bulk load).
        CREATE INDEX notes_tsv ON notes USING gin(tsv) WITH (fastupdate = off);
        CREATE INDEX notes_title_tsv ON notes USING gin(to_tsvector('english', title)) WITH (fastupdate = off);
        CREATE INDEX notes_title_trgm ON notes USING gin(title gin_trgm_ops);
        CREATE INDEX notes_body_trgm ON notes USING gin(body gin_trgm_ops);
        CREATE INDEX notes_tags ON notes USING gin(tags);
        CREATE INDEX notes_updated ON notes(updated_at DESC, seq DESC);
        CREATE INDEX notes_kind ON notes(kind);
        CREATE INDEX notes_attempt ON notes(attempt_id);
        CREATE TABLE note_links(target text NOT NULL, source text NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
          PRIMARY KEY(target, source));
        CREATE TABLE revisions(
          id text NOT NULL,
          revision integer NOT NULL,
          text text NOT NULL,
          at text NOT NULL,
          author text,
          op text NOT NULL,
          PRIMARY KEY(id, revision)
        );
        CREATE TABLE gone(id text PRIMARY KEY, path text NOT NULL, deleted_at text NOT NULL, revision integer NOT NULL,
          author text, model text, created_at text NOT NULL, attempt_id text, note_kind text NOT NULL);
        """,
    ),
    (
        "reads recorded on attempts, and the servers' bearer tokens",
        """
        -- A note read while working on an attempt (get_note with working_attempt_id).
        CREATE TABLE attempt_reads(attempt text NOT NULL, note text NOT NULL, at text NOT NULL,
          PRIMARY KEY(attempt, at, note));
        -- Tokens shared by every server of the database: only the secret's SHA-256 is kept.
        CREATE TABLE tokens(
          name text PRIMARY KEY,
          sha256 text NOT NULL UNIQUE,
          read_only boolean NOT NULL DEFAULT false,
          owner boolean NOT NULL DEFAULT false,
          created_at text NOT NULL,
          expires_at text NOT NULL DEFAULT ''
        );
        """,
    ),
    (
        "semantic search: the embedding queue, passage vectors and their change log",
        """
        -- Notes waiting to be embedded. Triggers on notes fill it in the writing transaction
        -- itself, so no write path (add, edit, tags, summary, import, an attempt's summary) can
        -- forget to. ticket changes each time a note is queued again, so an embedder removes
        -- only the entry it read; claimed_by / claimed_until are a server's lease on the note
        -- while its model runs (no transaction stays open meanwhile, so writers never wait).
        CREATE SEQUENCE embed_ticket;
        CREATE TABLE embed_queue(
          note_id text PRIMARY KEY,
          ticket bigint NOT NULL DEFAULT nextval('embed_ticket'),
          queued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
          claimed_by text,
          claimed_until timestamptz
        );
        CREATE INDEX embed_queue_ticket ON embed_queue(ticket);
        -- Each passage's vector (float32, little-endian, as bytea), with the model that made it,
        -- the sha256 of the title and body it was made from and that note revision. Not pgvector
        -- (no CREATE EXTENSION vector here): see notewell.backends.postgres.semantic for why.
        CREATE TABLE note_vectors(
          note_id text NOT NULL,
          chunk integer NOT NULL,
          model text NOT NULL,
          dim integer NOT NULL,
          sha256 text NOT NULL,
          revision integer NOT NULL,
          start integer NOT NULL,
          stop integer NOT NULL,
          vector bytea NOT NULL,
          PRIMARY KEY(note_id, chunk)
        );
        -- Finding notes embedded by another model reads two ranges of this, not every vector.
        CREATE INDEX note_vectors_model ON note_vectors(model, note_id);
        -- Whose vectors changed, in order: each server's in-memory matrix applies the entries
        -- after the last it saw. Written only through notewell_log_vectors.
        CREATE TABLE vector_log(seq bigserial PRIMARY KEY, note_id text NOT NULL);
        CREATE FUNCTION notewell_log_vectors(ids text[]) RETURNS void LANGUAGE plpgsql AS $fn$
        DECLARE
          lo bigint;
          hi bigint;
        BEGIN
          -- One log writer at a time until its commit: entries then become visible in seq
          -- order, so a reader that has seen seq N never meets an older entry committed later.
          PERFORM pg_advisory_xact_lock(7362520);
          INSERT INTO vector_log(note_id) SELECT unnest(ids);
          SELECT min(seq), max(seq) INTO lo, hi FROM vector_log;
          IF hi - lo > 51000 THEN  -- keep the newest 50,000 (a reader further behind reloads)
            DELETE FROM vector_log WHERE seq <= hi - 50000;
          END IF;
        END
        $fn$;
        CREATE FUNCTION notewell_queue_embedding() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
          INSERT INTO embed_queue(note_id) VALUES (NEW.id)
            ON CONFLICT (note_id) DO UPDATE SET ticket = nextval('embed_ticket'), queued_at = clock_timestamp();
          RETURN NULL;
        END
        $fn$;
        CREATE FUNCTION notewell_forget_vectors() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
          DELETE FROM embed_queue WHERE note_id = OLD.id;
          DELETE FROM note_vectors WHERE note_id = OLD.id;
          IF FOUND THEN
            PERFORM notewell_log_vectors(ARRAY[OLD.id]);
          END IF;
          RETURN NULL;
        END
        $fn$;
        CREATE TRIGGER notes_queue_new AFTER INSERT ON notes
          FOR EACH ROW EXECUTE FUNCTION notewell_queue_embedding();
        CREATE TRIGGER notes_queue_changed AFTER UPDATE OF text ON notes
          FOR EACH ROW WHEN (OLD.text IS DISTINCT FROM NEW.text) EXECUTE FUNCTION notewell_queue_embedding();
        CREATE TRIGGER notes_forget_vectors AFTER DELETE ON notes
          FOR EACH ROW EXECUTE FUNCTION notewell_forget_vectors();
        -- A database upgraded from version 2 already holds notes: every one waits to be embedded.
        INSERT INTO embed_queue(note_id) SELECT id FROM notes ORDER BY seq;
        """,
    ),
    (
        "CJK keyword search through an index of each note's CJK characters and character pairs",
        r"""
        -- A CJK word is matched as a substring (there are no spaces to split words on). The
        -- trigram indexes cannot find a word of one or two characters, so such a search read
        -- every body: this column holds the distinct single characters and adjacent pairs of
        -- each CJK run in the title and body, and a run of any length is looked up by its
        -- pairs (or its one character) before the substring test. The class is
        -- notewell.model.cjk.CJK_RE's (a test keeps them equal); a line break between the
        -- title and the body keeps a pair from spanning the two.
        CREATE FUNCTION notewell_cjk_grams(title text, body text) RETURNS text[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
          SELECT coalesce(array_agg(DISTINCT substr(r, i, g)), '{}')
            FROM regexp_matches(title || E'\n' || body,
                   '([\u1100-\u11ff\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff'
                   '\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]+)', 'g') AS runs(m),
                 LATERAL (SELECT m[1]) AS run(r),
                 generate_series(1, length(r)) AS at(i),
                 (VALUES (1), (2)) AS size(g)
           WHERE i + g - 1 <= length(r)
        $fn$;
        -- Filled for the notes already there by the rewrite this makes.
        ALTER TABLE notes ADD COLUMN cjk_grams text[] NOT NULL
          GENERATED ALWAYS AS (notewell_cjk_grams(title, body)) STORED;
        CREATE INDEX notes_cjk_grams ON notes USING gin(cjk_grams) WITH (fastupdate = off);
        -- The body's trigram index served CJK (now the column above) and stop words (~*, read
        -- from the text). For a stop word the planner, guessing that a regular expression
        -- matches almost no note, read its thousands of matches through that index instead
        -- of walking the newest notes or looking up the query's other words; and keeping it
        -- was a quarter of the cost of adding a note. The titles' one stays: it is small, and
        -- finds the newest titles holding a stop word.
        DROP INDEX notes_body_trgm;
        -- A stop word (the tsv column holds none) is found by reading the text, and so is a
        -- CJK word among the notes its characters (cjk_grams) point to: keyword search asks
        -- this function rather than writing the tests inline. Inline, the planner took such a
        -- word for one in almost no note (its guess for any regular expression or pattern,
        -- when a stop word is in most notes) and read every note, or every match of the
        -- query's other word, to sort the few it expected. Through a function it guesses a
        -- third of the notes, and COST tells it that reading a note's text is dear, so it
        -- reads as few notes as it can: the newest ones while matches are frequent among
        -- them, an index when they are rare (measured on 100,000 notes: the benchmark's
        -- slowest query 0.3 s, from 0.8 to 1 s; a common CJK word 0.1 s to 0.02 s).
        CREATE FUNCTION notewell_reads(title text, body text, pattern text, in_title boolean, how text)
        RETURNS boolean LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 1000 AS $fn$
        BEGIN
          IF how = 'ILIKE' THEN
            RETURN (in_title AND title ILIKE pattern) OR body ILIKE pattern;
          END IF;
          RETURN (in_title AND title ~* pattern) OR body ~* pattern;
        END
        $fn$;
        """,
    ),
    (
        "older revisions searchable: their words and their passage vectors",
        r"""
        -- Every superseded text of a live note whose title or body changed: its title and body
        -- as notes has them, weighted and gram-indexed as notes' are, so that keyword search
        -- reads it with the same query; text_sha as embedding.text_sha makes it (set below).
        -- Written by the trigger on notes when a note's text changes (every write path), and for
        -- the notes already there by this upgrade (db._fill_old_revisions).
        CREATE TABLE old_revisions(
          seq bigserial UNIQUE,
          id text NOT NULL,
          revision integer NOT NULL,
          title text NOT NULL,
          body text NOT NULL,
          text_sha text,
          tsv tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B')
          ) STORED,
          cjk_grams text[] NOT NULL GENERATED ALWAYS AS (notewell_cjk_grams(title, body)) STORED,
          PRIMARY KEY(id, revision)
        );
        CREATE INDEX old_revisions_tsv ON old_revisions USING gin(tsv) WITH (fastupdate = off);
        CREATE INDEX old_revisions_cjk_grams ON old_revisions USING gin(cjk_grams) WITH (fastupdate = off);
        -- Their passage vectors: moved over from note_vectors when a note is embedded anew, or
        -- made from the text above. They go with their revision (a delete racing an embedder
        -- leaves none behind).
        CREATE TABLE old_vectors(
          seq bigserial UNIQUE,
          note_id text NOT NULL,
          revision integer NOT NULL,
          chunk integer NOT NULL,
          model text NOT NULL,
          dim integer NOT NULL,
          start integer NOT NULL,
          stop integer NOT NULL,
          vector bytea NOT NULL,
          PRIMARY KEY(note_id, revision, model, chunk),
          FOREIGN KEY(note_id, revision) REFERENCES old_revisions(id, revision) ON DELETE CASCADE
        );
        CREATE INDEX old_vectors_model ON old_vectors(model, dim);
        -- The older revisions waiting for vectors, with a server's lease while its model runs.
        CREATE TABLE old_embed_queue(
          note_id text NOT NULL,
          revision integer NOT NULL,
          claimed_until timestamptz,
          PRIMARY KEY(note_id, revision),
          FOREIGN KEY(note_id, revision) REFERENCES old_revisions(id, revision) ON DELETE CASCADE
        );
        -- Bumped whenever old_vectors change: a server's matrix of them is stale when it moved.
        CREATE SEQUENCE old_vectors_version;
        CREATE FUNCTION notewell_old_revision_sha() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
          NEW.text_sha := encode(sha256(convert_to(NEW.title || E'
' || NEW.body, 'UTF8')), 'hex');
          RETURN NEW;
        END
        $fn$;
        CREATE TRIGGER old_revisions_sha BEFORE INSERT ON old_revisions
          FOR EACH ROW EXECUTE FUNCTION notewell_old_revision_sha();
        CREATE FUNCTION notewell_queue_old_revision() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
          INSERT INTO old_embed_queue(note_id, revision) VALUES (NEW.id, NEW.revision) ON CONFLICT DO NOTHING;
          RETURN NULL;
        END
        $fn$;
        CREATE TRIGGER old_revisions_queue AFTER INSERT ON old_revisions
          FOR EACH ROW EXECUTE FUNCTION notewell_queue_old_revision();
        CREATE FUNCTION notewell_keep_old_revision() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
          INSERT INTO old_revisions(id, revision, title, body) VALUES (OLD.id, OLD.revision, OLD.title, OLD.body)
            ON CONFLICT DO NOTHING;
          RETURN NULL;
        END
        $fn$;
        -- A change of the header alone adds nothing to find: every word is still there.
        CREATE TRIGGER notes_keep_old_revision AFTER UPDATE OF text ON notes
          FOR EACH ROW WHEN (NEW.revision > OLD.revision
            AND (OLD.title, OLD.body) IS DISTINCT FROM (NEW.title, NEW.body))
          EXECUTE FUNCTION notewell_keep_old_revision();
        CREATE FUNCTION notewell_forget_old_revisions() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
          DELETE FROM old_revisions WHERE id = OLD.id;  -- its vectors and queue entries go with it
          IF FOUND THEN
            PERFORM nextval('old_vectors_version');
          END IF;
          RETURN NULL;
        END
        $fn$;
        CREATE TRIGGER notes_forget_old_revisions AFTER DELETE ON notes
          FOR EACH ROW EXECUTE FUNCTION notewell_forget_old_revisions();
        -- A note's vectors being replaced: those of a text now superseded stay, as the newest
        -- older revision with that title and body.
        CREATE FUNCTION notewell_keep_old_vectors() RETURNS trigger LANGUAGE plpgsql AS $fn$
        DECLARE
          kept integer;
        BEGIN
          SELECT o.revision INTO kept FROM old_revisions o JOIN notes n ON n.id = o.id AND n.revision > o.revision
            WHERE o.id = OLD.note_id AND o.revision >= OLD.revision AND o.text_sha = OLD.sha256
            ORDER BY o.revision DESC LIMIT 1;
          IF kept IS NOT NULL THEN
            INSERT INTO old_vectors(note_id, revision, chunk, model, dim, start, stop, vector)
              VALUES (OLD.note_id, kept, OLD.chunk, OLD.model, OLD.dim, OLD.start, OLD.stop, OLD.vector)
              ON CONFLICT DO NOTHING;
            DELETE FROM old_embed_queue WHERE note_id = OLD.note_id AND revision = kept;
            PERFORM nextval('old_vectors_version');
          END IF;
          RETURN OLD;
        END
        $fn$;
        CREATE TRIGGER note_vectors_keep_old BEFORE DELETE ON note_vectors
          FOR EACH ROW EXECUTE FUNCTION notewell_keep_old_vectors();
        """,
    ),
    (
        "older revisions' vectors: each distinct passage of a note once",
        """
        -- Each vector's key: sha256 of the model, the dimension and the passage text
        -- (search.passages.passage_key), written by the embedder and, for the vectors already
        -- there, by this upgrade (old_vectors.key_vectors, which then keeps one row per note and
        -- key in old_vectors and makes (note_id, key) its primary key).
        ALTER TABLE note_vectors ADD COLUMN key bytea;
        ALTER TABLE old_vectors ADD COLUMN key bytea;
        -- The embedder keeps a superseded text's vectors itself (old_vectors.keep_superseded),
        -- less the passages of the text replacing it, which a trigger cannot know.
        DROP TRIGGER note_vectors_keep_old ON note_vectors;
        DROP FUNCTION notewell_keep_old_vectors();
        """,
    ),
    (
        "the notes embedded while a note's passages stopped at 24 queued again",
        """
        -- Until issue 39 a note's passages stopped at 24 (search.passages.OLD_CAP): the rest of a
        -- longer note was never embedded. Once, here: the notes of exactly 24 vectors wait again;
        -- their first 24 keep their vectors by key (version 6 keyed them), and a note of exactly
        -- 24 passages is found complete without the model (embedding._read).
        INSERT INTO embed_queue(note_id)
          SELECT note_id FROM note_vectors GROUP BY note_id HAVING count(*) = 24 ON CONFLICT DO NOTHING;
        """,
    ),
    (
        "notes without a title or heading titled by their first line, not their file name",
        # All in Python (notewell.model.note.line_title): see _fill_line_titles.
        "SELECT 1",
    ),
    (
        "the ids each note's header names in supersedes, indexed both ways",
        """
        -- "Is this note superseded, and by whom": one range of the primary key. Filled from the
        -- notes' texts by _fill_supersedes.
        CREATE TABLE note_supersedes(target text NOT NULL,
          source text NOT NULL REFERENCES notes(id) ON DELETE CASCADE, PRIMARY KEY(target, source));
        CREATE INDEX note_supersedes_source ON note_supersedes(source);
        """,
    ),
]


def _fill_old_revisions(conn: Any) -> None:
    """Version 5 on a database that holds notes: their superseded revisions' titles and bodies."""
    notes = conn.execute("SELECT id, path, revision FROM notes WHERE revision > 1 ORDER BY id").fetchall()
    for at in range(0, len(notes), 500):
        batch = notes[at : at + 500]
        texts: dict[str, list[tuple[int, str]]] = {}
        for nid, revision, text in conn.execute(
            "SELECT id, revision, text FROM revisions WHERE id = ANY(%s) ORDER BY id, revision",
            ([n[0] for n in batch],),
        ):
            texts.setdefault(nid, []).append((revision, text))
        rows = [
            (nid, *kept)
            for nid, path, current in batch
            for kept in superseded_texts([v for v in texts.get(nid, []) if v[0] <= current], path)
        ]
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO old_revisions(id, revision, title, body) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                rows,
            )


def _fill_line_titles(conn: Any) -> None:
    """Version 8: the notes titled by their file name (no title, no heading) take the title
    their first line makes, and wait to be embedded again (their passages open with the title)."""
    named = [nid for nid, path, title in conn.execute("SELECT id, path, title FROM notes") if title == _stem(path)]
    for at in range(0, len(named), 500):
        rows = conn.execute("SELECT id, path, text FROM notes WHERE id = ANY(%s)", (named[at : at + 500],)).fetchall()
        titled = [(t, nid) for nid, path, text in rows if (t := derive_title(parse_note(text), path)) != _stem(path)]
        if not titled:
            continue
        with conn.cursor() as cur:
            cur.executemany("UPDATE notes SET title = %s WHERE id = %s", titled)
        conn.execute(
            "INSERT INTO embed_queue(note_id) SELECT unnest(%s::text[]) ON CONFLICT DO NOTHING",
            ([nid for _, nid in titled],),
        )


def _fill_supersedes(conn: Any) -> None:
    """Version 9: the supersedes links of the notes whose header names some."""
    rows = conn.execute("SELECT id, text FROM notes WHERE text LIKE '%%supersedes%%'").fetchall()
    links = [(t, nid) for nid, text in rows for t in supersedes_of(nid, text)]
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO note_supersedes(target, source) VALUES (%s, %s) ON CONFLICT DO NOTHING", links)


def supersedes_of(note_id: str, text: str) -> list[str]:
    """The ids *text*'s header names in supersedes, less *note_id* itself."""
    return [t for t in (parse_note(text).header or {}).get("supersedes", []) if t != note_id]


def _stem(path: str) -> str:
    """The title a note without one had before version 8: its file name without ``.md``."""
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


# What a migration needs done in Python after its SQL, in the same transaction (by version).
MIGRATION_FILLS: dict[int, Callable[[Any], None]] = {
    5: _fill_old_revisions,
    6: key_vectors,
    8: _fill_line_titles,
    9: _fill_supersedes,
}

_URL_SCHEMES = ("postgresql://", "postgres://")


def is_database_url(value: object) -> bool:
    """True for a PostgreSQL connection URL (``postgresql://…``)."""
    return isinstance(value, str) and value.startswith(_URL_SCHEMES)


def _driver() -> Any:
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise UnavailableError(
            "PostgreSQL needs psycopg 3 and its pool: pip install '.[postgres]' in notewell's clone"
        ) from None
    return psycopg, psycopg_pool


class PgDatabase:
    """A pool of connections to one PostgreSQL database holding a store."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8, timeout: float = 30.0) -> None:
        if not is_database_url(url):
            raise InvalidArgumentError("a database must be a postgresql:// URL")
        psycopg, psycopg_pool = _driver()
        self._psycopg = psycopg
        self.url = url
        try:
            # One plain connection first: a wrong address or password fails now, in one line,
            # instead of the pool retrying in the background until its timeout.
            psycopg.connect(url, connect_timeout=min(10, max(1, int(timeout)))).close()
        except psycopg.Error as exc:
            raise UnavailableError(f"cannot connect to the database: {_first_line(exc)}") from None
        try:
            self.pool = psycopg_pool.ConnectionPool(
                url, min_size=min_size, max_size=max_size, timeout=timeout, open=True, kwargs={"autocommit": True}
            )
            self.pool.wait(timeout)
        except psycopg_pool.PoolTimeout as exc:
            self.pool.close()
            raise UnavailableError(f"cannot connect to the database: {_first_line(exc)}") from None
        except psycopg.Error as exc:
            raise UnavailableError(f"cannot connect to the database: {_first_line(exc)}") from None

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A connection inside one transaction: committed on success, rolled back on error.
        Database errors become notewell errors (a serialization failure or a lock timeout:
        BusyError, so the caller can try again)."""
        psycopg = self._psycopg
        try:
            with self.pool.connection() as conn, conn.transaction():
                yield conn
        except psycopg.errors.SerializationFailure as exc:
            raise BusyError(f"another writer changed the same rows; try again ({_first_line(exc)})") from None
        except psycopg.errors.DeadlockDetected as exc:
            raise BusyError(f"two writers waited on each other; try again ({_first_line(exc)})") from None
        except psycopg.errors.LockNotAvailable as exc:
            raise BusyError(f"another writer holds the rows; try again ({_first_line(exc)})") from None
        except psycopg.errors.UniqueViolation as exc:
            # Two writers racing on one key (a chosen note id): the second meets what the first wrote.
            raise ConflictError(f"the store holds this already ({_first_line(exc)})") from None
        except psycopg.OperationalError as exc:
            raise UnavailableError(f"database unavailable: {_first_line(exc)}") from None
        except psycopg.Error as exc:
            raise StorageError(f"database error: {_first_line(exc)}") from None

    # -- schema ---------------------------------------------------------------

    def schema_version(self) -> int:
        """The version of the schema in the database (0: none yet)."""
        with self.transaction() as conn:
            # No DDL here: servers opening a new database together would race to create the table.
            if conn.execute("SELECT to_regclass('notewell_schema')").fetchone()[0] is None:
                return 0
            row = conn.execute("SELECT max(version) FROM notewell_schema").fetchone()
        return row[0] or 0

    def upgrade(self) -> list[int]:
        """Apply the migrations the database lacks, all in one transaction, under an
        advisory lock so that servers starting together apply each one once. Returns the
        versions applied."""
        applied: list[int] = []
        with self.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(7362519)")
            conn.execute("CREATE TABLE IF NOT EXISTS notewell_schema(version integer NOT NULL, applied_at text)")
            have = conn.execute("SELECT max(version) FROM notewell_schema").fetchone()[0] or 0
            if have > len(MIGRATIONS):
                raise StorageError(_newer(have))
            for version in range(have + 1, len(MIGRATIONS) + 1):
                conn.execute(MIGRATIONS[version - 1][1])
                fill = MIGRATION_FILLS.get(version)
                if fill is not None:
                    fill(conn)
                conn.execute("INSERT INTO notewell_schema(version, applied_at) VALUES (%s, now()::text)", (version,))
                applied.append(version)
        return applied

    def check_schema(self) -> None:
        """Refuse a database whose schema is not this notewell's (say how to fix it)."""
        have = self.schema_version()
        if have < len(MIGRATIONS):
            raise StorageError(
                f"the database's schema is version {have}, this notewell needs {len(MIGRATIONS)}:"
                " run `notewell db upgrade --database URL`"
            )
        if have > len(MIGRATIONS):
            raise StorageError(_newer(have))


def _newer(have: int) -> str:
    return f"the database's schema is version {have}, newer than this notewell's ({len(MIGRATIONS)}): upgrade notewell"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
