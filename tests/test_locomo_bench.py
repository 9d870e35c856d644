"""benchmarks/locomo.py on a synthetic two-session conversation written here (not LoCoMo's data)."""

from __future__ import annotations

import json
import math
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
        {"question": "Where was Ana's recital?", "adversarial_answer": "Lisbon", "evidence": ["D2:1"], "category": 5},
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


def test_load_reads_evidence_leniently_and_keeps_adversarial_apart(data):
    (conv,) = _script().load(data)
    assert [len(s.turns) for s in conv.sessions] == [3, 2]
    assert conv.adversarial == 2 and sorted(conv.dropped) == ["D", "D2:9"]
    assert [q.evidence for q in conv.questions] == [("D1:1",), ("D2:1",), ("D1:2", "D2:1"), ("D2:2",), ("D1:1",)]
    assert [q.evidence for q in conv.adversarial_questions] == [("D2:1",)]  # the one without evidence is left out
    assert conv.scored("notes") == conv.questions
    assert [q.category for q in conv.scored("engram")] == [4, 4, 1, 2, 3, 5]


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


@pytest.mark.slow
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


def _long_conversation(turns_per_session: list[int]) -> dict:
    """A conversation whose session n has the given number of turns, alternating speakers."""
    conv: dict = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for n, count in enumerate(turns_per_session, 1):
        conv[f"session_{n}_date_time"] = f"10:00 am on {n} June, 2023"
        conv[f"session_{n}"] = [
            {"speaker": "AB"[i % 2].replace("A", "Ana").replace("B", "Ben"), "dia_id": f"D{n}:{i + 1}",
             "text": f"line {i + 1} of session {n} " + "x" * 40}
            for i in range(count)
        ]  # fmt: skip
    qa = [{"question": "Which line?", "answer": "-", "evidence": ["D1:6", "D1:2", "D1:3"], "category": 4}]
    return {"sample_id": "conv-long", "conversation": conv, "qa": qa}


def test_windows_are_six_turns_overlapping_by_one_within_a_session():
    m = _script()
    cuts = {n: [(w.start, w.stop) for w in m.windows(tuple(range(n)))] for n in (3, 6, 7, 11, 12, 16)}
    assert cuts == {
        3: [(0, 3)],
        6: [(0, 6)],
        7: [(0, 6), (5, 7)],
        11: [(0, 6), (5, 11)],  # no window of the last turn alone, as Engram's loop makes
        12: [(0, 6), (5, 11), (10, 12)],
        16: [(0, 6), (5, 11), (10, 16)],
    }
    with pytest.raises(ValueError):
        m.windows(tuple(range(9)), size=3, overlap=3)


def test_window_notes_and_their_evidence(tmp_path):
    m = _script()
    conv = m.conversation_from(_long_conversation([12, 2]))
    units = m.cut(conv, "window")
    assert [u.key for u in units] == ["S1:1-6", "S1:6-11", "S1:11-12", "S2:1-2"]  # never across a session's end
    assert {u.title for u in units[:3]} == {"Session 1, 10:00 am on 1 June, 2023"}
    assert units[1].body.splitlines()[0] == "Ben: line 6 of session 1 " + "x" * 40
    assert units[1].turns == tuple(f"D1:{i}" for i in range(6, 12)) and units[3].sessions == (2,)
    (built,) = m.build([conv], "window", None, tmp_path)
    try:
        (q,) = built.questions
        assert built.holders["D1:6"] == ("S1:1-6", "S1:6-11")
        assert built.relevant(q) == {"S1:1-6", "S1:6-11"}
        # D1:2 and D1:3 are held by the same window: one item of evidence; D1:6 by either of two
        assert built.evidence(q) == [frozenset({"S1:1-6", "S1:6-11"}), frozenset({"S1:1-6"})]
        assert m.judge(built, q, ["S1:6-11", "S2:1-2"], "notes") == (0.5, 1.0)
        second = pytest.approx(1 / math.log2(3))  # the one evidence session, second of two distinct ones
        assert m.judge(built, q, ["S2:1-2", "S1:1-6", "S1:6-11"], "engram") == (1.0, 1.0, second, second)
    finally:
        built.close()


