"""``notewell assistant``: a project assistant over the notes, on any OpenAI-compatible model."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import TYPE_CHECKING, Any

from ...errors import InvalidArgumentError, NotewellError, UnavailableError
from ...settings import setting
from .command import Command

if TYPE_CHECKING:
    from ...agents.assistant import Turn

__all__ = ["COMMANDS"]


def _turn_dict(turn: Turn) -> dict[str, Any]:
    event = turn.compression
    return {
        "question": turn.question,
        "answer": turn.answer,
        "cited": turn.cited,
        "tool_calls": turn.tool_calls,
        "context": {"tokens": turn.context.tokens, "budget": turn.context.budget, "notes": turn.context.citations},
        "rounds": turn.rounds,
        "usage": turn.usage,
        "compression": None
        if event is None
        else {
            "before_messages": event.before_messages,
            "after_messages": event.after_messages,
            "before_chars": event.before_chars,
            "after_chars": event.after_chars,
            "summary_preview": event.summary_preview,
        },
        "recorded": turn.recorded,
    }


def _show(turn: Turn) -> None:
    for call in turn.tool_calls:
        print(f"  tool {call['name']}({call['arguments']}) -> {call['result'][:160]}", file=sys.stderr)
    print(turn.answer)
    ctx = turn.context
    print(
        f"  [{len(ctx.citations)} notes in context, {ctx.tokens}/{ctx.budget} tokens; {turn.rounds} model calls]",
        file=sys.stderr,
    )
    if turn.compression:
        e = turn.compression
        print(
            f"  [memory compressed: {e.before_messages} messages / {e.before_chars} chars ->"
            f" {e.after_messages} / {e.after_chars}] {e.summary_preview}",
            file=sys.stderr,
        )
    if turn.recorded:
        print(f"  [recorded as {turn.recorded}]", file=sys.stderr)


def _emit(args: argparse.Namespace, turn: Turn) -> None:
    if args.json:
        print(json.dumps(_turn_dict(turn), ensure_ascii=False), flush=True)
    else:
        _show(turn)
        sys.stdout.flush()


def cmd_assistant(args: argparse.Namespace) -> None:
    # Imported here: every other command starts without the assistant's modules (and certifi).
    from ...adapters.openai_chat import chat_from_environment, describe_chat_setup
    from ...agents.assistant import ProjectAssistant
    from ...agents.context import ContextConfig
    from ...agents.memory import ConversationMemory, LLMSummarizer
    from ...model.token_count import load_counter

    chat = chat_from_environment()
    if chat is None:
        raise UnavailableError(describe_chat_setup())
    from .store_options import open_from_args

    if args.record_kind is not None and not re.fullmatch(r"[a-z][a-z0-9_-]{0,39}", args.record_kind):
        raise InvalidArgumentError(f"--record-kind is a note type like blocker or conclusion, got {args.record_kind!r}")
    config = ContextConfig(max_tokens=args.max_tokens, reserve_tokens=min(800, args.max_tokens // 4))
    config.counter = load_counter(setting("NOTEWELL_TOKENIZER"))
    if args.project:
        config.filters = {"project": args.project}
    memory = ConversationMemory(summarizer=LLMSummarizer(chat), trigger_chars=args.memory_chars)
    with open_from_args(args, create=False, watch=False) as store:
        assistant = ProjectAssistant(
            store,
            chat,
            project=args.project or store.name,
            context=config,
            memory=memory,
            author=args.author,
            allow_writes=not args.read_only,
        )
        record: bool | str = (args.record_kind or True) if args.record or args.record_kind else False
        if args.question:
            _emit(args, assistant.ask(args.question, record=record))
            return
        interactive = sys.stdin.isatty()
        failed = 0
        while True:
            if interactive:
                print("you> ", end="", flush=True)
            line = sys.stdin.readline()
            if not line:
                break
            question = line.strip()
            if question in ("exit", "quit"):
                break
            if not question:
                continue
            try:
                _emit(args, assistant.ask(question, record=record))
                if store.full_check_owed:  # the first turn's quick look left it: make it while the user reads
                    store.refresh()
            except NotewellError as exc:  # one failed turn does not end the conversation
                failed += 1
                if args.json:
                    print(json.dumps({"error": exc.to_dict()}, ensure_ascii=False), flush=True)
                else:
                    print(f"notewell: {exc.message}", file=sys.stderr, flush=True)
        if failed:
            raise NotewellError(f"{failed} question(s) could not be answered")


def _assistant_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("question", nargs="?", help="one question, answered once (default: read questions from stdin)")
    p.add_argument("--project", help="only this project's notes (and its name in the instructions)")
    p.add_argument("--max-tokens", type=int, default=4000, help="the context budget per call (default 4000)")
    p.add_argument("--memory-chars", type=int, default=3000, help="compress the conversation past this size")
    p.add_argument("--record", action="store_true", help="record each exchange as a note")
    p.add_argument(
        "--record-kind",
        metavar="KIND",
        help="the recorded notes' type (default: blocker, action or conclusion, from the question)",
    )
    p.add_argument("--read-only", action="store_true", help="never tag or summarize notes")
    p.add_argument(
        "--author",
        default=setting("NOTEWELL_AUTHOR") or "assistant",
        help="who writes the notes it saves (default: $NOTEWELL_AUTHOR, else assistant)",
    )


COMMANDS = (
    Command(
        "assistant",
        "agent",
        "a project assistant over the notes (an OpenAI-compatible model)",
        cmd_assistant,
        _assistant_arguments,
    ),
)
