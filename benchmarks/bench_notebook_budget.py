"""How many tokens the working notebook of the long benchmark reaches: the measurement behind
DEFAULT_BUDGET (model/notebook_rules.py).

A scripted agent walks the 30 prompts of ``notewell notebook bench make --size long`` and, as
the agent of issue 42 did, records one short fact per prompt (two where a prompt asks two
values), each with its source: a file and line, ``user`` for what the conversation decided,
a raw event for output that does not come back. A correction moves the fact it corrects to
Dropped with a reason and adds the corrected one under a new id. Every prompt ends with an
accept, and the accepted revision's tokens are counted. Four ways of keeping it:
examples kept or deleted, Dropped lines kept or pruned at the next prompt.

    python benchmarks/bench_notebook_budget.py [--seeds 1,2,3,4,5] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

from notewell.agents.notebook import Notebook
from notewell.agents.notebook_bench import build_bench
from notewell.model.notebook_doc import EXAMPLE_LINES

_READ = re.compile(r"Read services/(?P<name>\w+)/prod\.yaml .* production (?P<k1>\w+) and (?P<k2>\w+) of")
# Which decision a correction corrects, by the words they share.
_TOPICS = ("maintenance window", "roll back", "canary region", "approves")


class Agent:
    """One scripted run: a notebook, a counter of ids, and the facts in force by topic."""

    def __init__(self, root: Path, seed: int, *, keep_examples: bool, prune: bool) -> None:
        self.bench = build_bench(seed, 4000, "long")
        goal = "answer the rollout's questions exactly"
        self.book = Notebook.init(f"long-{seed}", goal=goal, budget=100_000, root=root)
        self.text = self.book.working_text()
        if not keep_examples:
            self.text = "\n".join(ln for ln in self.text.splitlines() if ln.strip() not in EXAMPLE_LINES) + "\n"
        self.prune = prune
        self.next_f = 1
        self.topics: dict[str, str] = {}
        self.answers = {q.id: q.expect for q in self.bench.questions}
        self.add("Tracker", "- [T001] [doing] record each prompt's facts with their sources")

    def add(self, section: str, line: str) -> None:
        self.text = self.text.replace(f"## {section}\n", f"## {section}\n{line}\n", 1)

    def fact(self, what: str, source: str, topic: str | None = None) -> None:
        fid = f"F{self.next_f:03d}"
        self.next_f += 1
        self.add("Facts", f"- [{fid}] {what} | source: {source} | verified")
        if topic:
            self.topics[topic] = fid

    def drop(self, fid: str, why: str) -> None:
        self.text = re.sub(rf"^- \[{fid}\] .*\n", "", self.text, count=1, flags=re.M)
        self.add("Dropped", f"- [{fid}] {why}")

    def where(self, value: str, prefer: str = "") -> str:
        """path:line of the first line holding *value* (in a file whose path holds *prefer*)."""
        for path, body in sorted(self.bench.files.items(), key=lambda kv: prefer not in kv[0]):
            for number, line in enumerate(body.splitlines(), 1):
                if value in line:
                    return f"{path}:{number}"
        raise LookupError(value)

    def step(self, number: int, prompt: str) -> int:
        if self.prune:  # last prompt's Dropped lines are accepted: they may go
            self.text = re.sub(r"(## Dropped\n)(?:- \[[A-Z]\d{3}\] .*\n)+", r"\1", self.text)
        self.record(number, prompt)
        self.book.path.write_text(self.text, encoding="utf-8")
        result = self.book.accept()
        if not result.accepted:
            raise AssertionError(f"prompt {number}: {[str(e) for e in result.errors]}")
        return int(self.book.status()["tokens"])

    def record(self, number: int, prompt: str) -> None:
        a = self.answers
        if number <= 6:
            self.short(number)
        elif m := _READ.search(prompt):
            path = f"services/{m['name']}/prod.yaml"
            body = self.bench.files[path]
            values = {k: re.search(rf"^{k}: (\d+)$", body, re.M)[1] for k in (m["k1"], m["k2"])}  # type: ignore[index]
            line = next(i for i, ln in enumerate(body.splitlines(), 1) if ln.startswith(m["k1"]))
            self.fact(f"{m['name']} prod {m['k1']} {values[m['k1']]}, {m['k2']} {values[m['k2']]}", f"{path}:{line}")
        elif prompt.startswith("Decision:"):
            topic = next((t for t in _TOPICS if t in prompt), None)
            self.fact(prompt.removeprefix("Decision: ").split(" (")[0].rstrip("."), "user", topic)
        elif prompt.startswith("Correction:"):
            topic = next(t for t in _TOPICS if t in prompt)
            self.drop(self.topics[topic], "corrected by the user")
            self.fact(prompt.removeprefix("Correction: ").split(";")[0].rstrip("."), "user", topic)
        elif "probe.py" in prompt:
            event, _ = self.book.log(f"lease holder: {a['Q40'][0]}\n".encode(), "python tools/probe.py")
            self.fact(f"first probe: lease holder {a['Q40'][0]}", event.id)
        elif "rotate.py" in prompt:
            self.fact(f"last replay before rotation: {a['Q41'][0]}", self.where(a["Q41"][0], "current.log"))

    def short(self, number: int) -> None:
        a = self.answers
        if number == 1:
            staging = self.where("request_timeout_ms", "config/app")
            self.fact(f"prod request_timeout_ms {a['Q01'][0]}?", staging, "timeout")
            code, shard, time = a["Q02"][0], a["Q03"][0], a["Q04"][0]
            self.fact(f"first deploy error {code} shard {shard} at {time}", self.where(code, "deploy-"))
        elif number == 2:
            self.fact(f"pinned {a['Q05'][0]}", self.where(a["Q05"][0], "lock"))
            self.fact(f"ingest socket {a['Q06'][0]}", self.where(a["Q06"][0], "strace"))
        elif number == 3:
            self.fact(f"canary port {a['Q07'][0]}", "user")
            self.fact(f"owner: {a['Q08'][0]}", self.where(a["Q08"][0], "OWNERS"))
        elif number == 4:
            self.drop(self.topics["timeout"], "config/app.yaml is the staging copy (user)")
            self.fact(f"prod request_timeout_ms {a['Q01'][0]}", self.where(a["Q01"][0], "deploy/prod"))
            self.fact(f"failed nightly jobs: {a['Q09'][0]}", "`grep -c failed reports/nightly.csv`")
        elif number == 5:
            self.add("Ruled out", f"- [R001] pool_size 64 | reason: p99 {a['Q10'][1]} s, see experiments/pool-64.txt")
            self.fact(f"DBA wants {a['Q11'][0]}", self.where(a["Q11"][0], "email"))
        else:
            self.add("Next", "- answer the quiz from the facts above")


def run(seed: int, *, keep_examples: bool, prune: bool) -> list[int]:
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(Path(tmp), seed, keep_examples=keep_examples, prune=prune)
        return [agent.step(n, p) for n, p in enumerate(agent.bench.prompts, 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        for keep in (True, False):
            for prune in (False, True):
                tokens = run(seed, keep_examples=keep, prune=prune)
                rows.append({"seed": seed, "examples": keep, "pruned": prune, "tokens": tokens})
    if args.json:
        print(json.dumps(rows))
        return
    print("seed  examples  Dropped    prompt 1  10   20   30   (tokens of the accepted revision)")
    for r in rows:
        t = r["tokens"]
        kept = "kept" if r["examples"] else "deleted"
        dropped = "pruned" if r["pruned"] else "kept"
        print(f"{r['seed']:>4}  {kept:8}  {dropped:9}  {t[0]:>7} {t[9]:>4} {t[19]:>4} {t[29]:>4}")
    print(f"largest at prompt 30: {max(r['tokens'][29] for r in rows)}")


if __name__ == "__main__":
    main()
