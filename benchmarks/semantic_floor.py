#!/usr/bin/env python3
"""Where to put semantic search's similarity floor: the cosines of relevant results beside
those of queries that have no answer in the store. The score recorded is the one that ranks
a note and that the floor applies to: its best passage's cosine with the query vector after
keyword feedback.

On the tuning sets (benchmarks/eval, eval2's tune split, LoCoMo conversations 1-5 as
session notes) it records the cosine of every relevant note semantic search returns in its
top 10, and for off-topic queries (questions about things no note is about, in English and
Chinese) the score of their best result. A floor should sit below nearly every relevant
hit and above most off-topic best results. Prints percentiles and, for candidate floors,
the share of relevant hits lost and of off-topic queries answered "nothing close".

Usage:
    python benchmarks/semantic_floor.py [--embedder default]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_search  # noqa: E402
import locomo  # noqa: E402

from notewell.search import passages  # noqa: E402
from notewell.search.embedders import UseEmbedder  # noqa: E402

OFF_TOPIC = [
    "how long should sourdough proof in a cold fridge",
    "best time of year to plant tulip bulbs",
    "what is the offside rule in football",
    "recommended tyre pressure for a touring bicycle",
    "how do migratory birds find their way south",
    "symptoms of a vitamin D deficiency",
    "when did the Byzantine empire fall",
    "how to knit a cable stitch scarf",
    "what wine goes with grilled salmon",
    "how do I descale an espresso machine",
    "rules of cricket for beginners",
    "how far is the moon from the earth",
    "care instructions for a leather sofa",
    "which chess opening is best for beginners",
    "how to train a puppy to stop biting",
    "what causes the northern lights",
    "how to make a paper airplane that flies far",
    "history of the Roman aqueducts",
    "how many calories are in an avocado",
    "learn to play the ukulele chords",
    "怎么做红烧肉",
    "明天北京的天气怎么样",
    "如何种植多肉植物",
    "长城有多长",
    "怎样学习弹钢琴",
    "猫咪为什么喜欢纸箱",
    "宋朝的历史",
    "如何挑选西瓜",
]


def percentiles(values: list[float], points: tuple[int, ...] = (1, 2, 5, 10, 25, 50, 75, 90, 95, 99)) -> str:
    ordered = sorted(values)
    if not ordered:
        return "-"
    return "  ".join(f"p{p} {ordered[min(len(ordered) - 1, len(ordered) * p // 100)]:.3f}" for p in points)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--floors", default="0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4")
    args = ap.parse_args()
    embedder = eval_search.choose_embedder(args.embedder)
    UseEmbedder.similarity_floor = None  # measured without the floor in place (another model has none)
    relevant_scores: dict[str, list[float]] = {}
    off_scores: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="nw-floor-") as tmp:
        stores = []
        for name, split in (("eval", "all"), ("eval2", "tune")):
            if not list(eval_search.SETS[name].glob("queries*.jsonl")):
                continue
            built = eval_search.build(name, embedder, Path(tmp))
            got = relevant_scores.setdefault(name, [])
            for q in built.queries:
                if split != "all" and q["split"] != split:
                    continue
                cards = built.store.search_notes(q["query"], mode="semantic", limit=10, **(q.get("filters") or {}))
                got += [c.score for c in cards if built.by_id[c.id] in set(q["relevant"])]
            stores.append((name, built.store))
        conversations = locomo.load(locomo.DEFAULT_DATA)[:5]
        lbuilt = locomo.build(conversations, "session", embedder, Path(tmp))
        got = relevant_scores.setdefault("locomo-session", [])
        for b in lbuilt:
            for q in b.questions:
                cards = b.store.search_notes(q.text, mode="semantic", limit=10)
                got += [c.score for c in cards if b.unit_of[c.id] in b.relevant(q)]
        stores += [(f"locomo-{b.conversation.sample_id}", b.store) for b in lbuilt]
        for name, store in stores:
            kind = name if not name.startswith("locomo") else "locomo-session"
            off = off_scores.setdefault(kind, [])
            for q in OFF_TOPIC:
                cards = store.search_notes(q, mode="semantic", limit=1)
                off.append(cards[0].score if cards else -1.0)
        locomo.close(lbuilt)
        for _name, store in stores[: len(stores) - len(lbuilt)]:
            store.close()
    print(f"feedback weight {passages.FEEDBACK_WEIGHT}, notes {passages.FEEDBACK_NOTES}")
    for name in relevant_scores:
        print(f"\n{name}: relevant hits in the top 10 ({len(relevant_scores[name])}):")
        print("  " + percentiles(relevant_scores[name]))
        print(f"{name}: best result of off-topic queries ({len(off_scores[name])}):")
        print("  " + percentiles(off_scores[name]))
    print("\nfloor   " + "  ".join(f"{n[:14]:>14s} lost/empty" for n in relevant_scores))
    for floor in (float(x) for x in args.floors.split(",")):
        cells = []
        for name in relevant_scores:
            rel, off = relevant_scores[name], off_scores[name]
            lost = sum(s < floor for s in rel) / max(1, len(rel))
            empty = sum(s < floor for s in off) / max(1, len(off))
            cells.append(f"{'':>9s}{lost:.3f}/{empty:.3f}")
        print(f"{floor:5.2f}   " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
