"""notewell's NoteTool and the original one (hello-agents 0.2.9, installed by the test set-up)
on one workspace, both ways; and the chapter's own reader (PyYAML) on the files notewell writes."""

from __future__ import annotations

import json

import pytest

from notewell.compat import NoteTool
from tests.interfaces.hello_agents_loader import hello_agents_alone, load

yaml = pytest.importorskip("yaml")


@pytest.fixture
def original():
    """The original NoteTool class (its module loaded alone)."""
    with hello_agents_alone():
        yield load("hello_agents.tools.builtin.note_tool").NoteTool


def _chapter_parse_markdown(raw_content: str) -> tuple[dict, str]:
    """The chapter's _parse_markdown, as printed (000, section 9.4.3 (2))."""
    parts = raw_content.split("---\n", 2)
    if len(parts) >= 3:
        yaml_str = parts[1]
        content = parts[2].strip()
        metadata = yaml.safe_load(yaml_str)
    else:
        metadata = {}
        content = raw_content.strip()
    return metadata, content


def test_the_files_notewell_writes_are_in_the_chapters_format(tmp_path):
    tool = NoteTool(workspace=str(tmp_path / "notes"))
    titles = ("Project Progress - Phase 1", "Proj: phase 2 #next", "true", "项目进展")
    ids = [
        tool.run({"action": "create", "title": t, "content": "## Done\nthe model layer", "tags": ["a", "C++"]})
        for t in titles
    ]
    for nid, title in zip(ids, titles, strict=True):
        metadata, content = _chapter_parse_markdown((tmp_path / "notes" / f"{nid}.md").read_text(encoding="utf-8"))
        assert list(metadata) == ["id", "title", "type", "tags", "created_at", "updated_at"]
        assert (metadata["id"], metadata["title"], metadata["type"], metadata["tags"]) == (
            nid,
            title,
            "general",
            ["a", "C++"],
        )
        assert content.endswith("## Done\nthe model layer")
    tool.close()


def test_update_clears_tags_and_empties_content_when_given(tmp_path):
    tool = NoteTool(workspace=str(tmp_path / "notes"))
    nid = tool.run({"action": "create", "title": "T", "content": "some text", "tags": ["x", "y"]})
    assert tool.run({"action": "update", "note_id": nid, "tags": []}) == "✅ 笔记已更新: T"
    assert tool.run({"action": "read", "note_id": nid})["metadata"]["tags"] == []
    tool.run({"action": "update", "note_id": nid, "content": ""})
    assert tool.run({"action": "read", "note_id": nid})["content"] == ""
    tool.run({"action": "update", "note_id": nid, "title": "", "note_type": None})  # empty: left alone
    assert tool.run({"action": "read", "note_id": nid})["metadata"]["title"] == "T"
    tool.close()


@pytest.mark.slow
def test_list_defaults_to_twenty_and_gives_file_paths(tmp_path):
    workspace = str(tmp_path / "notes")
    tool = NoteTool(workspace=workspace)
    ids = [tool.run({"action": "create", "title": f"n{i}", "content": "c"}) for i in range(25)]
    listed = tool.run({"action": "list"})
    assert len(listed) == 20
    assert {n["file_path"] for n in listed} <= {f"{workspace}/{i}.md" for i in ids}
    assert len(tool.run({"action": "list", "limit": 25})) == 25
    tool.close()


def test_a_workspace_is_shared_with_the_original_tool_both_ways(tmp_path, original):
    workspace = str(tmp_path / "shared")
    theirs = original(workspace=workspace)
    their_note = theirs.run(
        {"action": "create", "title": "Their plan", "content": "written by the original", "note_type": "action"}
    )
    their_id = their_note.split("ID: ")[1].split("\n")[0]

    ours = NoteTool(workspace=workspace)
    assert [n["id"] for n in ours.run({"action": "list"})] == [their_id]  # notewell reads theirs
    mine = ours.run(
        {"action": "create", "title": "Our finding", "content": "written by notewell", "note_type": "conclusion",
         "tags": ["cache", "C++"]}
    )  # fmt: skip
    index = json.loads((tmp_path / "shared" / "notes_index.json").read_text(encoding="utf-8"))
    assert [n["id"] for n in index["notes"]] == [their_id, mine] and index["metadata"]["total_notes"] == 2

    # The original, opened afresh (it reads its index once, when made), lists, reads and searches ours.
    theirs = original(workspace=workspace)
    listed = theirs.run({"action": "list"})
    assert their_id in listed and mine in listed and "Our finding" in listed
    read = theirs.run({"action": "read", "note_id": mine})
    assert "Our finding" in read and "written by notewell" in read and "conclusion" in read and "C++" in read
    assert mine in theirs.run({"action": "search", "query": "notewell"})

    # The original edits ours; notewell reads the edit. The original's update keeps our id.
    theirs.run({"action": "update", "note_id": mine, "content": "edited by the original"})
    assert ours.run({"action": "read", "note_id": mine})["content"] == "edited by the original"

    # notewell deletes a note: the original no longer lists it, and reading it says it is gone.
    ours.run({"action": "delete", "note_id": their_id})
    theirs = original(workspace=workspace)
    assert their_id not in theirs.run({"action": "list"})
    assert "不存在" in theirs.run({"action": "read", "note_id": their_id})

    # The original rewrites its whole index from what it loaded: a note notewell adds meanwhile is
    # back in it after notewell's next call.
    stale = original(workspace=workspace)
    late = ours.run({"action": "create", "title": "Late", "content": "added while the original was open"})
    stale.run({"action": "create", "title": "Theirs again", "content": "x"})

    def indexed() -> list[str]:
        return [n["title"] for n in json.loads((tmp_path / "shared" / "notes_index.json").read_text())["notes"]]

    assert indexed() == ["Our finding", "Theirs again"]  # the original dropped "Late"
    ours.run({"action": "summary"})
    assert indexed() == ["Our finding", "Late", "Theirs again"]
    assert late in original(workspace=workspace).run({"action": "list"})
    ours.close()


def test_titles_that_need_quotes_survive_both_tools_and_yaml(tmp_path, original):
    # update wrote quote_value's form ("Renamed" in quotes), which the original shows with its
    # quotes and, after its own update, wrote back as a '# "Renamed"' heading into the content.
    workspace = str(tmp_path / "w")
    ours = NoteTool(workspace=workspace)
    nid = ours.run({"action": "create", "title": "Plan", "content": "body"})
    ours.run({"action": "update", "note_id": nid, "title": "Renamed", "tags": ["a"]})
    raw = (tmp_path / "w" / f"{nid}.md").read_text()
    assert "title: Renamed\n" in raw and 'tags: ["a"]' in raw
    tricky = "Plan: phase 2 # now"
    ours.run({"action": "update", "note_id": nid, "title": tricky})
    metadata, _ = _chapter_parse_markdown((tmp_path / "w" / f"{nid}.md").read_text())
    assert metadata["title"] == tricky
    theirs = original(workspace=workspace)
    theirs.run({"action": "update", "note_id": nid, "content": "edited by the original"})
    assert ours.run({"action": "read", "note_id": nid}) | {"metadata": None} == {
        "metadata": None,
        "content": "edited by the original",
    }
    assert ours.run({"action": "read", "note_id": nid})["metadata"]["title"] == tricky
    with pytest.raises(ValueError, match="at most 200"):
        ours.run({"action": "create", "title": "t" * 201, "content": "c"})
    ours.close()
