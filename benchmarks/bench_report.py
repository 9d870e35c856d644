#!/usr/bin/env python3
"""What `notewell report` costs on a large store: a generated store of N notes on 20 projects
(findings, decisions, dead ends, references; a fifth blockers and actions, half of them closed by
a later note that builds on them or by a `done` tag, a tenth by one that supersedes them; one in 25
of the notes before superseded too; attempts that ended, some failed), then the
report of the whole store and of one project, for the owner and for a viewer who may not see a
private project, and each written as Markdown and HTML.

Usage:
    python benchmarks/bench_report.py                    # 5,000 and 20,000 notes
    python benchmarks/bench_report.py --sizes 1000 4000 --rounds 1

Prints, per size, the median of the rounds (thread CPU and wall time) of each step, and the
ratio of the largest size's time to the smallest's against the ratio of their sizes (linear: about equal).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import notewell
from notewell.model.visibility import Viewer
from notewell.services.report_pages import render_html, render_markdown
from notewell.services.reports import build_report

KINDS = ("finding", "decision", "dead_end", "reference", "conclusion", "task_state", None, "note")


def _text(
    rng: random.Random, title: str, kind: str | None, tags: list[str], builds_on: list[str], supersedes: list[str]
) -> str:
    head = [f"title: {title}"]
    if kind:
        head.append(f"kind: {kind}")
    if tags:
        head.append(f"tags: [{', '.join(tags)}]")
    if builds_on:
        head.append(f"builds_on: [{', '.join(builds_on)}]")
    if supersedes:
        head.append(f"supersedes: [{', '.join(supersedes)}]")
    words = " ".join(rng.choice(("cache", "solver", "restart", "worker", "queue", "index")) for _ in range(40))
    return "---\n" + "\n".join(head) + f"\n---\n{words}\n"


def make_store(folder: str, size: int, seed: int) -> notewell.Store:
    """A store of *size* notes, written in batches on attempts of 20 projects (one private)."""
    rng = random.Random(seed)
    store = notewell.open(folder, embedder=None)
    store.set_project("alice:secret", private=True, owner="alice")
    projects = ["alice:secret", *(f"project-{i:02d}" for i in range(19))]
    per_attempt = 250
    written = 0
    before: list[str] = []  # the last batch's notes
    while written < size:
        project = projects[(written // per_attempt) % len(projects)]
        run = store.start_attempt(project, author="alice" if project.startswith("alice") else "agent")
        count = min(per_attempt, size - written)
        opened = [
            _text(rng, f"Open item {written + i}", rng.choice(("blocker", "action")), [], [], [])
            for i in range(count // 5)
        ]
        ids = [n.id for n in store.add_notes(opened, attempt=run.id, author=run.author)]
        texts = []
        for i in range(count - len(opened)):
            builds_on = [ids[i]] if i % 2 == 0 and i < len(ids) else []  # every other item closed
            tags = ["done"] if i % 7 == 0 else []
            supersedes = [ids[i]] if i % 10 == 1 and i < len(ids) else []  # a tenth of the items
            if i % 25 == 3 and i < len(before):
                supersedes.append(before[i])
            title = f"Note {written + len(opened) + i}"
            texts.append(_text(rng, title, rng.choice(KINDS), tags, builds_on, supersedes))
        before = [n.id for n in store.add_notes(texts, attempt=run.id, author=run.author)]
        written += count
        outcome = rng.choice(("succeeded", "failed", "abandoned", None))
        if outcome is not None:
            store.end_attempt(run.id, outcome=outcome, summary=f"Run on {project}: {outcome}.")
            written += 1
    return store


def _timed(work: Callable[[], Any]) -> tuple[float, float, Any]:
    cpu, wall = time.thread_time(), time.perf_counter()
    out = work()
    return time.thread_time() - cpu, time.perf_counter() - wall, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 20_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=41)
    args = parser.parse_args()
    first: dict[str, float] = {}
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            store = make_store(folder, size, args.seed)
            print(f"\n{size:,} notes written in {time.perf_counter() - started:.1f} s")
            steps: dict[str, Callable[[], Any]] = {
                "whole store, owner": lambda s=store: build_report(s, since="1d"),
                "whole store, viewer": lambda s=store: build_report(s, since="1d", viewer=Viewer("bob")),
                "one project, owner": lambda s=store: build_report(s, project="project-00", since="1d"),
            }
            report = build_report(store, since="1d")
            steps["Markdown of the whole"] = lambda r=report: render_markdown(r)
            steps["HTML of the whole"] = lambda r=report: render_html(r)
            sections = (report.done, report.open, report.decisions, report.ruled_out, report.superseded)
            lines = sum(len(section) for section in sections)
            print(
                f"the whole store's report: {lines:,} lines ({len(report.open):,} open, {len(sections[-1]):,}"
                f" superseded), {report.written:,} notes"
            )
            for name, step in steps.items():
                cpus, walls = [], []
                for _ in range(args.rounds):
                    cpu, wall, _out = _timed(step)
                    cpus.append(cpu)
                    walls.append(wall)
                cpu, wall = statistics.median(cpus), statistics.median(walls)
                first.setdefault(name, cpu / size)
                ratio = (cpu / size) / first[name]
                said = f"per note, against the first size: {ratio:.2f}"
                print(f"  {name:24s} {cpu:7.3f} s CPU  {wall:7.3f} s wall  ({said})")
            store.close()


if __name__ == "__main__":
    main()
