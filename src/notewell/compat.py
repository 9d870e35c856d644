"""Drop-in replacements for other note tools: ``from notewell.compat import NoteTool``, and the
NoteTool chapter's ``ContextBuilder``, ``ContextConfig`` and ``ContextPacket``."""

from __future__ import annotations

from .interfaces.hello_agents.chapter_context import ContextBuilder, ContextConfig, ContextPacket
from .interfaces.hello_agents.notetool import NoteTool

__all__ = ["ContextBuilder", "ContextConfig", "ContextPacket", "NoteTool"]
