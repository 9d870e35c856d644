"""How many words the must-survive values of ``bench make --size scale --survive N`` take, at least.

The tersest summary that still answers the quiz names, for each value that exists only in the
conversation or in output that does not come back, what it is about and the value: the rollout, one
word for what was decided and the value ("ledgerd port 41237"), two words of label for a probe's or a
log's value. This counts those words and characters for each N against the 900 characters each compaction
allows (by default); a
summary also has to carry everything else worth keeping, so this is a floor, not an estimate.

    python benchmarks/bench_notebook_survive_words.py [--survive 5,10,20,40,80] [--seeds 1,2,3] [--json]
"""

from __future__ import annotations

import argparse
import json
import re

from notewell.agents.notebook_bench import SUMMARY_CHARS_DEFAULT, build_bench

_DECIDED = re.compile(r"What is the (?P<what>.+) of the (?P<rollout>\w+) rollout\?")


def _entries(seed: int, survive: int) -> list[str]:
    """The tersest summary's entries, one per must-survive value ("ledgerd port 41237")."""
    entries = []
    for q in build_bench(seed, 300, "scale", survive).questions:
        if q.group == "re-readable":
            continue
        m = _DECIDED.fullmatch(q.text)
        label = f"{m['rollout']} {m['what'].split()[-1]}" if m else "two words"
        entries.append(f"{label} {' '.join(q.expect)}")
    return entries


def floor_words(seed: int, survive: int) -> int:
    """Words of the tersest summary that holds every must-survive value of the benchmark."""
    return sum(len(e.split()) for e in _entries(seed, survive))


def floor_chars(seed: int, survive: int) -> int:
    """Characters of that summary, its entries joined by "; " (the scale size's budget is in characters)."""
    return len("; ".join(_entries(seed, survive)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--survive", default="5,10,20,40,80")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = []
    for n in (int(s) for s in args.survive.split(",")):
        bench = build_bench(seeds[0], 300, "scale", n)
        words = [floor_words(seed, n) for seed in seeds]
        chars = [floor_chars(seed, n) for seed in seeds]
        rows.append({"survive": n, "prompts": len(bench.prompts), "floor_words": words, "floor_chars": chars})
    if args.json:
        print(json.dumps(rows))
        return
    budget = SUMMARY_CHARS_DEFAULT
    print(f"{'survive':>7} {'prompts':>7}  floor words; characters per seed (budget {budget} characters a compaction)")
    for r in rows:
        words, chars = ", ".join(map(str, r["floor_words"])), ", ".join(map(str, r["floor_chars"]))
        print(f"{r['survive']:>7} {r['prompts']:>7}  {words}; {chars}")


if __name__ == "__main__":
    main()
