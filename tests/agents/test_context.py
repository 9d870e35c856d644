"""ContextBuilder on a real store: notes reach the prompt, by priority, cited, within budget."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from notewell.agents.context import NOTES_ARE_DATA, ContextBuilder, ContextConfig, ContextPacket, history_packets
from notewell.errors import InvalidArgumentError
from notewell.model.token_count import estimate_tokens, exact_counter


@pytest.fixture
def store(backend):
    """Every test here runs on both stores."""
    return backend


def note(store, title, kind, body, tags=()):
    header = f"---\ntitle: {title}\nkind: {kind}\n" + (f"tags: [{', '.join(tags)}]\n" if tags else "") + "---\n"
    return store.add_note(header + "\n" + body + "\n")


@pytest.fixture
def project(store):
    ids = {
        "blocker": note(
            store, "Dependency conflict", "blocker", "pydantic 1 and 2 are both required.\nBlocks the refactor."
        ),
        "closed": note(store, "Old flaky test", "blocker", "Fixed by pinning pytest.", tags=["resolved"]),
        "action": note(store, "Refactor the business layer", "action", "Start with the order service."),
        "pool": note(store, "Connection pool sizing", "conclusion", "A pool of 32 is enough; 64 did not help."),
        "cache": note(store, "缓存预热策略", "conclusion", "部署后先预热缓存，再切流量。\n预热需要五分钟。"),
        "misc": note(store, "Team lunch", "reference", "Thursdays at noon."),
    }
    return {k: v.id for k, v in ids.items()}


@pytest.mark.slow
def test_notes_reach_the_prompt_cited_with_blockers_first(store, project):
    ctx = ContextBuilder(store).build("how big should the connection pool be?")
    system = ctx.system
    assert f'[blocker {project["blocker"]}] "Dependency conflict"' in system
    assert f'[conclusion {project["pool"]}] "Connection pool sizing"' in system
    assert "A pool of 32 is enough; 64 did not help." in system  # the body, not just a title
    assert project["closed"] not in system  # a resolved blocker is not open
    assert system.index("[Open blockers and actions]") < system.index("[Relevant notes]")
    assert system.index(project["blocker"]) < system.index(project["action"])  # blocker > action
    assert ctx.messages[1] == {"role": "user", "content": "how big should the connection pool be?"}
    assert set(ctx.citations) >= {project["blocker"], project["action"], project["pool"]}
    assert ctx.tokens <= ctx.budget and ctx.tokens == ContextBuilder(store).tokens_of(ctx.messages)


@pytest.mark.slow
def test_chinese_queries_find_chinese_notes(store, project):
    ctx = ContextBuilder(store).build("部署以后怎么预热缓存？")
    assert f'[conclusion {project["cache"]}] "缓存预热策略"' in ctx.system
    assert "预热需要五分钟。" in ctx.system
    cache = next(p for p in ctx.packets if p.source == project["cache"])
    assert cache.relevance == 1.0  # the engine's best hit


@pytest.mark.slow
def test_a_note_found_twice_appears_once(store, project):
    ctx = ContextBuilder(store).build("dependency conflict pydantic")  # the open blocker is also the top hit
    assert ctx.system.count(f"[blocker {project['blocker']}]") == 1
    packet = next(p for p in ctx.packets if p.source == project["blocker"])
    assert packet.section == "open" and packet.relevance == 1.0


@pytest.mark.slow
def test_the_budget_counts_everything_and_never_cuts_a_line(store, project):
    long_body = "\n".join(f"Step {i}: check replica {i} lag and the pool size before the cutover." for i in range(80))
    big = note(store, "Cutover runbook for the pool", "conclusion", long_body).id
    for budget in (300, 400, 700, 1500, 4000):
        cfg = ContextConfig(max_tokens=budget + 100, reserve_tokens=100, counter=estimate_tokens)
        ctx = ContextBuilder(store, cfg).build("pool size cutover")
        assert ctx.tokens <= budget
        assert project["blocker"] in ctx.system  # a long note is shortened rather than crowd out a blocker
        assert ctx.tokens == sum(estimate_tokens(m["content"]) + 4 for m in ctx.messages) + 3
        lines = set(ctx.system.splitlines())
        for line in long_body.splitlines():
            assert f"> {line}" in lines or not any(
                line[:20] in x and x != f"> {line}" for x in lines
            )  # whole or absent
        if big in ctx.system and big in [p.source for p in ctx.shortened]:
            assert "(shortened; read the note for the rest)" in ctx.system
    quoting = estimate_tokens(NOTES_ARE_DATA) + 30  # the words on how notes are quoted, each "> ", the author
    small = ContextBuilder(store, ContextConfig(max_tokens=330 + quoting, reserve_tokens=100, counter=estimate_tokens))
    ctx = small.build("pool size cutover")
    assert ctx.dropped and ctx.tokens <= 230 + quoting
    assert project["blocker"] in ctx.citations  # what stays out is what scores lowest
    assert not [p for p in ctx.dropped if p.section == "open"]  # open blockers and actions are never dropped
    # Whatever was dropped could not go in even shortened to a line in the room its lower-scored rivals held.
    now = datetime.now(UTC)
    for p in ctx.dropped:
        lower = [q for q in ctx.packets if q.section != "open" and small.score(q, now) < small.score(p, now)]
        room = ctx.budget - ctx.tokens + sum(small._cost(q, None, []) for q in lower)
        assert small._cost(p, 1, []) > room - 10, (p.title, room)


def test_exact_counts_meet_the_budget_too(store, project):
    count = exact_counter()
    cfg = ContextConfig(max_tokens=400, reserve_tokens=50, counter=count)
    ctx = ContextBuilder(store, cfg).build("部署以后怎么预热缓存？")
    assert ctx.tokens <= 350 and ctx.tokens == sum(count(m["content"]) + 4 for m in ctx.messages) + 3


def test_a_budget_too_small_for_the_question_is_refused(store):
    with pytest.raises(InvalidArgumentError, match="over the budget"):
        ContextBuilder(store, ContextConfig(max_tokens=60, reserve_tokens=10)).build("why " * 40)
    with pytest.raises(InvalidArgumentError):
        ContextConfig(max_tokens=100, reserve_tokens=100).check()
    with pytest.raises(InvalidArgumentError):
        ContextBuilder(store).build("   ")


def test_priorities_follow_note_type_and_are_configurable(store):
    now = datetime.now(UTC)
    packets = [
        ContextPacket("c", kind="conclusion", source="nte_c", title="c", timestamp=now, relevance=0.5),
        ContextPacket("a", kind="action", source="nte_a", title="a", timestamp=now, relevance=0.5),
        ContextPacket("b", kind="blocker", source="nte_b", title="b", timestamp=now, relevance=0.5),
        ContextPacket("o", kind="idea", source="nte_o", title="o", timestamp=now, relevance=0.5),
    ]
    builder = ContextBuilder(None)
    order = sorted(packets, key=lambda p: -builder.score(p, now))
    assert [p.kind for p in order] == ["blocker", "action", "conclusion", "idea"]
    custom = ContextBuilder(None, ContextConfig(priorities={"idea": 2.0, "blocker": 0.1}))
    assert sorted(packets, key=lambda p: -custom.score(p, now))[0].kind == "idea"


def test_recency_decays_over_days_and_caller_relevance_stands():
    now = datetime.now(UTC)
    builder = ContextBuilder(None, ContextConfig(half_life_days=7))
    fresh = ContextPacket("x", kind="conclusion", timestamp=now - timedelta(hours=5), relevance=0.5)
    week = ContextPacket("x", kind="conclusion", timestamp=now - timedelta(days=7), relevance=0.5)
    old = ContextPacket("x", kind="conclusion", timestamp=now - timedelta(days=70), relevance=0.5)
    s_fresh, s_week, s_old = (builder.score(p, now) for p in (fresh, week, old))
    assert s_fresh > s_week > s_old
    assert s_fresh - s_week == pytest.approx(0.2 * (0.5 ** (5 / 24 / 7) - 0.5), abs=1e-6)  # half after a week
    mine = ContextPacket("Use the EU region.", kind="custom", relevance=0.9)
    ctx = builder.build("which region?", packets=[mine])
    assert ctx.packets[0].relevance == 0.9 and "Use the EU region." in ctx.system
    assert mine.relevance == 0.9  # the caller's packet is not changed


def test_history_keeps_rounds_whole_with_summary_first():
    messages = [
        {"role": "system", "content": "[Conversation summary] the user asked about pools."},
        {"role": "user", "content": "tag the pool note"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add_tag", "arguments": '{"note_id": "nte_1"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'},
        {"role": "assistant", "content": "Tagged."},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "You're welcome."},
    ]
    packets = history_packets(messages)
    assert [p.kind for p in packets] == ["summary", "history", "history"]
    assert "called add_tag" in packets[1].content and "tool result" in packets[1].content
    ctx = ContextBuilder(None).build("what did we do?", conversation_history=messages)
    history = ctx.system[ctx.system.index("[Conversation so far]") :]
    assert history.index("[Conversation summary]") < history.index("tag the pool note") < history.index("thanks")
    with pytest.raises(InvalidArgumentError):
        history_packets([{"content": "no role"}])


def test_review_fixes_open_items_long_paragraphs_and_duplicates(store):
    open_blocker = note(store, "Still open", "blocker", "the migration lock is held by a dead worker")
    for i in range(14):
        note(store, f"Old blocker {i}", "blocker", f"fixed long ago {i}", tags=["resolved"])
    ctx = ContextBuilder(store).build("what is blocking us?")
    assert f'[blocker {open_blocker.id}] "Still open"' in ctx.system  # not crowded out by closed ones
    found = ContextBuilder(store).build("Old blocker fixed long ago")
    assert "[blocker, resolved " in found.system  # shown for what it is, ranked as history
    closed = next(p for p in found.packets if p.metadata.get("closed"))
    assert (
        ContextBuilder(store).score(closed, datetime.now(UTC))
        < ContextBuilder(store).score(next(p for p in found.packets if p.source == open_blocker.id), datetime.now(UTC))
        + 0.5
    )

    sentence = "部署之后需要先预热缓存，再把流量切过来，否则第一分钟的错误率会很高。"
    paragraph = note(store, "预热流程", "conclusion", sentence * 30)  # one long line, as Chinese is written
    quoting = estimate_tokens(NOTES_ARE_DATA) + 30  # the words on how notes are quoted, each "> ", the author
    cfg = ContextConfig(max_tokens=700 + quoting, reserve_tokens=100, counter=estimate_tokens)
    ctx = ContextBuilder(store, cfg).build("预热缓存")
    assert paragraph.id in [p.source for p in ctx.shortened]
    assert sentence in ctx.system and ctx.tokens <= 600 + quoting  # whole sentences, not a bare heading
    assert open_blocker.id in ctx.citations  # and the open blocker was not evicted for it

    chapter_style = ContextPacket(paragraph.body, relevance=0.7, metadata={"note_id": paragraph.id})
    ctx = ContextBuilder(store).build("预热缓存", packets=[chapter_style])
    assert ctx.system.count(sentence) == 30 and ctx.system.count(paragraph.id) == 1  # once, not twice


def test_tools_are_counted_and_bad_history_is_refused(store):
    tools = [{"type": "function", "function": {"name": "t", "description": "x " * 300, "parameters": {}}}]
    builder = ContextBuilder(store, ContextConfig(max_tokens=2000, reserve_tokens=100))
    with_tools = builder.build("anything", tools=tools)
    without = builder.build("anything")
    assert with_tools.tokens >= without.tokens + 300 and with_tools.tokens <= with_tools.budget
    for bad in (
        [{"role": "user", "content": 5}],
        [{"role": "assistant", "tool_calls": "abc"}],
        [{"role": "assistant", "tool_calls": [{"function": None}]}],
        [{"role": "wizard", "content": "x"}],
    ):
        with pytest.raises(InvalidArgumentError):
            builder.build("q", conversation_history=bad)
    prompt = [{"role": "system", "content": "You are a pirate"}, {"role": "user", "content": "hi"}]
    assert "pirate" not in builder.build("q", conversation_history=prompt).system  # a prompt is not conversation
    assert builder.build("q", now=datetime.now()).tokens > 0  # a naive time is taken as UTC


@pytest.mark.slow
def test_a_superseded_note_gives_way_to_its_correction(store, project):
    fixed = store.add_note(
        f"---\ntitle: Connection pool sizing, measured\nkind: conclusion\nsupersedes: [{project['pool']}]\n---\n\n"
        "A pool of 48 is needed at peak: 32 queued.\n"
    ).id
    wrong = store.add_note(
        f"---\ntitle: Not a conflict\nkind: finding\nsupersedes: [{project['blocker']}]\n---\n\n"
        "pydantic 2 alone works.\n"
    ).id
    system = ContextBuilder(store).build("how big should the connection pool be?").system
    assert fixed in system and project["pool"] not in system  # found too, but its correction is what to read
    assert project["blocker"] not in system and wrong not in system.split("[Relevant notes]")[0]  # no longer open
