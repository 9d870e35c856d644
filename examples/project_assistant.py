"""The chapter's ProjectAssistant scenario, working: run it against any OpenAI-compatible model.

    NOTEWELL_CHAT_URL=http://127.0.0.1:11434/v1 NOTEWELL_CHAT_MODEL=qwen2.5 python examples/project_assistant.py
    OPENAI_API_KEY=sk-... python examples/project_assistant.py [STORE]

It records the project's state as a note, raises a problem (recorded as a blocker), asks for
the next step, and prints the store's summary. With no model configured it says so and exits.
"""

from __future__ import annotations

import json
import sys
import tempfile

import notewell
from notewell.adapters.openai_chat import chat_from_environment, describe_chat_setup
from notewell.agents.assistant import ProjectAssistant


def main() -> int:
    chat = chat_from_environment()
    if chat is None:
        print(describe_chat_setup(), file=sys.stderr)
        return 2
    path = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="data_pipeline_refactoring_notes-")
    with notewell.open(path, watch=False) as store:
        assistant = ProjectAssistant(store, chat, project="data_pipeline_refactoring")
        for question, record in [
            (
                "We have completed refactoring of the data model layer, test coverage reached 85%."
                " Next plan is to refactor the business logic layer.",
                True,
            ),
            (
                "When refactoring the business logic layer, I encountered dependency version conflict"
                " problems. How should I resolve this?",
                True,
            ),
            ("What should we do next, and what is blocking us?", False),
        ]:
            turn = assistant.ask(question, record=record)
            print(f"\nyou: {question}\nassistant: {turn.answer}")
            used = f"{len(turn.context.citations)} notes in context, {turn.context.tokens} tokens"
            print(f"  [{used}; cited {turn.cited}]")
            if turn.recorded:
                print(f"  [recorded as {turn.recorded}]")
        print(json.dumps(store.summary(), indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
