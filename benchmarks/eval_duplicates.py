#!/usr/bin/env python3
"""How well ``add_note``'s "similar notes" finds a finding written twice, and how often it cries
wolf: the thresholds of services/similar_notes.py, chosen here.

Three note sets: ``eval`` (167 notes) and ``eval2/notes-a`` (120 notes) to choose the thresholds
on, ``eval2/notes-b`` (120 notes, other projects) never tuned on: its figures are reported at
the thresholds the first two chose. For every note X of a set (all of its notes in one store):

- a **second write** of X, as an agent that forgot it wrote X would write it again, two ways
  (seeded): *restated*: the title with a third of its words dropped, the body's lines kept with
  probability 0.6, shuffled, a tenth of their words dropped; *partial*: a third of X's lines,
  a quarter of their words dropped, mixed with half as many lines of another note of the same
  project (a new note that repeats part of X). Found when X is reported at or above the threshold.
- X itself as a **new note** with X left out of the candidates: its nearest notes are related
  notes of the same project, which it must not be flagged against. A false alarm when anything
  is reported.

Prints, per threshold, recall (second writes found), false alarms (new notes flagged) and F1 per
set, for the word overlap (keyword candidates) and, with ``--meaning``, the model's cosine
(semantic candidates, the default model). Then the threshold with the best mean F1 over the two
tuning sets, and the untouched set's figures at it.

    python benchmarks/eval_duplicates.py                 # words only
    python benchmarks/eval_duplicates.py --meaning       # and meaning (embeds the sets: minutes)
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from pathlib import Path

import notewell
from notewell.model.header import compose_note, parse_note
from notewell.services.similar_notes import similar_notes

ROOT = Path(__file__).resolve().parent
SETS = {
    "eval": (ROOT / "eval" / "notes.jsonl", "tune"),
    "eval2-a": (ROOT / "eval2" / "notes-a.jsonl", "tune"),
    "eval2-b": (ROOT / "eval2" / "notes-b.jsonl", "test"),
}
THRESHOLDS = [round(0.05 * i, 2) for i in range(2, 20)]


def _notes(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def second_write(text: str, rng: random.Random, other: str | None = None) -> str:
    """*text* written again from memory: fewer, reordered lines, some words gone, the title
    reworded; with *other* (another note's text), only a third of it, mixed with *other*'s lines."""
    parsed = parse_note(text)
    header = parsed.header or {}
    title = str(header.get("title") or "")
    words = title.split()
    kept_title = " ".join(w for w in words if rng.random() > 0.33) or title
    lines = [ln for ln in parsed.body.splitlines() if ln.strip()]
    share, drop = (0.6, 0.1) if other is None else (0.33, 0.25)
    kept = [ln for ln in lines if rng.random() < share] or lines[:1]
    kept = [" ".join(w for w in ln.split() if rng.random() > drop) for ln in kept]
    if other is not None:
        theirs = [ln for ln in parse_note(other).body.splitlines() if ln.strip()]
        kept += rng.sample(theirs, min(len(theirs), max(1, len(kept) // 2)))
    rng.shuffle(kept)
    body = "\n".join(kept)
    tags = [str(t) for t in header.get("tags") or []] if isinstance(header.get("tags"), list) else []
    kind = header.get("kind") if isinstance(header.get("kind"), str) else None
    return compose_note(body + "\n", title=kept_title or None, kind=kind, tags=tags)


def _finder(store: notewell.Store, meaning: bool):  # noqa: ANN202 - a closure over the store
    """similar_notes on *store* with no threshold: every candidate with its similarity."""

    def search(query: str, mode: str, limit: int) -> list:
        return store.search_notes(query, limit=limit, mode=mode)

    def read(ids: list[str]) -> dict[str, str]:
        return {i: f"{n.title}\n{n.body}" for i in ids for n in [store.get_note(i)]}

    def find(text: str, exclude: tuple[str, ...] = ()) -> list[dict]:
        # Each channel on its own (in one call, a meaning entry would stand in for a words one).
        found = similar_notes(search, read, text, exclude=exclude, limit=50, words_threshold=0.0)
        if meaning:
            found += similar_notes(search, read, text, exclude=exclude, limit=50, meaning=True,
                                   words_threshold=2.0, meaning_threshold=-1.0)  # fmt: skip
        return found

    return find


def score_set(store: notewell.Store, notes: list[dict], ids: dict[str, str], meaning: bool, seed: int) -> dict:
    """For each probe, the similarity to the right note (second writes) or the best to any (new notes)."""
    rng = random.Random(seed)
    find = _finder(store, meaning)
    out: dict[str, dict[str, list[float]]] = {
        by: {"restated": [], "partial": [], "neg": []} for by in ("words", "meaning")
    }
    by_project: dict[str, list[dict]] = {}
    for n in notes:
        by_project.setdefault(n["project"], []).append(n)
    for n in notes:
        key, text = n["key"], n["text"]
        nid = ids[key]
        others = [o for o in by_project[n["project"]] if o["key"] != key] or [o for o in notes if o["key"] != key]
        for kind, probe in (
            ("restated", second_write(text, rng)),
            ("partial", second_write(text, rng, rng.choice(others)["text"])),
        ):
            found = find(probe)
            for by in out:
                hit = [f["similarity"] for f in found if f["id"] == nid and f["by"] == by]
                out[by][kind].append(hit[0] if hit else 0.0)
        # the same words and meaning entries for X itself, with X out of the running
        alone = find(text, (nid,))
        for by in out:
            best = max((f["similarity"] for f in alone if f["by"] == by), default=0.0)
            out[by]["neg"].append(best)
    return out


def figures(scores: dict[str, list[float]], t: float) -> tuple[float, float, float, float]:
    """(recall of restated, recall of partial, false alarms, F1 over both kinds of second write)."""
    pos, neg = scores["restated"] + scores["partial"], scores["neg"]
    tp = sum(s >= t for s in pos)
    fp = sum(s >= t for s in neg) * 2  # as many new notes as second writes: weigh them alike
    recall = tp / len(pos)
    precision = tp / (tp + fp) if tp + fp else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    restated = sum(s >= t for s in scores["restated"]) / len(scores["restated"])
    partial = sum(s >= t for s in scores["partial"]) / len(scores["partial"])
    return restated, partial, fp / 2 / len(neg), f1


def combined(scores: dict, tw: float, tm: float) -> tuple[float, float, float, float]:
    """figures() for "words at or above tw, or meaning at or above tm" (what add_note reports)."""
    w, m = scores["words"], scores["meaning"]
    merged = {kind: [1.0 if a >= tw or b >= tm else 0.0 for a, b in zip(w[kind], m[kind], strict=True)]
              for kind in ("restated", "partial", "neg")}  # fmt: skip
    return figures(merged, 0.5)


def both(results: dict, tw: float) -> None:
    """Meaning beside words at *tw*: the meaning threshold with the best mean F1 on the tuning sets."""
    print(f"\n== words at {tw:.2f} or meaning at the threshold: found (restated, partial) / false alarms / F1")
    print("threshold " + "".join(f"{name:>30}" for name in SETS))
    best_t, best_f1 = (
        2.0,
        statistics.mean(combined(results[n], tw, 2.0)[3] for n, (_, s) in SETS.items() if s == "tune"),
    )
    print(
        "  (words) "
        + "".join("  {:5.3f} {:5.3f} {:5.3f} {:5.3f}   ".format(*combined(results[n], tw, 2.0)) for n in SETS)
    )
    for tm in THRESHOLDS:
        row = [combined(results[name], tw, tm) for name in SETS]
        print(f"   {tm:.2f}  " + "".join(f"  {r:5.3f} {p:5.3f} {fa:5.3f} {f1:5.3f}   " for r, p, fa, f1 in row))
        tune = statistics.mean(combined(results[n], tw, tm)[3] for n, (_, s) in SETS.items() if s == "tune")
        if tune > best_f1:
            best_t, best_f1 = tm, tune
    r, p, fa, f1 = combined(results["eval2-b"], tw, best_t)
    said = "never (words alone do best)" if best_t > 1 else f"{best_t:.2f}"
    print(f"meaning threshold with the best mean F1 on eval + eval2-a: {said} (mean F1 {best_f1:.3f}); untouched"
          f" eval2-b: restated found {r:.3f}, partial found {p:.3f}, false alarms {fa:.3f}, F1 {f1:.3f}")  # fmt: skip
    # The lowest threshold at which meaning costs nothing on either tuning set: a net for what words
    # cannot see (the same finding in other words or another language) at no measured price.
    alone = {n: combined(results[n], tw, 2.0)[3] for n, (_, s) in SETS.items() if s == "tune"}
    safe = next((tm for tm in THRESHOLDS if all(combined(results[n], tw, tm)[3] >= f for n, f in alone.items())), None)
    if safe is not None:
        r, p, fa, f1 = combined(results["eval2-b"], tw, safe)
        print(f"lowest meaning threshold that costs nothing on eval and eval2-a: {safe:.2f}; untouched eval2-b at it:"
              f" restated found {r:.3f}, partial found {p:.3f}, false alarms {fa:.3f}, F1 {f1:.3f}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--meaning", action="store_true", help="also the default model's cosine (embeds every set)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (path, _split) in SETS.items():
            notes = _notes(path)
            embedder = "default" if args.meaning else None
            with notewell.Store(Path(tmp) / name, watch=True, embedder=embedder) as store:
                runs: dict[str, str] = {}
                ids: dict[str, str] = {}
                for n in notes:
                    if n["project"] not in runs:
                        runs[n["project"]] = store.start_attempt(n["project"], author="eval").id
                    ids[n["key"]] = store.add_note(n["text"], attempt=runs[n["project"]]).id
                if args.meaning:
                    store.embed_pending()
                results[name] = score_set(store, notes, ids, args.meaning, args.seed)
            print(f"{name}: {len(notes)} notes scored", file=sys.stderr, flush=True)
    channels = ["words"] + (["meaning"] if args.meaning else [])
    chosen: dict[str, float] = {}
    for by in channels:
        print(f"\n== {by}: found (restated, partial) / false alarms (new notes flagged) / F1")
        print("threshold " + "".join(f"{name:>30}" for name in SETS))
        best_t, best_f1 = None, -1.0
        for t in THRESHOLDS:
            row = [figures(results[name][by], t) for name in SETS]
            print(f"   {t:.2f}  " + "".join(f"  {r:5.3f} {p:5.3f} {fa:5.3f} {f1:5.3f}   " for r, p, fa, f1 in row))
            tune_f1 = statistics.mean(figures(results[name][by], t)[3] for name, (_, s) in SETS.items() if s == "tune")
            if tune_f1 > best_f1:
                best_t, best_f1 = t, tune_f1
        assert best_t is not None
        chosen[by] = best_t
        r, p, fa, f1 = figures(results["eval2-b"][by], best_t)
        print(f"chosen on eval + eval2-a: {best_t:.2f} (mean F1 {best_f1:.3f}); untouched eval2-b at it:"
              f" restated found {r:.3f}, partial found {p:.3f}, false alarms {fa:.3f}, F1 {f1:.3f}")  # fmt: skip
    if args.meaning:
        both(results, chosen["words"])


if __name__ == "__main__":
    main()
