"""Both stores are a NoteStore: every member of the Protocol, with the Protocol's parameters."""

from __future__ import annotations

import inspect

import pytest

import notewell
from notewell.services.contract import NoteStore
from notewell.services.opening import PgStore, Store

_DUNDERS = ("__enter__", "__exit__")
MEMBERS = sorted(
    name
    for name, value in vars(NoteStore).items()
    if (not name.startswith("_") or name in _DUNDERS) and (callable(value) or isinstance(value, property))
)


def _parameters(function) -> list[tuple[str, object, object]]:
    """(name, kind, default) of each public parameter; a store may take private extras."""
    out = []
    for p in inspect.signature(function).parameters.values():
        if p.name.startswith("_"):
            assert p.default is not inspect.Parameter.empty, f"{function.__qualname__}: {p.name} needs a default"
            continue
        out.append((p.name, p.kind, p.default))
    return out


def test_the_protocol_names_what_the_interfaces_use():
    assert len(MEMBERS) >= 33
    assert {"search_notes", "get_note", "add_note", "start_attempt", "token_book", "close"} <= set(MEMBERS)


@pytest.mark.parametrize("cls", [Store, PgStore])
@pytest.mark.parametrize("name", MEMBERS)
def test_each_store_has_the_protocols_signature(cls, name):
    wanted, got = getattr(NoteStore, name), getattr(cls, name, None)
    assert got is not None, f"{cls.__name__} has no {name}"
    if isinstance(wanted, property):
        assert isinstance(got, property), f"{cls.__name__}.{name} is not a property"
        return
    assert _parameters(got) == _parameters(wanted), f"{cls.__name__}.{name}{inspect.signature(got)}"


def test_an_open_store_is_a_note_store(backend):
    assert isinstance(backend, NoteStore)
    assert isinstance(backend, notewell.NoteStore)
