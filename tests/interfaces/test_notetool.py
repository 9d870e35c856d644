"""hello-agents NoteTool compatibility: the chapter's examples, on a real store."""

from __future__ import annotations

import json
from typing import Any

import pytest

from notewell.compat import NoteTool


def test_the_seven_operations(tmp_path):
    tool = NoteTool(workspace=str(tmp_path / "project_notes"))
    # create (03_note_tool_operations.py): a task state and a blocker
    state_id = tool.run(
        {
            "action": "create",
            "title": "项目当前进展",
            "content": "已完成数据模型设计，正在实现 API 层。\n下一步：集成测试。",
            "note_type": "task_state",
            "tags": ["milestone", "api"],
        }
    )
    blocker_id = tool.run(
        {
            "action": "create",
            "title": "依赖冲突",
            "content": "业务层的三个模块依赖版本不兼容的 HTTP 客户端。",
            "note_type": "blocker",
            "tags": ["dependency", "blocker"],
        }
    )
    assert isinstance(state_id, str) and state_id != blocker_id
    read = tool.run({"action": "read", "note_id": blocker_id})
    assert read["content"] == "业务层的三个模块依赖版本不兼容的 HTTP 客户端。"
    meta = read["metadata"]
    assert (meta["id"], meta["title"], meta["type"], meta["tags"]) == (
        blocker_id,
        "依赖冲突",
        "blocker",
        ["dependency", "blocker"],
    )
    assert meta["created_at"] and meta["updated_at"]
    # update: falsy values are left alone
    message = tool.run({"action": "update", "note_id": blocker_id, "content": "已通过锁定 2.3 版本解决。", "title": ""})
    assert message == "✅ 笔记已更新: 依赖冲突"  # the chapter's wording: the note's title
    assert tool.run({"action": "read", "note_id": blocker_id})["content"] == "已通过锁定 2.3 版本解决。"
    assert tool.run({"action": "read", "note_id": blocker_id})["metadata"]["title"] == "依赖冲突"
    # search: ranked, and a 2-character Chinese word is found inside a sentence
    found = tool.run({"action": "search", "query": "依赖", "limit": 5})
    assert [r["note_id"] for r in found][:1] == [blocker_id]
    assert set(found[0]) == {"note_id", "title", "type", "tags", "content", "updated_at"}
    assert [r["note_id"] for r in tool.run({"action": "search", "query": "集成测试"})] == [state_id]
    # list: newest first, filtered by type
    listed = tool.run({"action": "list", "note_type": "blocker"})
    assert [n["id"] for n in listed] == [blocker_id]
    assert [n["id"] for n in tool.run({"action": "list"})] == [blocker_id, state_id]  # the blocker was updated last
    summary = tool.run({"action": "summary"})
    assert summary["total_notes"] == 2
    assert summary["type_distribution"] == {"task_state": 1, "blocker": 1}
    assert [n["id"] for n in summary["recent_notes"]] == [blocker_id, state_id]
    # delete
    assert tool.run({"action": "delete", "note_id": blocker_id}) == "✅ 笔记已删除: 依赖冲突"
    with pytest.raises(ValueError, match="not found"):
        tool.run({"action": "read", "note_id": blocker_id})
    tool.close()


def test_errors_are_clear_value_errors(tmp_path):
    tool = NoteTool(workspace=str(tmp_path / "n"), max_notes=1)
    for params, needle in (
        ({"action": "read", "note_id": "note_20250101_000000_9"}, "not found"),
        ({"action": "read", "note_id": "nte_0000000000"}, "not found"),
        ({"action": "read", "note_id": "../etc/passwd"}, "not a note id"),
        ({"action": "read"}, "note_id is required"),
        ({"action": "fly"}, "unsupported action"),
        ({}, "unsupported action"),
        ({"action": "create", "title": "t"}, "title and content"),
        ({"action": "search", "query": ""}, "query"),
        ({"action": "list", "limit": "many"}, "limit"),
    ):
        with pytest.raises(ValueError, match=needle):
            tool.run(params)
    with pytest.raises(ValueError):
        tool.run("create")  # type: ignore[arg-type]
    tool.run({"action": "create", "title": "one", "content": "x"})
    with pytest.raises(ValueError, match="maximum"):
        tool.run({"action": "create", "title": "two", "content": "y"})
    with pytest.raises(ValueError, match="one line"):
        tool.run({"action": "update", "note_id": tool.run({"action": "list"})[0]["id"], "title": "a\nb"})
    assert tool.run({"action": "list", "limit": "1"})[0]["title"] == "one"


class ProjectAssistant:
    """The chapter's ProjectAssistant._retrieve_relevant_notes (with PR #889's action list)."""

    def __init__(self, note_tool: NoteTool) -> None:
        self.note_tool = note_tool

    def _retrieve_relevant_notes(self, query: str, limit: int = 3) -> list[dict[str, Any]]:
        try:
            blockers = self.note_tool.run({"action": "list", "note_type": "blocker", "limit": 1})
            actions = self.note_tool.run({"action": "list", "note_type": "action", "limit": 1})
            search_results = self.note_tool.run({"action": "search", "query": query, "limit": limit})
            all_notes = {note["note_id"]: note for note in blockers + actions + search_results}
            return list(all_notes.values())[:limit]
        except Exception as e:  # noqa: BLE001 - as in the chapter
            print(f"[WARNING] Note retrieval failed: {e}")
            return []

    def _notes_to_packets(self, notes: list[dict[str, Any]]) -> list[str]:
        return [f"[笔记:{note['title']}]\n{note['content']}" for note in notes]


