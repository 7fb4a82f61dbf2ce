"""What a platform can do, declared honestly by its adapter and used by rendering and delivery."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LengthUnit = Literal["chars", "utf16"]


def text_length(text: str, unit: LengthUnit) -> int:
    """Length of ``text`` as the platform counts it (Telegram counts UTF-16 code units)."""
    if unit == "utf16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


@dataclass(frozen=True)
class Capabilities:
    """Limits and features of one platform."""

    max_text_length: int
    length_unit: LengthUnit = "chars"
    max_edit_length: int | None = None
    can_edit: bool = False
    can_thread: bool = False
    can_typing: bool = False
    marks_final_edit: bool = False
    """A streamed message shows as unfinished until the delivery's final edit, so that edit is made even when
    it changes no text (the web chat); other platforms skip an edit that would change nothing."""

    def measure(self, text: str) -> int:
        return text_length(text, self.length_unit)

    def fits(self, text: str, *, edit: bool = False) -> bool:
        limit = self.max_edit_length if edit and self.max_edit_length else self.max_text_length
        return self.measure(text) <= limit
