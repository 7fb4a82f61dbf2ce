"""A fake Honcho v3 API on loopback: the endpoints the official ``honcho-ai`` SDK calls for our provider.

Serves workspace, peer and session get-or-create, message batches, the session context, session deletion
and conclusions (listed by filter, deleted by id; ``add_conclusion`` seeds them); keeps the
messages it is sent so the context's ``peer_representation`` is built only from the target peer's own
messages (what a real deriver would learn). Requires ``Authorization: Bearer <api_key>``.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime
from typing import Any

from .recorder import ProviderCall, RecordingServer, Reply

_WS = r"/v3/workspaces/(?P<ws>[^/]+)"
_WORD = re.compile(r"\w+")


class FakeHonchoServer(RecordingServer):
    def __init__(self, *, api_key: str = "honcho-test-key") -> None:
        super().__init__()
        self.api_key = api_key
        self.sessions: dict[str, set[str]] = {}
        self.messages: list[dict[str, Any]] = []
        self.peer_cards: dict[str, list[str]] = {}
        self.conclusions: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self.route("POST", r"/v3/workspaces", self._workspace)
        self.route("POST", _WS + r"/peers", self._peer)
        self.route("POST", _WS + r"/sessions", self._session)
        self.route("POST", _WS + r"/sessions/(?P<sid>[^/]+)/peers", self._session_peers)
        self.route("POST", _WS + r"/sessions/(?P<sid>[^/]+)/messages", self._add_messages)
        self.route("GET", _WS + r"/sessions/(?P<sid>[^/]+)/context", self._context)
        self.route("DELETE", _WS + r"/sessions/(?P<sid>[^/]+)", self._delete_session)
        self.route("POST", _WS + r"/conclusions/list", self._list_conclusions)
        self.route("DELETE", _WS + r"/conclusions/(?P<cid>[^/]+)", self._delete_conclusion)
        self.route("GET", _WS + r"/peers/(?P<pid>[^/]+)/card", self._get_card)
        self.route("PUT", _WS + r"/peers/(?P<pid>[^/]+)/card", self._set_card)

    @property
    def base_url(self) -> str:
        return self.origin

    def authorised(self, call: ProviderCall) -> bool:
        return call.headers.get("authorization") == f"Bearer {self.api_key}"

    def messages_in(self, session_id: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["session_id"] == session_id]

    # -- handlers ------------------------------------------------------------------------------
    def _workspace(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        return Reply(200, {"id": call.body["id"], "metadata": {}, "configuration": {}, "created_at": _now()})

    def _peer(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        body = {"id": call.body["id"], "workspace_id": match["ws"], "created_at": _now(), "metadata": {}}
        return Reply(200, {**body, "configuration": {}})

    def _session(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        session_id = call.body["id"]
        self.sessions.setdefault(session_id, set()).update((call.body.get("peers") or {}).keys())
        return Reply(200, self._session_body(match["ws"], session_id, call.body.get("metadata") or {}))

    def _session_peers(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        self.sessions.setdefault(match["sid"], set()).update((call.body or {}).keys())
        return Reply(200, self._session_body(match["ws"], match["sid"], {}))

    def _add_messages(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        created = []
        for item in call.body["messages"]:
            message = {
                "id": f"msg_{next(self._ids)}",
                "content": item["content"],
                "peer_id": item["peer_id"],
                "session_id": match["sid"],
                "metadata": item.get("metadata") or {},
                "created_at": _now(),
                "workspace_id": match["ws"],
                "token_count": len(item["content"].split()),
            }
            self.messages.append(message)
            created.append(message)
        return Reply(200, created)

    def _context(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        target = call.query.get("peer_target")
        own = [m["content"] for m in self.messages if target and m["peer_id"] == target]
        query = set(_WORD.findall(call.query.get("search_query", "").lower()))
        relevant = [text for text in own if query & set(_WORD.findall(text.lower()))] or own[-5:]
        representation = "\n".join(f"- {text}" for text in relevant) if relevant else None
        body = {
            "id": match["sid"],
            "messages": [],
            "summary": None,
            "peer_representation": representation,
            "peer_card": self.peer_cards.get(target or ""),
        }
        return Reply(200, body)

    def add_conclusion(self, observer: str, observed: str, content: str) -> str:
        """What Honcho's deriver would store: a conclusion ``observer`` drew about ``observed``."""
        conclusion_id = f"obs_{next(self._ids)}"
        self.conclusions.append(
            {"id": conclusion_id, "observer_id": observer, "observed_id": observed, "content": content}
        )
        return conclusion_id

    @staticmethod
    def card_key(peer: str, target: str | None = None) -> str:
        """Where ``peer_cards`` keeps a card: a peer's own card under its id, its card of ``target`` under
        ``peer/target``."""
        return peer if target is None or target == peer else f"{peer}/{target}"

    def _get_card(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        return Reply(
            200, {"peer_card": self.peer_cards.get(self.card_key(match["pid"], call.query.get("target")))}
        )

    def _set_card(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        card = list((call.body or {}).get("peer_card") or [])
        self.peer_cards[self.card_key(match["pid"], call.query.get("target"))] = card
        return Reply(200, {"peer_card": card})

    def _delete_session(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        self.sessions.pop(match["sid"], None)
        self.messages = [m for m in self.messages if m["session_id"] != match["sid"]]
        return Reply(200, {})

    def _list_conclusions(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        filters = (call.body or {}).get("filters") or {}
        found = [
            {**c, "session_id": None, "created_at": _now()}
            for c in self.conclusions
            if all(c.get(key) == value for key, value in filters.items())
        ]
        size = int(call.query.get("size", "50"))
        items = found[:size]
        return Reply(200, {"items": items, "page": 1, "size": size, "total": len(found), "pages": 1})

    def _delete_conclusion(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        self.conclusions = [c for c in self.conclusions if c["id"] != match["cid"]]
        return Reply(200, {})

    @staticmethod
    def _session_body(workspace: str, session_id: str, metadata: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": session_id,
            "is_active": True,
            "workspace_id": workspace,
            "metadata": metadata,
            "configuration": {},
            "created_at": _now(),
        }


def _now() -> str:
    return datetime.now(UTC).isoformat()
