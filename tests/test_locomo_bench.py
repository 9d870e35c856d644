"""benchmarks/locomo.py on a synthetic two-session conversation written here (not LoCoMo's data)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import load_script

pytest.importorskip("numpy")  # the hash embedder's vectors

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "locomo.py"

CONVERSATION = {
    "sample_id": "conv-test",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a greyhound named Biscuit last week."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! I am learning the cello."},
            {
                "speaker": "Ana",
                "dia_id": "D1:3",
                "text": "Look at him.",
                "img_url": ["https://example.invalid/a.jpg"],
                "blip_caption": "a photo of a dog on a sofa",
            },
        ],
        "session_2_date_time": "7:00 pm on 20 May, 2023",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "My cello recital in Lisbon went well."},
            {"speaker": "Ana", "dia_id": "D2:2", "text": "Biscuit chewed my new hiking boots."},
        ],
    },
    "qa": [
        {"question": "What is the name of Ana's greyhound?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
        {"question": "Where was Ben's cello recital?", "answer": "Lisbon", "evidence": ["D2:1"], "category": 4},
        {
            "question": "What instrument does Ben play, and where did he perform?",
            "answer": "cello, Lisbon",
            "evidence": ["D1:2; D2:01", "D", "D2:9"],  # lenient: D1:2 and D2:1 kept; "D" and D2:9 dropped
            "category": 1,
        },
        {"question": "What did Ana's dog chew?", "answer": "boots", "evidence": ["D:2:2"], "category": 2},
        {"question": "Does Ben own a cat?", "adversarial_answer": "yes", "evidence": [], "category": 5},
        {"question": "???", "answer": "-", "evidence": ["D1:1"], "category": 3},
    ],
}


def _script() -> ModuleType:
    return load_script("locomo_bench", SCRIPT)


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    return path


def test_load_reads_evidence_leniently_and_leaves_adversarial_out(data):
    (conv,) = _script().load(data)
    assert [len(s.turns) for s in conv.sessions] == [3, 2]
    assert conv.adversarial == 1 and sorted(conv.dropped) == ["D", "D2:9"]
    assert [q.evidence for q in conv.questions] == [("D1:1",), ("D2:1",), ("D1:2", "D2:1"), ("D2:2",), ("D1:1",)]


def test_note_texts_at_both_granularities(data):
    m = _script()
    (conv,) = m.load(data)
    sessions = m.units_of(conv, "session")
    assert [(k, t) for k, t, _b in sessions] == [
        ("S1", "Session 1, 1:56 pm on 8 May, 2023"),
        ("S2", "Session 2, 7:00 pm on 20 May, 2023"),
    ]
    assert sessions[0][2].splitlines()[2] == "Ana: Look at him. [shares a photo: a photo of a dog on a sofa]"
    turns = m.units_of(conv, "turn")
    assert turns[3] == ("D2:1", "7:00 pm on 20 May, 2023, Ben", "Ben: My cello recital in Lisbon went well.")


def test_build_and_score_every_system(data, tmp_path):
    m = _script()
    conversations = m.load(data)
    for granularity, notes in (("session", 2), ("turn", 5)):
        built = m.build(conversations, granularity, "hash", tmp_path / granularity)
        try:
            assert len(built[0].unit_of) == notes and built[0].store.pending_embeddings() == 0
            q = built[0].questions[2]
            assert built[0].relevant(q) == ({"S1", "S2"} if granularity == "session" else {"D1:2", "D2:1"})
            for system in m.SYSTEMS:
                scores = m.score(built, system)
                assert set(scores) == {1, 2, 3, 4, "all"}
                if system != "semantic":  # a vector can be made of anything
                    assert scores[3] == (0.0, 0.0), system  # "???" has no words: no results, not an error
                assert all(0.0 <= r5 <= 1.0 and 0.0 <= rr <= 1.0 for r5, rr in scores.values())
            for system in ("keyword", "grep", "fts5_or"):
                assert m.score(built, system)[4] == (1.0, 1.0), system
            where = "S2" if granularity == "session" else "D2:1"
            assert m.search(built[0], "grep", "Lisbon recital cello")[0] == where
        finally:
            m.close(built)


def test_metrics():
    m = _script()
    assert m.metrics(["a", "b", "c"], {"c", "z"}) == (0.5, pytest.approx(1 / 3))
    assert m.metrics([], {"a"}) == (0.0, 0.0)
    assert m.metrics(["x"] * 5 + ["a"], {"a"}) == (0.0, pytest.approx(1 / 6))


def test_main_prints_both_tables_and_writes_json(data, tmp_path, capsys):
    out_json = tmp_path / "out.json"
    assert _script().main(["--data", str(data), "--embedder", "hash", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "5 questions with evidence" in out and "2 evidence ids naming no turn dropped" in out
    assert "== session granularity: 2 notes" in out and "== turn granularity: 5 notes" in out
    report = json.loads(out_json.read_text(encoding="utf-8"))
    assert set(report["granularities"]) == {"session", "turn"}
    assert report["granularities"]["turn"]["systems"]["keyword"]["categories"]["all"]["n"] == 5
