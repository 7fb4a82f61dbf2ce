"""Anthropic prompt-cache breakpoint placement ("system_and_3"), applied to a normalised body.

Four breakpoints, the API's maximum: the system prompt, and the last block of each of the last three
messages. This runs after every normalisation step so that a message's bytes are identical whether
or not it currently carries a marker; the marker is a key beside the content, never a rewrite of it.
Inputs are not mutated; marked blocks are copies.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["CacheTTL", "apply_system_and_3", "cache_marker", "strip_cache_markers"]

CacheTTL = Literal["5m", "1h"]

MESSAGE_BREAKPOINTS = 3


def cache_marker(ttl: CacheTTL = "5m") -> dict[str, str]:
    # 5m is the API default; spelling it out would change bytes for no benefit.
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


def apply_system_and_3(
    system: list[dict[str, Any]], messages: list[dict[str, Any]], *, ttl: CacheTTL = "5m"
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    marker = cache_marker(ttl)
    marked_system = [dict(block) for block in system]
    if marked_system:
        marked_system[-1]["cache_control"] = dict(marker)
    marked = list(messages)
    remaining = MESSAGE_BREAKPOINTS
    for index in range(len(marked) - 1, -1, -1):
        if remaining == 0:
            break
        blocks = marked[index]["content"]
        if not blocks:
            continue
        last = {**blocks[-1], "cache_control": dict(marker)}
        marked[index] = {**marked[index], "content": [*blocks[:-1], last]}
        remaining -= 1
    return marked_system, marked


def strip_cache_markers(value: Any) -> Any:
    """A copy of ``value`` without any ``cache_control`` key (what the model actually reads)."""
    if isinstance(value, dict):
        return {k: strip_cache_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_markers(v) for v in value]
    return value
