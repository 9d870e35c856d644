"""The NoteTool chapter's ProjectAssistant (000, section 9.4.4), run as printed on notewell.compat.

Only its imports differ: ContextBuilder, ContextConfig, ContextPacket and NoteTool come from
notewell.compat; the agent, the model, the memory tool and the RAG tool it also imports are
stand-ins here (a model that records its prompts, tools that answer with a fixed line), and the
conversation's Message is the real hello-agents class (installed by the test set-up)."""

from __future__ import annotations

import textwrap
from datetime import datetime
from typing import Dict, List  # noqa: UP035 - the chapter's code names them

import pytest

from notewell.compat import ContextBuilder, ContextConfig, ContextPacket, NoteTool
from notewell.errors import InvalidArgumentError
from tests.interfaces.hello_agents_loader import hello_agents_alone

CHAPTER_CODE = textwrap.dedent(
    '''
    class ProjectAssistant(SimpleAgent):
        """Long-term project assistant, integrating NoteTool and ContextBuilder"""
        def __init__(self, name: str, project_name: str, **kwargs):
            super().__init__(name=name, llm=HelloAgentsLLM(), **kwargs)
            self.project_name = project_name
            # Initialize tools
            self.memory_tool = MemoryTool(user_id=project_name)
            self.rag_tool = RAGTool(knowledge_base_path=f"./{project_name}_kb")
            self.note_tool = NoteTool(workspace=f"./{project_name}_notes")
            # Initialize context builder
            self.context_builder = ContextBuilder(
                memory_tool=self.memory_tool,
                rag_tool=self.rag_tool,
                config=ContextConfig(max_tokens=4000)
            )
            self.conversation_history = []
        def run(self, user_input: str, note_as_action: bool = False) -> str:
            """Run assistant, automatically integrate notes"""
            # 1. Retrieve relevant notes from NoteTool
            relevant_notes = self._retrieve_relevant_notes(user_input)
            # 2. Convert notes to ContextPacket
            note_packets = self._notes_to_packets(relevant_notes)
            # 3. Build optimized context
            context = self.context_builder.build(
                user_query=user_input,
                conversation_history=self.conversation_history,
                system_instructions=self._build_system_instructions(),
                custom_packets=note_packets
            )
            # 4. Call LLM
            response = self.llm.invoke(context)
            # 5. If needed, record interaction as note
            if note_as_action:
                self._save_as_note(user_input, response)
            # 6. Update conversation history
            self._update_history(user_input, response)
            return response
        def _retrieve_relevant_notes(self, query: str, limit: int = 3) -> List[Dict]:
            """Retrieve relevant notes"""
            try:
                # Prioritize retrieving blocker and action type notes
                blockers = self.note_tool.run({
                    "action": "list",
                    "note_type": "blocker",
                    "limit": 2
                })
                # General search
                search_results = self.note_tool.run({
                    "action": "search",
                    "query": query,
                    "limit": limit
                })
                # Merge and deduplicate
                all_notes = {note['note_id']: note for note in blockers + search_results}
                return list(all_notes.values())[:limit]
            except Exception as e:
                print(f"[WARNING] Note retrieval failed: {e}")
                return []
        def _notes_to_packets(self, notes: List[Dict]) -> List[ContextPacket]:
            """Convert notes to context packets"""
            packets = []
            for note in notes:
                content = f"[Note: {note['title']}]\\n{note['content']}"
                packets.append(ContextPacket(
                    content=content,
                    timestamp=datetime.fromisoformat(note['updated_at']),
                    token_count=len(content) // 4, # Simple estimation
                    relevance_score=0.75, # Notes have high relevance
                    metadata={
                        "type": "note",
                        "note_type": note['type'],
                        "note_id": note['note_id']
                    }
                ))
            return packets
        def _save_as_note(self, user_input: str, response: str):
            """Save interaction as note"""
            try:
                # Determine what type of note to save
                if "problem" in user_input.lower() or "blocker" in user_input.lower():
                    note_type = "blocker"
                elif "plan" in user_input.lower() or "next" in user_input.lower():
                    note_type = "action"
                else:
                    note_type = "conclusion"
                self.note_tool.run({
                    "action": "create",
                    "title": f"{user_input[:30]}...",
                    "content": f"## Question\\n{user_input}\\n\\n## Analysis\\n{response}",
                    "note_type": note_type,
                    "tags": [self.project_name, "auto_generated"]
                })
            except Exception as e:
                print(f"[WARNING] Failed to save note: {e}")
        def _build_system_instructions(self) -> str:
            """Build system instructions"""
            return f"""You are a long-term assistant for the {self.project_name} project.
    Your responsibilities:
    1. Provide coherent recommendations based on historical notes
    2. Track project progress and pending issues
    3. Reference relevant historical notes when answering
    4. Provide specific, actionable next-step recommendations
    Notes:
    - Prioritize issues marked as blockers
    - Indicate source of basis in recommendations (notes, memory, or knowledge base)
    - Maintain awareness of overall project progress"""
        def _update_history(self, user_input: str, response: str):
            """Update conversation history"""
            from hello_agents.core.message import Message
            self.conversation_history.append(
                Message(content=user_input, role="user", timestamp=datetime.now())
            )
            self.conversation_history.append(
                Message(content=response, role="assistant", timestamp=datetime.now())
            )
            # Limit history length
            if len(self.conversation_history) > 10:
                self.conversation_history = self.conversation_history[-10:]
    '''
)


