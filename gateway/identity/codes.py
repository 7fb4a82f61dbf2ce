"""One-time codes people read and type: generation from an unambiguous alphabet, and normalisation.

Invariants: codes use only ``ALPHABET`` (no 0/O, 1/I/L), drawn with ``secrets``; ``normalise_code`` maps
whatever a person typed (lower case, spaces, dashes) to the stored form, or None if it cannot be a code.
"""

from __future__ import annotations

import secrets

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
MIN_LENGTH = 6
MAX_LENGTH = 8


def new_code(length: int = 8) -> str:
    """A random code of ``length`` characters (6-8): 31^8 ≈ 8.5e11 possibilities at the default."""
    if not MIN_LENGTH <= length <= MAX_LENGTH:
        raise ValueError(f"code length must be {MIN_LENGTH}-{MAX_LENGTH}, got {length}")
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def normalise_code(text: str) -> str | None:
    """The code as stored, or None when ``text`` cannot be a code (wrong length or characters)."""
    compact = "".join(text.split()).replace("-", "").upper()
    if not MIN_LENGTH <= len(compact) <= MAX_LENGTH:
        return None
    if any(ch not in ALPHABET for ch in compact):
        return None
    return compact
