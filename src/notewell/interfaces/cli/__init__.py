"""The ``notewell`` command line: each command defined once, with its arguments and handler."""

from .app import main

__all__ = ["main"]
