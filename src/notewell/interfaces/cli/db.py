"""The database commands: ``db`` (the PostgreSQL schema: ``upgrade`` applies the migrations it
lacks, ``status`` tells the version it has and the one this notewell needs) and ``export``; and
which store the options and the environment name, a notes folder or a database."""

from __future__ import annotations

import argparse
import json

from ...backends.postgres.db import MIGRATIONS, PgDatabase, is_database_url
from ...errors import InvalidArgumentError, StorageError
from ...settings import setting
from .command import Command

__all__ = ["COMMANDS", "chosen_database", "cmd_load_folder", "database_url"]


def database_url(args: argparse.Namespace) -> str:
    """The database a command works on: --database, else $NOTEWELL_DATABASE."""
    url = getattr(args, "database", None) or setting("NOTEWELL_DATABASE")
    if not url:
        raise InvalidArgumentError("give --database postgresql://… (or set NOTEWELL_DATABASE)")
    if not is_database_url(url):
        raise InvalidArgumentError("--database must be a postgresql:// URL")
    return url


def chosen_database(args: argparse.Namespace) -> str | None:
    """For a command that serves either kind of store: the database to open, or None for a
    notes folder. --database (or a postgresql:// --store) wins; without either option,
    $NOTEWELL_DATABASE does (or a postgresql:// $NOTEWELL_STORE). Naming both a folder and a
    database, by options or by environment, is an error rather than a silent choice."""
    store, database = getattr(args, "store", None), getattr(args, "database", None)
    if store and database:
        raise InvalidArgumentError("give --store (a notes folder) or --database (a postgresql:// URL), not both")
    if database:
        return database_url(args)
    if store:
        return store if is_database_url(store) else None
    env_store = setting("NOTEWELL_STORE")
    if setting("NOTEWELL_DATABASE"):
        if env_store:
            raise InvalidArgumentError(
                "NOTEWELL_STORE and NOTEWELL_DATABASE are both set: give --store or --database to choose"
            )
        return database_url(args)
    return env_store if is_database_url(env_store) else None


def _db_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("upgrade", "status"), help="upgrade: apply missing migrations; status: versions")


def cmd_db(args: argparse.Namespace) -> None:
    from ...backends.postgres.vector_schema import enable_pgvector, pgvector_available, vector_ready

    db = PgDatabase(database_url(args), max_size=2)
    try:
        if args.action == "upgrade":
            applied = db.upgrade()
            out = {"applied": applied, "version": db.schema_version(), "latest": len(MIGRATIONS)}
            steps = ", ".join(f"{v} ({MIGRATIONS[v - 1][0]})" for v in applied)
            text = (
                f"applied {steps}; the schema is at version {out['version']}"
                if applied
                else f"the schema is up to date (version {out['version']})"
            )
            # Here rather than at a server's first semantic search: on a large database, filling
            # the vector column and building the index holds note_vectors for minutes.
            try:
                with db.transaction() as conn:
                    out["pgvector"] = enable_pgvector(conn)
            except StorageError as exc:
                out["pgvector"] = False
                text += f"; pgvector not enabled: {exc.message}"
            else:
                text += "; semantic search uses pgvector" if out["pgvector"] else "; no pgvector on this server"
        else:
            have = db.schema_version()
            with db.transaction() as conn:
                ready = have >= 3 and vector_ready(conn)
                available = pgvector_available(conn)
            out = {"version": have, "latest": len(MIGRATIONS), "up_to_date": have == len(MIGRATIONS), "pgvector": ready}
            text = f"schema version {have}; this notewell's is {len(MIGRATIONS)}" + (
                "" if have == len(MIGRATIONS) else " (run: notewell db upgrade)"
            )
            if ready:
                text += "; semantic search uses pgvector"
            elif available:
                text += "; the server has pgvector (notewell db upgrade enables it)"
    finally:
        db.close()
    print(json.dumps(out) if getattr(args, "json", False) else text)


def _export_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", metavar="DIR", help="a new or empty folder")


def cmd_export(args: argparse.Namespace) -> None:
    from ...services.opening import PgStore

    with PgStore(database_url(args), pool_size=2, create=False) as store:
        counts = store.export_folder(args.folder)
    _report(args, counts, f"exported to {args.folder}")


def cmd_load_folder(args: argparse.Namespace) -> None:
    """``notewell import DIR --database URL`` (``args.folder``: the notes folder)."""
    from ...services.opening import PgStore

    with PgStore(database_url(args), pool_size=2) as store:
        counts = store.import_folder(args.folder)
    _report(args, counts, f"imported {args.folder}")


def _report(args: argparse.Namespace, counts: dict[str, int], what: str) -> None:
    if getattr(args, "json", False):
        print(json.dumps(counts))
    else:
        print(f"{what}: {counts['notes']} notes, {counts['revisions']} revisions, {counts['deleted']} deleted notes")


COMMANDS = (
    Command("db", "database", "the PostgreSQL schema: upgrade (apply migrations) or status", cmd_db, _db_arguments),
    Command(
        "export",
        "database",
        "write a PostgreSQL store into a folder (notes, journal, revisions)",
        cmd_export,
        _export_arguments,
    ),
)
