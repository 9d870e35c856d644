"""The token books, a folder store's file, a database's table and the memory fake's dict,
answer alike; the database's is shared by every store opened on it."""

from __future__ import annotations

import hashlib
import threading

import pytest

import notewell
from notewell.backends.sqlite.tokens import TokenBook
from notewell.model.access_tokens import TOKEN_PREFIX


@pytest.fixture(params=["file", pytest.param("postgres", marks=pytest.mark.postgres), "memory"])
def book(request, tmp_path):
    if request.param == "file":
        yield TokenBook(tmp_path / ".notewell")
        return
    if request.param == "memory":
        from tests.fakes.memory_backend import MemoryTokens

        yield MemoryTokens()
        return
    store = notewell.open(request.getfixturevalue("pg_store_url"), pool_size=2)
    yield store.token_book()
    store.close()


def test_a_book_creates_verifies_lists_and_revokes(book):
    alice, secret = book.create("alice")
    assert secret.startswith(TOKEN_PREFIX) and (alice.name, alice.read_only, alice.owner) == ("alice", False, False)
    assert book.verify(secret) == alice
    _, ci = book.create("ci", read_only=True)
    book.create("Boss", owner=True)
    assert [(t.name, t.read_only, t.owner) for t in book.list()] == [
        ("Boss", False, True),  # code point order: capitals first, in both books
        ("alice", False, False),
        ("ci", True, False),
    ]
    assert book.revoke("alice") == alice
    assert book.verify(secret) is None and book.verify(ci).read_only


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda b: b.create("alice"), notewell.InvalidArgumentError, "exists"),
        (lambda b: b.create("bad name!"), notewell.InvalidArgumentError, "token name"),
        # a handle a store would mask as an author: its caller could not change its own notes
        (lambda b: b.create("AKIAQ7ZK3M9XW2RT5VNB"), notewell.InvalidArgumentError, "must not look like a key"),
        (lambda b: b.create("4539-7804-2817-6464"), notewell.InvalidArgumentError, "must not look like a key"),
        (lambda b: b.create("x", read_only=True, owner=True), notewell.InvalidArgumentError, "read-only"),
        (lambda b: b.create("x", expires="yesterday"), notewell.InvalidArgumentError, "expiry"),
        (lambda b: b.revoke("nobody"), notewell.NotFoundError, "no token named 'nobody'"),
    ],
)
def test_bad_requests_get_the_same_errors(book, call, error, words):
    book.create("alice")
    with pytest.raises(error, match=words):
        call(book)


def test_secrets_not_shaped_like_one_are_refused(book):
    _, secret = book.create("alice")
    for guess in (None, "", "nwt_", secret[:-1], secret + "x", secret.removeprefix(TOKEN_PREFIX), "nwt_" + "a" * 300):
        assert book.verify(guess) is None


def test_an_expiry_is_kept(book):
    token, secret = book.create("temp", expires="2h")
    assert token.expires_at.endswith("Z") and not token.expired()
    assert book.verify(secret).expires_at == token.expires_at


def _stored(url: str) -> list[tuple[str, str]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT name, sha256 FROM tokens").fetchall()


def test_every_store_on_the_database_sees_a_revoke_at_once(pg_url):
    first, second = notewell.open(pg_url, pool_size=2), notewell.open(pg_url, pool_size=2)
    try:
        _, secret = first.token_book().create("bob")
        book = second.token_book()
        assert book.verify(secret).name == "bob"
        assert _stored(pg_url) == [("bob", hashlib.sha256(secret.encode()).hexdigest())]  # never the secret
        first.token_book().revoke("bob")
        assert book.verify(secret) is None and _stored(pg_url) == []
    finally:
        first.close()
        second.close()


def test_two_creations_racing_on_one_name_make_one_token(pg_url):
    with notewell.open(pg_url, pool_size=4) as store:
        book = store.token_book()
        made, refused = [], []
        barrier = threading.Barrier(4)

        def create() -> None:
            barrier.wait()
            try:
                made.append(book.create("same")[1])
            except notewell.InvalidArgumentError:
                refused.append(1)

        threads = [threading.Thread(target=create) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(made) == 1 and len(refused) == 3
        assert book.verify(made[0]).name == "same"


def test_names_that_stand_for_one_namespace_make_one_caller(book):
    # "Bob" and "bob" (or "bob@" and "bob") slug alike, and a namespace (bob:vault) is a slug:
    # two such tokens would share each other's private projects. The second is refused.
    book.create("bob")
    for twin in ("Bob", "bob@", "BOB"):
        with pytest.raises(notewell.InvalidArgumentError, match="which token 'bob' holds"):
            book.create(twin)
    with pytest.raises(notewell.InvalidArgumentError, match="exists"):
        book.create("bob")
    book.create("bobby")  # another namespace
    book.revoke("bob")
    book.create("Bob")  # free again once revoked
