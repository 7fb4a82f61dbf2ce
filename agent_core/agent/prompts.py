"""Each segment's system prompt: built once from disk, frozen on the segment row, then reused verbatim.

Invariant 1 (DESIGN §12): every call of a segment — in any process, after any restart — sends the
stored bytes. Two processes racing to freeze the same segment both end up with the first stored text.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

from agent_core.actor import Actor
from agent_core.memory import MemoryStores
from agent_core.prompt import PromptInputs, PromptSettings, SystemPrompt, build_system_prompt
from agent_core.skills import SkillStore
from agent_core.storage import AgentStorage, SegmentRecord


class SegmentPrompts:
    """Finds or builds the frozen system prompt of a segment."""

    def __init__(
        self,
        *,
        home: Path,
        settings: PromptSettings,
        state: AgentStorage,
        memory: MemoryStores,
        skills: SkillStore,
        model: str,
        tool_names: frozenset[str],
        today: Callable[[], date] = date.today,
    ) -> None:
        self._home = home
        self._settings = settings
        self._state = state
        self._memory = memory
        self._skills = skills
        self._model = model
        self._tool_names = tool_names
        self._today = today

    async def for_segment(self, segment: SegmentRecord, actor: Actor) -> str:
        """The segment's stored prompt, building and freezing it on first use."""
        if segment.system_prompt is not None:
            return segment.system_prompt
        built = await self.build(actor)
        return await self._state.freeze_system_prompt(segment.id, built.text)

    async def build(self, actor: Actor) -> SystemPrompt:
        """A fresh prompt from disk: SOUL.md, context file, skills index and the memory snapshot."""
        snapshot = await self._memory.snapshot(person_id=actor.person_id, is_admin=actor.is_admin)
        listing = await self._skills.list()
        inputs = PromptInputs(
            home=self._home,
            settings=self._settings,
            memory_snapshot=snapshot.text,
            today=self._today(),
            model=self._model,
            platform=actor.platform,
            skills=listing.skills,
            tool_names=self._tool_names,
        )
        return await build_system_prompt(inputs)
