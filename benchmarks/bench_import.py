"""How fast conversations come in: `notewell import` of generated Claude Code, ChatGPT and
claude.ai exports into a fresh embedded store, then the same import again (nothing new).

    python benchmarks/bench_import.py [--conversations 2000] [--turns 10] [--rounds 2]

Prints, per source and round (sources interleaved, a fresh store each round): conversations,
the bytes read, seconds, conversations/s and MB/s for the first import, and for the second
import of the same files (which writes nothing).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.services.conversation_fixtures import write_chatgpt_zip, write_claude_code, write_claude_zip  # noqa: E402

from notewell import Store  # noqa: E402
from notewell.services.conversation_import import import_conversations  # noqa: E402


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=2000)
    ap.add_argument("--turns", type=int, default=10, help="requests per conversation (each with an answer)")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sources = {
            "claude-code": write_claude_code(root / "cc", args.conversations, args.turns) and root / "cc",
            "chatgpt": (write_chatgpt_zip(root / "chatgpt.zip", args.conversations, args.turns), root / "chatgpt.zip")[
                1
            ],
            "claude": (write_claude_zip(root / "claude.zip", args.conversations, args.turns), root / "claude.zip")[1],
        }
        results: dict[str, dict[str, list[float]]] = {s: {"first": [], "again": []} for s in sources}
        for r in range(args.rounds):
            for source, path in sources.items():  # interleaved: A, B, C, A, B, C ...
                with Store(root / f"store-{source}-{r}", watch=True, embedder=None) as store:
                    t0 = time.perf_counter()
                    report = import_conversations(store, source, path)
                    first = time.perf_counter() - t0
                    t0 = time.perf_counter()
                    again = import_conversations(store, source, path)
                    second = time.perf_counter() - t0
                assert not report.errors and again.notes == 0, (report.errors, again.notes)
                results[source]["first"].append(first)
                results[source]["again"].append(second)
                size = _size(path)
                print(
                    f"round {r + 1} {source:12} {report.conversations:,} conversations, {report.notes:,} notes,"
                    f" {size / 1e6:.1f} MB: first {first:.2f} s ({report.conversations / first:,.0f}/s,"
                    f" {size / 1e6 / first:.1f} MB/s); again {second:.2f} s ({again.conversations / second:,.0f}/s)",
                    flush=True,
                )
        print("\nmedian over rounds:")
        for source, times in results.items():
            first, again = statistics.median(times["first"]), statistics.median(times["again"])
            n = args.conversations
            print(
                f"  {source:12} first import {n / first:,.0f} conversations/s; again (nothing new) {n / again:,.0f}/s"
            )


if __name__ == "__main__":
    main()