class SimpleAgent:
    def __init__(self, name: str, llm: object, **kwargs: object) -> None:
        self.name, self.llm = name, llm


class HelloAgentsLLM:
    """A model that records each prompt and answers with a fixed recommendation."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def invoke(self, context: str) -> str:
        self.prompts.append(context)
        return "Pin the versions in requirements.txt and use pipdeptree to find the conflict."


class MemoryTool:
    def __init__(self, user_id: str) -> None:
        self.user_id = user_id

    def execute(self, action: str, **kwargs: object) -> str:
        return f"memory of {self.user_id}: the team prefers exact version pins (asked about {kwargs['query']!r})"


class RAGTool:
    def __init__(self, knowledge_base_path: str) -> None:
        self.path = knowledge_base_path

    def run(self, parameters: dict) -> str:
        return "knowledge base: pipdeptree prints the installed dependency tree"


def test_the_chapters_project_assistant_runs_as_printed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {
        "SimpleAgent": SimpleAgent,
        "HelloAgentsLLM": HelloAgentsLLM,
        "MemoryTool": MemoryTool,
        "RAGTool": RAGTool,
        "ContextBuilder": ContextBuilder,
        "ContextConfig": ContextConfig,
        "ContextPacket": ContextPacket,
        "NoteTool": NoteTool,
        "datetime": datetime,
        "List": List,  # noqa: UP006 - the names the chapter annotates with
        "Dict": Dict,  # noqa: UP006
    }
    with hello_agents_alone():
        exec(CHAPTER_CODE, namespace)  # the chapter's class, as printed
        # The chapter's usage example
        assistant = namespace["ProjectAssistant"](name="Project Assistant", project_name="data_pipeline_refactoring")
        assistant.run(
            "We have completed refactoring of the data model layer, test coverage reached 85%. "
            "Next plan is to refactor the business logic layer.",
            note_as_action=True,
        )
        second = assistant.run(
            "When refactoring the business logic layer, I encountered dependency version conflict issues. "
            "How should I resolve this?"
        )
    summary = assistant.note_tool.run({"action": "summary"})
    assert summary["total_notes"] == 1 and summary["type_distribution"] == {"action": 1}
    saved = summary["recent_notes"][0]["id"]
    assert second.startswith("Pin the versions")
    prompt = assistant.llm.prompts[1]
    # The second prompt carries the chapter's instructions, the note saved after the first round
    # (found by search, cited by its id), the memory and knowledge-base answers and the first round.
    assert "long-term assistant for the data_pipeline_refactoring project" in prompt
    assert f"[action {saved}]" in prompt and "test coverage reached 85%" in prompt
    assert "exact version pins" in prompt and "pipdeptree prints" in prompt
    assert "user: We have completed refactoring" in prompt
    assert prompt.rstrip().endswith("How should I resolve this?")
    built = assistant.context_builder.last
    assert built.tokens <= built.budget == 4000 - 600 and built.citations == [saved]


def test_the_chapters_packets_and_config_by_their_names():
    when = datetime(2025, 1, 19, 15, 30)
    packet = ContextPacket(
        content="[Note: Dependency conflict]\nlock 2.3",
        timestamp=when,
        token_count=9,
        relevance_score=0.75,
        metadata={"type": "note", "note_type": "blocker", "note_id": "nte_0000000001"},
    )
    assert (packet.kind, packet.source, packet.section, packet.relevance_score, packet.token_count) == (
        "blocker",
        "nte_0000000001",
        "open",
        0.75,
        9,
    )
    config = ContextConfig(max_tokens=4000, reserve_ratio=0.2, min_relevance=0.5)
    assert config.reserve_tokens == 800 and config.budget == 3200
    low = ContextPacket(content="barely related", relevance_score=0.1)
    builder = ContextBuilder(config=config)
    text = builder.build(user_query="the conflict?", custom_packets=[packet, low])
    assert "lock 2.3" in text and "barely related" not in text  # under min_relevance: left out
    assert builder.build(user_query="x", additional_packets=[packet]).count("lock 2.3") == 1  # the package's name
    failing = ContextBuilder(memory_tool=object(), rag_tool=None)
    failing.build(user_query="anything")
    assert failing.last is not None and "memory tool failed" in failing.last.warnings[0]
    with pytest.raises(InvalidArgumentError, match="reserve_ratio"):
        ContextConfig(reserve_ratio=1.5)
    assert ContextConfig(max_tokens=4000, reserve_tokens=1000).reserve_tokens == 1000  # no ratio: as given

    class ChineseRag:  # a result that mentions 错误 is material; one that opens with ❌ is nothing
        def __init__(self, answer):
            self.answer = answer

        def run(self, params):
            return self.answer

    kept = ContextBuilder(rag_tool=ChineseRag("Go 的错误处理: 用 %w 包裹"))
    assert "%w 包裹" in kept.build(user_query="错误处理?")
    empty = ContextBuilder(rag_tool=ChineseRag("❌ 知识库为空"))
    assert "知识库为空" not in empty.build(user_query="错误处理?")
    with pytest.raises(InvalidArgumentError, match="role and a content"):
        builder.build(user_query="x", conversation_history=[42])
