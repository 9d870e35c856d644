"""The backends' records are tested on both stores: the same two-store fixture as the services tests."""

from tests.services.conftest import backend  # noqa: F401 - a fixture, found by name