def test_project_assistant_retrieval(tmp_path):
    tool = NoteTool(workspace=str(tmp_path / "data_pipeline_refactoring_notes"))
    blocker = tool.run(
        {
            "action": "create",
            "title": "Schema drift",
            "content": "The upstream CSV gained a column.",
            "note_type": "blocker",
        }
    )
    action = tool.run(
        {"action": "create", "title": "Next step", "content": "Pin the schema in the loader.", "note_type": "action"}
    )
    other = tool.run(
        {
            "action": "create",
            "title": "Loader speed",
            "content": "The loader is slow on large CSV files.",
            "note_type": "conclusion",
        }
    )
    assistant = ProjectAssistant(tool)
    got = assistant._retrieve_relevant_notes("why is the loader slow?", limit=3)
    ids = [n["note_id"] for n in got]
    assert len(ids) == len(set(ids)) == 3
    assert blocker in ids and action in ids and other in ids  # the action note comes without keyword overlap
    packets = assistant._notes_to_packets(got)
    assert any("Pin the schema" in p for p in packets)
    assert len(assistant._retrieve_relevant_notes("loader", limit=2)) == 2


def _original_workspace(root):
    """Files exactly as hello-agents 0.2.9's NoteTool writes them."""
    root.mkdir()
    notes = [
        (
            "note_20250101_120000_0",
            "项目进展",
            "task_state",
            ["中文", "backend"],
            "2025-01-01T12:00:00.123456",
            "2025-01-02T08:00:00.000001",
            "已完成数据模型。",
        ),
        (
            "note_20250103_090000_1",
            "Dependency conflict",
            "blocker",
            [],
            "2025-01-03T09:00:00.5",
            "2025-01-03T09:00:00.5",
            "Three modules pin incompatible HTTP clients.",
        ),
    ]
    index = {"notes": [], "metadata": {"created_at": "2025-01-01T12:00:00", "total_notes": 2}}
    for nid, title, kind, tags, created, updated, content in notes:
        lines = ["---", f"id: {nid}", f"title: {title}", f"type: {kind}"]
        if tags:
            lines.append(f"tags: {json.dumps(tags)}")
        lines += [f"created_at: {created}", f"updated_at: {updated}", "---", "", f"# {title}", "", content]
        (root / f"{nid}.md").write_text("\n".join(lines), encoding="utf-8")
        index["notes"].append({"id": nid, "title": title, "type": kind, "tags": tags, "created_at": created})
    (root / "notes_index.json").write_text(json.dumps(index), encoding="utf-8")
    return notes


def test_a_workspace_of_the_original_tool_opens_intact(tmp_path):
    notes = _original_workspace(tmp_path / "ws")
    tool = NoteTool(workspace=str(tmp_path / "ws"))
    for nid, title, kind, tags, created, updated, content in notes:
        got = tool.run({"action": "read", "note_id": nid})
        assert got["metadata"] == {
            "id": nid,
            "title": title,
            "type": kind,
            "tags": tags,
            "created_at": created,
            "updated_at": updated,
        }
        assert got["content"] == content
    assert tool.run({"action": "search", "query": "incompatible"})[0]["note_id"] == notes[1][0]
    assert tool.run({"action": "list", "note_type": "task_state"})[0]["id"] == notes[0][0]
    assert tool.run({"action": "summary"})["type_distribution"] == {"task_state": 1, "blocker": 1}
    # update keeps the original's layout: id, times, the "# title" line above the content
    tool.run({"action": "update", "note_id": notes[0][0], "content": "API 层也完成了。", "tags": ["中文"]})
    again = tool.run({"action": "read", "note_id": notes[0][0]})
    assert again["content"] == "API 层也完成了。" and again["metadata"]["tags"] == ["中文"]
    assert again["metadata"]["created_at"] == notes[0][4] and again["metadata"]["updated_at"] > notes[0][5]
    raw = (tmp_path / "ws" / f"{notes[0][0]}.md").read_text(encoding="utf-8")
    assert raw.startswith(f"---\nid: {notes[0][0]}\ntitle: 项目进展\ntype: task_state\n")
    assert "\n# 项目进展\n\nAPI 层也完成了。" in raw
    tool.close()


def test_filters_and_contents_as_written(tmp_path):
    tool = NoteTool(workspace=str(tmp_path / "w"))
    plan = tool.run(
        {"action": "create", "title": "Plan", "content": "# Plan\n\ndetails", "note_type": "action", "tags": "a, b"}
    )
    other = tool.run(
        {"action": "create", "title": "Other plan", "content": "more details", "note_type": "conclusion", "tags": ["c"]}
    )
    assert tool.run({"action": "read", "note_id": plan})["content"] == "# Plan\n\ndetails"  # the user's own heading
    assert [r["note_id"] for r in tool.run({"action": "search", "query": "details", "note_type": "action"})] == [plan]
    assert [r["note_id"] for r in tool.run({"action": "search", "query": "details", "tags": ["c"]})] == [other]
    assert [r["id"] for r in tool.run({"action": "list", "tags": "b"})] == [plan]
    assert tool.run({"action": "search", "query": "!!!"}) == []
    tool.close()
