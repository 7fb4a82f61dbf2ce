"""A model of a provider's prompt prefix cache, for the fake servers.

A request is a sequence of items (tools, system blocks, message blocks, each canonical JSON without
``cache_control``). Some positions are breakpoints. Like Anthropic's cache, a request reads the
longest prefix that ends within ``lookback`` items before one of its breakpoints and equals, byte
for byte, a breakpoint prefix written by an earlier request; it then writes all of its own
breakpoint prefixes. Tokens are estimated as characters / 4.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CacheUsage", "PrefixCache", "estimate_tokens"]


def estimate_tokens(chars: int) -> int:
    return -(-chars // 4)


@dataclass(frozen=True)
class CacheUsage:
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int


class PrefixCache:
    def __init__(self, *, lookback: int = 20, min_prefix_tokens: int = 0) -> None:
        self._lookback = lookback
        self._min_prefix_tokens = min_prefix_tokens
        self._written: set[str] = set()

    def observe(self, namespace: str, items: Sequence[object], breakpoints: Sequence[int]) -> CacheUsage:
        """Account one request; ``breakpoints`` are indexes into ``items`` (inclusive prefix ends)."""
        keys: list[str] = []
        tokens: list[int] = []
        digest = hashlib.sha256(namespace.encode())
        chars = 0
        for item in items:
            text = json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            digest.update(text.encode())
            keys.append(digest.copy().hexdigest())
            chars += len(text)
            tokens.append(estimate_tokens(chars))
        total = tokens[-1] if tokens else 0
        marks = sorted({b for b in breakpoints if 0 <= b < len(items)})
        read_end = self._longest_hit(keys, marks)
        read = tokens[read_end] if read_end >= 0 else 0
        last = marks[-1] if marks else -1
        write = tokens[last] - read if last > read_end else 0
        for mark in marks:
            if tokens[mark] >= self._min_prefix_tokens:
                self._written.add(keys[mark])
        return CacheUsage(input_tokens=total - read - write, cache_read_tokens=read, cache_write_tokens=write)

    def _longest_hit(self, keys: list[str], marks: list[int]) -> int:
        best = -1
        for mark in marks:
            for end in range(mark, max(mark - self._lookback, -1), -1):
                if end <= best:
                    break
                if keys[end] in self._written:
                    best = end
                    break
        return best
