"""Encoded payloads hidden in a text: plausible base64, hex and percent-encoded runs, decoded to text.

Invariants: a run is decoded only when it is long enough to hold an instruction and decodes to
readable UTF-8 text (binary such as keys, hashes and images is ignored); every run is decoded at most
once, so the decoded text in total is never longer than the input and the work stays linear.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from urllib.parse import unquote

# Runs of the standard or URL-safe alphabet, optionally wrapped at line ends (MIME style). Leftmost
# scanning finds each run from its first character, so no look-around is needed.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}(?:\r?\n[A-Za-z0-9+/_-]{4,}={0,2})*")
_HEX_RUN = re.compile(r"(?:[0-9a-fA-F]{2}[ :]?){12,}")
_PERCENT_RUN = re.compile(r"(?:%[0-9a-fA-F]{2}[^%\s]{0,3}){6,}")
_READABLE_SHARE = 0.9


def decoded_payloads(plain: str) -> Iterator[str]:
    """Each readable text hidden in ``plain`` as base64, hex or percent-encoding."""
    for match in _BASE64_RUN.finditer(plain):
        yield from _base64_texts(match.group())
    for match in _HEX_RUN.finditer(plain):
        text = _readable(_hex_bytes(match.group()))
        if text is not None:
            yield text
    if "%" in plain:
        for match in _PERCENT_RUN.finditer(plain):
            yield unquote(match.group(), errors="replace")


def _base64_texts(run: str) -> Iterator[str]:
    """The run decoded whole or, failing that, each '/'-separated part (base64 inside a URL path)."""
    text = _readable(_base64_bytes(run))
    if text is not None:
        yield text
    elif "/" in run:
        for part in run.split("/"):
            if len(part) >= 12:
                text = _readable(_base64_bytes(part))
                if text is not None:
                    yield text


def _base64_bytes(run: str) -> bytes | None:
    compact = "".join(run.split()).rstrip("=")
    if not any(c.isdigit() or c.isupper() for c in compact) or not any(c.islower() for c in compact):
        return None  # a plain word or identifier, not base64
    padded = compact + "=" * (-len(compact) % 4)
    altchars = b"-_" if ("-" in compact or "_" in compact) else None
    try:
        return base64.b64decode(padded, altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        return None


def _hex_bytes(run: str) -> bytes | None:
    try:
        return bytes.fromhex(run.replace(":", " "))
    except ValueError:
        return None


def _readable(data: bytes | None) -> str | None:
    if not data:
        return None
    # A few bad bytes must not hide a payload, so decode leniently and count replacements as unreadable.
    text = data.decode("utf-8", errors="replace")
    readable = sum(1 for c in text if (c.isprintable() and c != "\ufffd") or c in "\n\t")
    if readable < _READABLE_SHARE * len(text) or not any(c.isalpha() for c in text):
        return None
    return text
