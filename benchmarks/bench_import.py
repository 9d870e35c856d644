"""How fast conversations come in: `notewell import` of generated Claude Code, ChatGPT,
claude.ai, Codex CLI and Gemini CLI files into a fresh embedded store, then the same import again
(nothing new).

    python benchmarks/bench_import.py [--conversations 2000] [--turns 10] [--rounds 2]
                                      [--sources claude-code,chatgpt,claude,codex,gemini]

Prints, per source and round (sources interleaved, a fresh store each round): conversations,
the bytes read, seconds (and the process's CPU seconds: the machine may be shared),
conversations/s and MB/s for the first import, and for the second import of the same files
(which writes nothing).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.services.conversation_fixtures import (  # noqa: E402
    write_chatgpt_zip,
    write_claude_code,
    write_claude_zip,
    write_codex,
    write_gemini,
)

from notewell import Store  # noqa: E402
from notewell.services.conversation_import import import_conversations  # noqa: E402


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=2000)
    ap.add_argument("--turns", type=int, default=10, help="requests per conversation (each with an answer)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--sources", default="claude-code,chatgpt,claude,codex,gemini", help="comma-separated")
    args = ap.parse_args()
    wanted = args.sources.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        n, t = args.conversations, args.turns
        writers = {  # each writes its files and gives the path to import
            "claude-code": lambda: write_claude_code(root / "cc", n, t) and root / "cc",
            "chatgpt": lambda: write_chatgpt_zip(root / "chatgpt.zip", n, t) or root / "chatgpt.zip",
            "claude": lambda: write_claude_zip(root / "claude.zip", n, t) or root / "claude.zip",
            "codex": lambda: write_codex(root / "codex", n, t) and root / "codex",
            "gemini": lambda: write_gemini(root / "gemini", n, t) and root / "gemini",
        }
        sources = {name: write() for name, write in writers.items() if name in wanted}
        results: dict[str, dict[str, list[float]]] = {s: {"first": [], "again": [], "cpu": []} for s in sources}
        for r in range(args.rounds):
            for source, path in sources.items():  # interleaved: A, B, C, A, B, C ...
                with Store(root / f"store-{source}-{r}", watch=True, embedder=None) as store:
                    t0, c0 = time.perf_counter(), time.process_time()
                    report = import_conversations(store, source, path)
                    first, cpu = time.perf_counter() - t0, time.process_time() - c0
                    t0 = time.perf_counter()
                    again = import_conversations(store, source, path)
                    second = time.perf_counter() - t0
                assert not report.errors and again.notes == 0, (report.errors, again.notes)
                results[source]["first"].append(first)
                results[source]["again"].append(second)
                results[source]["cpu"].append(cpu)
                size = _size(path)
                print(
                    f"round {r + 1} {source:12} {report.conversations:,} conversations, {report.notes:,} notes,"
                    f" {size / 1e6:.1f} MB: first {first:.2f} s, CPU {cpu:.2f} s"
                    f" ({report.conversations / first:,.0f}/s,"
                    f" {size / 1e6 / first:.1f} MB/s); again {second:.2f} s ({again.conversations / second:,.0f}/s)",
                    flush=True,
                )
        print("\nmedian over rounds:")
        for source, times in results.items():
            first, again = statistics.median(times["first"]), statistics.median(times["again"])
            cpu = statistics.median(times["cpu"])
            mb = _size(sources[source]) / 1e6
            print(
                f"  {source:12} first import {n / first:,.0f} conversations/s ({mb:.1f} MB, {mb / first:.1f} MB/s;"
                f" by CPU time {n / cpu:,.0f}/s, {mb / cpu:.1f} MB/s); again (nothing new) {n / again:,.0f}/s"
            )


if __name__ == "__main__":
    main()
