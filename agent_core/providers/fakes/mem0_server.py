"""A fake Mem0 platform API on loopback: the endpoints the official ``mem0ai`` client calls for us.

Serves the key check (``GET /v1/ping/``), ``POST /v3/memories/add/`` (each user message becomes a memory
of the ``user_id`` it was sent for) and ``POST /v3/memories/search/`` (word-overlap ranking, restricted
to ``filters.user_id``) and ``DELETE /v1/memories/?user_id=`` (delete-all of one user). Requires
``Authorization: Token <api_key>``.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from .recorder import ProviderCall, RecordingServer, Reply

_WORD = re.compile(r"\w+")


class FakeMem0Server(RecordingServer):
    def __init__(self, *, api_key: str = "mem0-test-key") -> None:
        super().__init__()
        self.api_key = api_key
        self.memories: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self.route("GET", r"/v1/ping", self._ping)
        self.route("POST", r"/v3/memories/add", self._add)
        self.route("POST", r"/v3/memories/search", self._search)
        self.route("DELETE", r"/v1/memories", self._delete_all)

    @property
    def host(self) -> str:
        return self.origin

    def authorised(self, call: ProviderCall) -> bool:
        return call.headers.get("authorization") == f"Token {self.api_key}"

    def _ping(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        return Reply(
            200, {"status": "ok", "org_id": "org_fake", "project_id": "proj_fake", "user_email": None}
        )

    def _add(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        user_id = call.body.get("user_id")
        results = []
        for message in call.body.get("messages", []):
            if message.get("role") != "user" or not user_id:
                continue
            memory = {"id": f"mem_{next(self._ids)}", "memory": message["content"], "user_id": user_id}
            self.memories.append(memory)
            results.append({"id": memory["id"], "event": "ADD", "data": {"memory": memory["memory"]}})
        return Reply(200, {"results": results})

    def _delete_all(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        user_id = call.query.get("user_id")
        if not user_id:
            return Reply(400, {"error": "a filter (user_id) is required"})
        self.memories = [m for m in self.memories if m["user_id"] != user_id]
        return Reply(200, {"message": "Memories deleted successfully!"})

    def _search(self, call: ProviderCall, match: re.Match[str]) -> Reply:
        user_id = (call.body.get("filters") or {}).get("user_id")
        query = set(_WORD.findall(call.body.get("query", "").lower()))
        top_k = int(call.body.get("top_k") or 10)
        scored = []
        for memory in self.memories:
            if memory["user_id"] != user_id:
                continue
            overlap = len(query & set(_WORD.findall(memory["memory"].lower())))
            if overlap:
                scored.append((overlap, memory))
        scored.sort(key=lambda pair: -pair[0])
        return Reply(200, {"results": [{**m, "score": s / max(len(query), 1)} for s, m in scored[:top_k]]})
