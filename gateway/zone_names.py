"""``ZoneName``: a setting that names an IANA time zone this machine knows, checked when the config loads
(so a typo fails ``check-config`` rather than the first day boundary)."""

from __future__ import annotations

from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator


def _known_zone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r}: use an IANA name such as Europe/Berlin") from exc
    return name


ZoneName = Annotated[str, AfterValidator(_known_zone)]
