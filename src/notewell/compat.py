"""Drop-in replacements for other note tools: ``from notewell.compat import NoteTool``."""

from __future__ import annotations

from .interfaces.notetool import NoteTool

__all__ = ["NoteTool"]
