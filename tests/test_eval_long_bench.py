"""benchmarks/eval_long.py on a tiny set written here: two conversations (one over 96 KB, so the
importer makes two parts of it), two notes and five queries."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import load_script

pytest.importorskip("numpy")  # the hash embedder's vectors

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "eval_long.py"

SHORT = [  # (request, answer, tools)
    ("The invoice worker floods Stripe.", "Every failed charge is retried at once.", ["Read(src/worker.py)"]),
    ("Add backoff, five attempts at most.", "Done: min(2 ** attempt, 60) seconds.", ["Edit(src/worker.py)"]),
    ("Priya wants the retries on the queue.", "The queue survives a restart; sleeps do not.", []),
    ("Decide: queue retries.", "Agreed: redrive after 5 receives to invoice-dlq.", ["Bash(terraform plan) failed"]),
    ("Why did the plan fail?", "A stale provider lock; init fixed it.", ["Bash(terraform init -upgrade)"]),
    ("Ship it.", "Applied: maxReceiveCount = 5.", ["Bash(terraform apply -auto-approve)"]),
]  # fmt: skip
FILLER = "The reconciliation job compares each ledger entry with the settlement file of the day. "


def _conversation(cid: str, title: str, day: int, exchanges: list[tuple[str, str, list[str]]]) -> dict:
    turns = []
    for i, (request, answer, tools) in enumerate(exchanges):
        minute = f"2026-09-{day:02d}T{9 + i // 20:02d}:{(i % 20) * 3:02d}"
        turns.append({"id": f"{cid}.{2 * i + 1}", "role": "user", "time": f"{minute}:00Z", "text": request})
        answer_turn = {"id": f"{cid}.{2 * i + 2}", "role": "assistant", "time": f"{minute}:40Z", "text": answer}
        turns.append(answer_turn | ({"tools": tools} if tools else {}))
    return {"id": cid, "title": title, "cwd": "/home/dev/pay", "branch": "main", "started": turns[0]["time"],
            "turns": turns}  # fmt: skip


def _long() -> list[tuple[str, str, list[str]]]:
    out = []
    for i in range(30):
        answer = (FILLER * 45)[:3900]
        if i == 25:
            answer = "Found it: the settlement file is in Chicago time, so late entries move a day.\n" + answer[:3000]
        out.append((f"Check batch {1000 + i}.", answer, [f"Bash(python -m recon --batch {1000 + i})"]))
    return out


QUERIES = [
    {"query": "what did we decide about invoice retries", "kind": "decision", "relevant": ["c1.7", "c1.8"],
     "answer": "queue retries", "split": "tune", "lang": "en"},
    {"query": "what did Priya want", "kind": "who", "relevant": ["c1.5"], "answer": "queue", "split": "test",
     "lang": "en"},
    {"query": "why did late entries land on the next day", "kind": "deep", "relevant": ["c2.51", "n2"],
     "answer": "Chicago time", "split": "tune", "lang": "en"},
    {"query": "settlement timezone Chicago", "kind": "fact", "relevant": ["c2.52", "c2.51", "n1"],
     "answer": "Chicago", "split": "test", "lang": "en"},
    {"query": "对账 时区", "kind": "fact", "relevant": ["n2"], "answer": "芝加哥", "split": "tune", "lang": "zh"},
]  # fmt: skip
NOTES = [
    {"id": "n1", "title": "Weekly digest", "kind": "digest", "tags": ["weekly"], "created": "2026-09-20T10:00:00Z",
     "text": "- Retries moved to the queue.\n- Settlement timezone fixed (Chicago).\n"},
    {"id": "n2", "title": "对账日志", "kind": "log", "tags": ["recon"], "created": "2026-09-21T10:00:00Z",
     "text": "对账任务的差异来自时区：结算文件是芝加哥时间。\n" * 3},
]  # fmt: skip


def _script() -> ModuleType:
    return load_script("eval_long_bench", SCRIPT)


@pytest.fixture
def set_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    folder.mkdir()
    convs = [_conversation("c1", "Retry storm", 14, SHORT), _conversation("c2", "Recon mismatches", 16, _long())]
    for name, rows in (("conversations", convs), ("notes", NOTES), ("queries", QUERIES)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (folder / f"{name}.jsonl").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def built(set_dir: Path, tmp_path: Path):
    m = _script()
    evalset = m.load(set_dir)
    made = {g: m.build(evalset, g, "hash", tmp_path / "stores") for g in m.GRANULARITIES}
    yield made
    m.close(made.values())


def test_load_with_one_split_drops_the_others_queries(set_dir: Path) -> None:
    m = _script()
    assert [q.split for q in m.load(set_dir).queries] == ["tune", "test", "tune", "test", "tune"]
    tune = m.load(set_dir, split="tune")
    assert {q.split for q in tune.queries} == {"tune"} and len(tune.queries) == 3
    assert "queue" not in {q.answer for q in tune.queries}  # a test query's answer is never held
    assert len(tune.conversations[1].turns) == 60 and tune.conversations[0].turns[7].tools == (
        "Bash(terraform plan) failed",
    )
    bad = set_dir / "queries.jsonl"
    bad.write_text(json.dumps({"query": "q", "kind": "fact", "relevant": ["c9.1"], "split": "tune"}) + "\n")
    with pytest.raises(ValueError, match="c9.1"):
        m.load(set_dir)


@pytest.mark.slow
def test_imported_conversations_map_each_turn_to_the_part_holding_it(built) -> None:
    b = built["conversation"]
    assert [u.key for u in b.units] == ["c1", "c2", "c2/part2", "n1", "n2"]
    assert b.holder["c1.1"] == b.holder["c1.12"] == "c1"
    parts = {u.key: u for u in b.units}
    first, second = parts["c2"].holds, parts["c2/part2"].holds
    assert first[0] == "c2.1" and second[-1] == "c2.60" and int(first[-1][3:]) + 1 == int(second[0][3:])
    for key in ("c2", "c2/part2"):  # each turn the map gives a part is in that part's body
        unit = parts[key]
        for turn_id in unit.holds:
            n = int(turn_id.split(".")[1])
            assert f"**{n}. {'user' if n % 2 else 'assistant'}**" in unit.body
    found = next(u for u in b.units if "Chicago time" in u.body)
    assert b.holder["c2.52"] == found.key
    assert "Bash(terraform plan) failed" in parts["c1"].body  # the importer's condensed tools line
    assert len(b.key_of) == 5 and set(b.key_of.values()) == set(parts)
    q = b.evalset.queries[3]  # c2.51 and c2.52 are one exchange: one note, beside n1
    assert b.relevant(q) == {found.key, "n1"}
    assert b.store.pending_embeddings() == 0


@pytest.mark.slow
def test_windows_and_exchanges_map_turns_to_their_notes(built) -> None:
    w, x = built["window"], built["exchange"]
    assert [u.key for u in w.units] == ["c1/w1", "c1/w2", *(f"c2/w{i}" for i in range(1, 7)), "n1", "n2"]
    assert w.holder["c1.10"] == "c1/w1" and w.holder["c1.11"] == w.holder["c1.12"] == "c1/w2"
    assert w.holder["c2.50"] == "c2/w5" and w.holder["c2.51"] == w.holder["c2.60"] == "c2/w6"
    assert w.units[1].title == "Retry storm, exchange 6 of 6" and w.units[0].title == "Retry storm, exchanges 1-5 of 6"
    assert x.holder["c1.7"] == x.holder["c1.8"] == "c1/x4" and x.holder["c2.51"] == "c2/x26"
    assert len(x.units) == 6 + 30 + 2 and x.holder["n2"] == "n2"
    assert x.relevant(x.evalset.queries[0]) == {"c1/x4"} and w.relevant(w.evalset.queries[0]) == {"c1/w1"}
    assert x.relevant(x.evalset.queries[3]) == {"c2/x26", "n1"}


@pytest.mark.slow
def test_windows_are_laid_out_as_the_importer_lays_out_the_conversation(built) -> None:
    imported = {u.key: u.body for u in built["conversation"].units}["c1"]
    blocks = imported.split("\n\n")
    window = {u.key: u.body for u in built["window"].units}["c1/w1"]
    for block in window.split("\n\n")[1:]:  # every turn block as the importer wrote it (not the opening line)
        assert block.strip() in blocks, block
    assert window.splitlines()[0].startswith("Claude Code session of 2026-09-14 09:00 to 09:12 UTC: 5 requests,")


@pytest.mark.slow
def test_metric_arithmetic_on_a_hand_made_ranking(built, monkeypatch: pytest.MonkeyPatch) -> None:
    m = _script()
    assert m.metrics(["a", "b", "c", "d", "e", "f"], {"c", "f", "z"}) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert m.metrics(["x"] * 9 + ["a"], {"a"}) == (0.0, pytest.approx(0.1))
    assert m.metrics([], {"a"}) == (0.0, 0.0)
    b = built["exchange"]
    rankings = {  # per system, per query text: the keys it "returns"
        "keyword": {"what did we decide about invoice retries": ["c1/x1", "c1/x4"],  # R@5 1, RR 1/2
                    "why did late entries land on the next day": ["n2", "c2/x1"],  # R@5 1/2, RR 1
                    "对账 时区": []},  # R@5 0, RR 0
        "semantic": {"what did we decide about invoice retries": ["c1/x4"],  # R@5 1, RR 1
                     "why did late entries land on the next day": ["c2/x26", "n2"],  # 1, 1
                     "对账 时区": ["x", "y", "z", "n2"]},  # 1, 1/4
    }  # fmt: skip
    monkeypatch.setattr(m, "search", lambda built, system, query, limit=10: rankings[system][query])
    keyword = m.score(b, "keyword", "tune")
    assert keyword["decision"] == (1.0, 0.5) and keyword["deep"] == (0.5, 1.0) and keyword["fact"] == (0.0, 0.0)
    assert keyword["lang zh"] == (0.0, 0.0) and keyword["lang en"] == (0.75, 0.75)
    assert keyword["all"] == (pytest.approx(0.5), pytest.approx(0.5))
    assert list(keyword) == ["decision", "fact", "deep", "lang en", "lang zh", "all"]
    best = m.score(b, "best", "tune")  # per query the better of the two: semantic each time here
    assert best["all"] == (1.0, pytest.approx((1 + 1 + 0.25) / 3))
    both = m.evaluate_all(b, ["best", "keyword"], "tune")
    assert list(both) == ["best", "keyword"]
    assert [(r.recall5, r.rr10) for r in both["best"]] == [(1.0, 1.0), (1.0, 1.0), (1.0, 0.25)]


@pytest.mark.slow
def test_baselines_and_notewell_find_the_obvious(built) -> None:
    m = _script()
    b = built["exchange"]
    assert m.query_terms("What did Priya want about invoice-dlq?") == ["priya", "want", "invoice", "dlq"]
    assert m.query_terms("对账的时区 UTC") == ["utc", "对账", "账的", "的时", "时区"]
    assert m.search(b, "words", "Priya queue")[0] == "c1/x3"
    assert m.search(b, "fts5_or", "Priya queue")[0] == "c1/x3"
    assert m.search(b, "keyword", "Priya queue")[0] == "c1/x3"
    assert m.search(b, "words", "对账 时区")[0] == "n2"
    assert m.tool_parts("Bash(grep -n 'f(x)' a.py) failed") == ("Bash", "grep -n 'f(x)' a.py", True)
    assert m.tool_parts("TodoWrite") == ("TodoWrite", "", False)


@pytest.mark.slow
def test_main_prints_splits_apart_and_writes_every_figure(set_dir: Path, tmp_path: Path, capsys) -> None:
    out_json = tmp_path / "out.json"
    argv = ["--sets", str(set_dir), "--embedder", "hash", "--granularity", "window,exchange", "--json", str(out_json)]
    assert _script().main(argv) == 0
    out = capsys.readouterr().out
    assert (
        "== tiny, window granularity: 10 notes," in out and "-- tune (3 queries" in out and "-- test (2 queries" in out
    )
    report = json.loads(out_json.read_text(encoding="utf-8"))
    tiny = report["sets"]["tiny"]
    assert set(tiny["granularities"]) == {"window", "exchange"} and tiny["queries"] == {"tune": 3, "test": 2}
    window = tiny["granularities"]["window"]
    assert window["notes"] == 10 and window["max_chars"] >= window["mean_chars"] > 0
    assert set(window["splits"]) == {"tune", "test"} and set(window["splits"]["test"]) == set(_script().SYSTEMS)
    assert window["splits"]["test"]["keyword"]["rows"]["all"]["n"] == 2
    assert (
        _script().main(["--sets", str(set_dir), "--split", "tune", "--systems", "words", "--granularity", "exchange"])
        == 0
    )
    assert "-- test" not in capsys.readouterr().out