def test_part_notes_pack_whole_sessions(monkeypatch):
    m = _script()
    conv = m.conversation_from(_long_conversation([3, 3, 3, 12]))
    block = len(m.part_body(conv.sessions[:1]))
    monkeypatch.setattr(m, "PART_CHARS", 2 * block + 2)  # two short sessions fit, not three
    units = m.cut(conv, "part")
    assert [u.key for u in units] == ["S1-S2", "S3-S3", "S4-S4"]  # a longer session is a part of its own
    assert [u.sessions for u in units] == [(1, 2), (3,), (4,)]
    assert units[0].title == "Sessions 1-2, 10:00 am on 1 June, 2023 to 10:00 am on 2 June, 2023"
    assert units[1].title == "Session 3, 10:00 am on 3 June, 2023"
    assert units[0].body.startswith("## Session 1, 10:00 am on 1 June, 2023\nAna: line 1 of session 1")
    assert "\n\n## Session 2, 10:00 am on 2 June, 2023\nAna: line 1" in units[0].body
    assert len(units[0].body) <= m.PART_CHARS and "D2:3" in units[0].turns


def test_session_metrics_the_published_way():
    m = _script()
    assert m.distinct([3, 3, 2, 3, 5]) == [3, 2, 5]
    assert m.session_metrics([2, 5, 3], {3, 9}) == (1.0, 1.0, pytest.approx(0.5), pytest.approx(0.5))
    # the ideal DCG is that of the retrieved relevances sorted, not of every evidence session
    assert m.session_metrics([3], {3, 9}) == (1.0, 1.0, 1.0, 1.0)
    both = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert m.session_metrics([2, 1, 3], {2, 3}) == (1.0, 1.0, pytest.approx(both), pytest.approx(both))
    assert m.session_metrics([1, 2, 4, 5, 6, 3], {3}) == (0.0, 1.0, 0.0, pytest.approx(1 / math.log2(7)))
    assert m.session_metrics([], {3}) == (0.0, 0.0, 0.0, 0.0)
    assert m.metrics(["a", "b"], [frozenset({"a", "x"}), frozenset({"z"})]) == (0.5, 1.0)


@pytest.mark.slow
def test_engram_protocol_scores_every_question_with_evidence(data, tmp_path):
    m = _script()
    conversations = m.load(data)
    for granularity in ("session", "turn", "window"):
        built = m.build(conversations, granularity, "hash", tmp_path / granularity)
        try:
            for system in m.SYSTEMS:
                scores = m.score(built, system, protocol="engram")
                assert set(scores) == {1, 2, 3, 4, 5, "all"} and all(len(v) == 4 for v in scores.values())
                assert all(0.0 <= x <= 1.0 for v in scores.values() for x in v)
            assert m.score(built, "keyword", protocol="engram")[4] == (1.0, 1.0, 1.0, 1.0)
            assert len(m.evaluate(built, "grep", protocol="engram")) == 6
        finally:
            m.close(built)
    built = m.build(conversations, "part", None, tmp_path / "part")
    try:
        assert m.score(built, "grep")[4] == (1.0, 1.0)
        with pytest.raises(ValueError, match="part"):
            m.score(built, "grep", protocol="engram")
    finally:
        m.close(built)


def test_main_window_and_part_under_both_protocols(data, tmp_path, capsys):
    m = _script()
    out_json = tmp_path / "out.json"
    argv = ["--data", str(data), "--embedder", "hash", "--granularity", "window,part", "--protocol", "both"]
    assert m.main([*argv, "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "== window granularity: 2 notes" in out and "== part granularity: 1 notes" in out
    assert "hit@5 / hit@10" in out and "nDCG@5 / nDCG@10" in out and "5 adversarial" in out
    report = json.loads(out_json.read_text(encoding="utf-8"))["granularities"]
    assert report["window"]["engram"]["systems"]["hybrid"]["categories"]["all"]["n"] == 6
    assert set(report["window"]["engram"]["systems"]["grep"]["categories"]["5"]) == {
        "name", "n", "hit5", "hit10", "ndcg5", "ndcg10"
    }  # fmt: skip
    assert report["part"]["systems"]["keyword"]["categories"]["all"]["n"] == 5 and "engram" not in report["part"]
    with pytest.raises(SystemExit):
        m.main(["--data", str(data), "--granularity", "part", "--protocol", "engram"])
    assert "a part note holds several" in capsys.readouterr().err
