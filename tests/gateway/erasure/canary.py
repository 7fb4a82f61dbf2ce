"""Where a canary string is stored: every file under a home (raw bytes, WAL and sidecars included) and, on
PostgreSQL, every row of every table of the home's schema (each row as JSON text); and the scripted model
that writes a person's canary through every path a turn has."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
from psycopg import sql

from agent_core.llm import LLMRequest
from agent_core.llm.messages import ToolCall
from agent_core.llm.scripted import ScriptStep
from agent_core.search.tool import SESSION_SEARCH_TOOL_NAME
from gateway.schedules import SCHEDULE_TOOL_NAME
from tests import postgres_server

CANARY = re.compile(r"CANARY[0-9A-Za-z]+")


def files_holding(home: Path, canary: str) -> set[str]:
    """The files under ``home`` whose bytes hold ``canary`` as written or as the index lowercased it."""
    needles = (canary.encode(), canary.lower().encode())
    return {
        str(path.relative_to(home))
        for path in home.rglob("*")
        if path.is_file() and any(needle in path.read_bytes() for needle in needles)
    }


def base_files(names: set[str]) -> set[str]:
    """File names without their -wal/-shm/-journal suffix (a checkpoint moves text from one to the other)."""
    return {re.sub(r"-(wal|shm|journal)$", "", name) for name in names}


def tables_holding(home: Path, canary: str) -> set[str]:
    """The tables of the home's PostgreSQL schema with a row whose JSON text holds ``canary``."""
    schema = postgres_server.schema_for(home)
    found: set[str] = set()
    with psycopg.connect(postgres_server.run_dsn(), autocommit=True) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
            "AND table_type = 'BASE TABLE'",
            (schema,),
        ).fetchall()
        for (table,) in tables:
            query = sql.SQL("SELECT 1 FROM {}.{} AS t WHERE position(%s IN row_to_json(t)::text) > 0 LIMIT 1")
            row = conn.execute(
                query.format(sql.Identifier(schema), sql.Identifier(str(table))), (canary,)
            ).fetchone()
            if row is not None:
                found.add(str(table))
    return found


def canary_of(request: LLMRequest) -> str | None:
    for message in reversed(request.messages):
        if found := CANARY.search(message.content or ""):
            return found.group(0)
    return None


def canary_model(request: LLMRequest) -> ScriptStep:
    """A person's turn that writes their canary everywhere: the memory tool (USER.md and MEMORY.md), a
    schedule's text, a session search (a tool output holding it), then a reply repeating it; a request
    without tools (the local provider's fact extraction) gets one fact about it."""
    canary = canary_of(request) or "nothing"
    if not request.tools:
        return ScriptStep.reply(f"- The person's canary is {canary}")
    last = request.messages[-1]
    if last.role == "user" and "remember" in last.content:
        return ScriptStep.tool_calls(
            ToolCall("m1", "memory", {"action": "add", "target": "user", "content": f"canary {canary}"}),
            ToolCall("m2", "memory", {"action": "add", "target": "memory", "content": f"project {canary}"}),
            ToolCall(
                "s1", SCHEDULE_TOOL_NAME, {"action": "create", "in": "10 days", "prompt": f"say {canary}"}
            ),
            ToolCall("q1", SESSION_SEARCH_TOOL_NAME, {"query": canary}),
        )
    return ScriptStep.reply(f"noted {canary}")
