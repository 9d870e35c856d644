"""The working-context notebook's Python API (``notewell notebook ...`` on the command line).

from notewell.notebook import Notebook
book = Notebook.init("fix-timeout", goal="the deploy stops timing out")
event, pointer = book.log(output_bytes, "deploy log")
...edit book.path...
result = book.accept()      # errors: nothing changes; result.errors lists them with lines
print(book.show())          # read back the accepted revision
"""

from __future__ import annotations

from .agents.notebook import AcceptResult, Notebook, notebook_root
from .agents.raw_log import RawEvent, RawLog, TamperedError
from .model.notebook_doc import NotebookDoc, parse_notebook
from .model.notebook_rules import DEFAULT_BUDGET, Finding, estimate_tokens, validate_notebook

__all__ = [
    "DEFAULT_BUDGET",
    "AcceptResult",
    "Finding",
    "Notebook",
    "NotebookDoc",
    "RawEvent",
    "RawLog",
    "TamperedError",
    "estimate_tokens",
    "notebook_root",
    "parse_notebook",
    "validate_notebook",
]
