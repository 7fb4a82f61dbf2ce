"""The streaming recall scrubber: drops any ``<memory-context>`` block the model echoes, chunk by chunk.

Invariants: text inside an open ``<memory-context>`` … ``</memory-context>`` span never leaves the
scrubber, wherever the chunk boundaries fall (a possible partial tag at the end of a chunk is held back
until the next chunk decides it); stray closing tags and the fence's system note are removed too; an
unterminated span is dropped at ``flush``. Tags match case-insensitively with inner whitespace, like
``agent_core.agent.fence.sanitize_recall``. Pure and synchronous; one instance per model call.
"""

from __future__ import annotations

import re

_TAG_NAME = "memory-context"
_OPEN = re.compile(r"<\s*memory-context\s*>", re.IGNORECASE)
_CLOSE = re.compile(r"<\s*/\s*memory-context\s*>", re.IGNORECASE)
_NOTE = re.compile(r"\[System note: The following is recalled memory context[^\]]*\]\n?", re.IGNORECASE)
_NOTE_PREFIX = "[system note: the following is recalled memory context"
# A partial tag is short; anything longer after a '<' cannot become one of ours.
_MAX_PARTIAL = 40


def _could_become_tag(tail: str) -> bool:
    """Whether ``tail`` (starting at '<', with no '>') may still grow into an open or close tag."""
    if len(tail) > _MAX_PARTIAL:
        return False
    rest = tail[1:].lstrip()
    if rest.startswith("/"):
        rest = rest[1:].lstrip()
    name = rest.rstrip()
    if name != rest and name.lower() != _TAG_NAME:
        return False  # whitespace inside the name: only allowed after the full name
    return _TAG_NAME.startswith(name.lower())


def _held_suffix(text: str) -> int:
    """Index from which ``text`` must be held back (a possible partial tag or note), else len(text)."""
    start = text.rfind("<")
    if start != -1 and ">" not in text[start:] and _could_become_tag(text[start:]):
        return start
    bracket = text.rfind("[")
    if bracket != -1 and "]" not in text[bracket:]:
        partial = text[bracket:].lower()
        if _NOTE_PREFIX.startswith(partial[: len(_NOTE_PREFIX)]) and len(partial) < 400:
            return bracket
    return len(text)


class RecallScrubber:
    """Feed streamed reply text in; what comes out is safe to show a user."""

    def __init__(self) -> None:
        self._pending = ""
        self._inside = False

    def feed(self, chunk: str) -> str:
        """The part of the text so far that is decided and visible."""
        self._pending += chunk
        out: list[str] = []
        while True:
            if self._inside:
                close = _CLOSE.search(self._pending)
                if close is None:
                    keep = _held_suffix(self._pending)
                    self._pending = self._pending[keep:] if keep < len(self._pending) else ""
                    return "".join(out)
                self._pending = self._pending[close.end() :]
                self._inside = False
                continue
            opening = _OPEN.search(self._pending)
            if opening is not None:
                out.append(self._visible(self._pending[: opening.start()]))
                self._pending = self._pending[opening.end() :]
                self._inside = True
                continue
            keep = _held_suffix(self._pending)
            out.append(self._visible(self._pending[:keep]))
            self._pending = self._pending[keep:]
            return "".join(out)

    def flush(self) -> str:
        """The held-back tail at the end of the stream; an unterminated span is dropped."""
        tail, self._pending = self._pending, ""
        if self._inside:
            self._inside = False
            return ""
        return self._visible(tail)

    @staticmethod
    def _visible(text: str) -> str:
        return _NOTE.sub("", _CLOSE.sub("", text))


def scrub_recall(text: str) -> str:
    """``text`` with every echoed recall fence removed (the whole-string form of ``RecallScrubber``)."""
    scrubber = RecallScrubber()
    return scrubber.feed(text) + scrubber.flush()
