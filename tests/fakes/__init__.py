"""Fakes for tests: :class:`~tests.fakes.memory_backend.MemoryBackend`, the note service's
backend over plain dicts and lists, so that the service's policy is tested without a database."""

from .memory_backend import MemoryBackend

__all__ = ["MemoryBackend"]
