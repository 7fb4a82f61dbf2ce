"""PostgreSQL's own client programs (``pg_dump``, ``pg_restore``) driven for backups and restores.

Invariants: a program is found on PATH or not at all (``PgToolMissingError`` then says exactly which
command to run instead, with the password left out); the password of the DSN never appears on a command
line (other users can read those in ``ps``) — it is handed to the child in ``PGPASSWORD``, everything else
of the DSN in ``--dbname``; the child never prompts (``--no-password``); a failure is one
``PgToolError`` line carrying the program's own first error line.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agent_core.storage.errors import StateError
from agent_core.storage.postgres.settings import PostgresSettings


class PgToolError(StateError):
    """A PostgreSQL client program failed; the message names it and quotes its error."""


class PgToolMissingError(PgToolError):
    """The program is not installed here; the message says what to install and what to run instead."""


@dataclass(frozen=True, slots=True)
class ToolTarget:
    """How a client program reaches the configured database: ``--dbname`` without the password, plus env."""

    conninfo: str
    env: dict[str, str] = field(repr=False)

    @property
    def dbname_arg(self) -> str:
        return f"--dbname={self.conninfo}"


def tool_target(settings: PostgresSettings, *, application_name: str) -> ToolTarget:
    """The configured DSN split into a password-free conninfo and the child's extra environment."""
    params = conninfo_to_dict(settings.conninfo)
    password = params.pop("password", None)
    params.setdefault("connect_timeout", str(max(1, round(settings.connect_timeout_s))))
    params["application_name"] = application_name
    env = {"PGPASSWORD": str(password)} if password is not None else {}
    return ToolTarget(make_conninfo(**params), env)  # type: ignore[arg-type]


def find_tool(name: str) -> str | None:
    """The path of ``name`` on PATH, or None."""
    return shutil.which(name)


def require_tool(name: str, *, instead: Sequence[str]) -> str:
    """The path of ``name``; PgToolMissingError quoting ``instead`` (the command to run by hand) if absent."""
    found = find_tool(name)
    if found is None:
        raise PgToolMissingError(
            f"{name} is not installed on this host (install PostgreSQL's client programs, e.g. the "
            f"postgresql-client package, of the server's major version or newer), or run it where it is: "
            f"PGPASSWORD=… {shlex.join(instead)}"
        )
    return found


async def run_tool(argv: Sequence[str], target: ToolTarget) -> str:
    """Run ``argv`` to completion with the target's environment; its stdout, or PgToolError."""
    # The child inherits this process's environment (PATH, locale, PGSSL* …) plus the password.
    env = {**os.environ, **target.env}
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    stdout, stderr = await process.communicate()
    if process.returncode != 0:
        raise PgToolError(f"{Path(argv[0]).name} failed (exit {process.returncode}): {_first_error(stderr)}")
    return stdout.decode("utf-8", errors="replace")


async def run_script(
    producer: Sequence[str], consumer: Sequence[str], target: ToolTarget, *, before: str, after: str
) -> None:
    """Pipe ``before``, then ``producer``'s stdout, then ``after`` into ``consumer``'s stdin.

    Used as ``pg_restore -f -`` into ``psql --single-transaction``, so statements of our own around the
    restored script commit or roll back together with it. A producer that fails gets its consumer killed
    before it could read end-of-input (psql would commit a cut-short script); a consumer that stops at an
    error gets its producer killed. PgToolError quotes whichever failed first.
    """
    env = {**os.environ, **target.env}
    pipe, quiet = asyncio.subprocess.PIPE, asyncio.subprocess.DEVNULL
    sink = await asyncio.create_subprocess_exec(*consumer, stdin=pipe, stdout=quiet, stderr=pipe, env=env)
    source = await asyncio.create_subprocess_exec(*producer, stdin=quiet, stdout=pipe, stderr=pipe, env=env)
    killed: set[int] = set()

    async def feed() -> None:
        assert sink.stdin is not None and source.stdout is not None
        try:
            sink.stdin.write(before.encode())
            while chunk := await source.stdout.read(1 << 16):
                sink.stdin.write(chunk)
                await sink.stdin.drain()
            if await source.wait() != 0:
                killed.add(id(sink))
                sink.kill()  # before it sees end-of-input: the server rolls the transaction back
                return
            sink.stdin.write(after.encode())
            await sink.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            if source.returncode is None:
                killed.add(id(source))
                source.kill()  # nobody reads its output any more
        finally:
            sink.stdin.close()

    assert source.stderr is not None and sink.stderr is not None
    source_errors, sink_errors, _ = await asyncio.gather(source.stderr.read(), sink.stderr.read(), feed())
    await asyncio.gather(source.wait(), sink.wait())
    for argv, process, errors in ((consumer, sink, sink_errors), (producer, source, source_errors)):
        if process.returncode != 0 and id(process) not in killed:
            name = Path(argv[0]).name
            raise PgToolError(f"{name} failed (exit {process.returncode}): {_first_error(errors)}")


def _first_error(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", errors="replace").splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[0] if lines else "no message"
