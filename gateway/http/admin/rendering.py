"""Rendering console pages: the Jinja2 templates shipped in this package, escaping, paging links, headers.

Invariants: templates are autoescaped (``select_autoescape`` on for every template), so user and model text
is always shown as text, never markup; no template loads anything from another origin, and every page
carries a Content-Security-Policy that allows only this site's own CSS and script (no inline script or
style, no frames, forms only to this site); pages are never cached; a notice after a redirect is chosen
from a fixed table by key, so no text from a URL is shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from .clock import ConsoleClock

PAGE_SIZE = 50
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; connect-src 'self'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # "no-referrer" would make browsers send "Origin: null" on our forms
    "Cache-Control": "no-store",
}
NOTICES = {
    "approved": "Pairing request approved: that account may now talk to the bot.",
    "denied": "Pairing request denied.",
    "reset": "The conversation was reset; the next message starts a new one.",
    "already-ended": "That conversation had already ended.",
    "saved": "Memory saved (scanned and recorded in the audit trail).",
    "signed-out": "Signed out.",
    "scheduled": "Scheduled: it fires in its conversation, and its runs show below.",
    "cancelled": "Schedule cancelled: it fires nothing more.",
    "resent": "The run's reply is queued to be sent again (its task does not run again).",
    "expired": "Your sign-in expired or was ended; sign in again.",
}


@dataclass(frozen=True)
class Pager:
    """Offset paging over ``total`` rows, with links that keep every other query parameter."""

    offset: int
    limit: int
    total: int
    base: str
    query: tuple[tuple[str, str], ...]
    param: str = "offset"

    @classmethod
    def of(
        cls, request: Request, total: int, *, offset: int, limit: int = PAGE_SIZE, param: str = "offset"
    ) -> Pager:
        """Paging for ``request``'s page; ``param`` names the query parameter holding this list's offset."""
        kept = tuple((k, v) for k, v in request.query_params.multi_items() if k not in (param, "done"))
        return cls(offset, limit, total, request.url.path, kept, param)

    def _link(self, offset: int) -> str:
        return f"{self.base}?{urlencode([*self.query, (self.param, str(offset))])}"

    @property
    def first(self) -> int:
        return min(self.offset + 1, self.total)

    @property
    def last(self) -> int:
        return min(self.offset + self.limit, self.total)

    @property
    def previous_url(self) -> str | None:
        return self._link(max(0, self.offset - self.limit)) if self.offset > 0 else None

    @property
    def next_url(self) -> str | None:
        return self._link(self.offset + self.limit) if self.offset + self.limit < self.total else None


def page_offset(request: Request, param: str = "offset") -> int:
    """The ``param`` query parameter, or 0 when missing or not a small non-negative number."""
    raw = request.query_params.get(param, "0")
    return int(raw) if raw.isdigit() and len(raw) < 12 else 0


def pretty_json(value: Any) -> str:
    """Tool arguments and results, indented for reading (text that is not JSON is returned as it is)."""
    if isinstance(value, str):
        text: str = value
        try:
            value = json.loads(text)
        except ValueError:
            return text
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


class ConsolePages:
    """Renders the console's templates with the clock, the CSRF token and the signed-in state."""

    def __init__(self, clock: ConsoleClock) -> None:
        self.clock = clock
        self._env = Environment(
            loader=PackageLoader("gateway.http.admin", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._env.filters.update(
            when=clock.format, ago=clock.ago, iso=clock.iso, pretty=pretty_json, number=_number
        )

    def render(
        self,
        request: Request,
        template: str,
        *,
        status: int = 200,
        csrf: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> HTMLResponse:
        """``template`` with ``context``; ``csrf`` is the session's form token (None: signed out)."""
        root = request.scope.get("root_path", "")
        values = {
            "root": root,
            "path": request.url.path.removeprefix(root) or "/",
            "csrf": csrf,
            "signed_in": csrf is not None,
            "zone": self.clock.zone_name,
            "now": self.clock.now(),
            "notice": NOTICES.get(request.query_params.get("done", "")),
            **(context or {}),
        }
        html = self._env.get_template(template).render(values)
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


def _number(value: float | int) -> str:
    return f"{value:,.4f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}"
