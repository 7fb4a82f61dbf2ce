"""The command table: slash commands by name and alias, parsed from message text; it also writes /help.

Invariant: a name or alias maps to exactly one command (a duplicate is refused when the table is built);
``/cmd@botname`` is ``/cmd``; an unknown ``/word`` is not a command (it goes to the model).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from agent_core.actor import Actor
from gateway.contracts import InboundMessage
from gateway.sessions import SessionKey

from .errors import DuplicateCommandError


@dataclass(frozen=True)
class CommandCall:
    """One invocation: who (``actor``), where, and the text after the command name."""

    name: str
    argument: str
    message: InboundMessage
    actor: Actor
    key: SessionKey


CommandHandler = Callable[[CommandCall], Awaitable[str]]


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    handler: CommandHandler
    aliases: tuple[str, ...] = ()
    usage: str = ""
    slow: bool = False
    """Runs after the chat's next messages may go on (e.g. a model call); for commands that do not change
    which conversation later messages join."""


class CommandTable:
    def __init__(self, commands: Sequence[Command]) -> None:
        self._commands = tuple(commands)
        self._by_name: dict[str, Command] = {}
        for command in self._commands:
            for name in (command.name, *command.aliases):
                if name in self._by_name:
                    raise DuplicateCommandError(name)
                self._by_name[name] = command

    def parse(self, text: str) -> tuple[Command, str, str] | None:
        """(command, the name as typed, argument) when ``text`` is a known command, else None."""
        stripped = text.strip()
        if not stripped.startswith("/"):
            return None
        head, _, argument = stripped[1:].partition(" ")
        name = head.split("@", 1)[0].lower()
        command = self._by_name.get(name)
        return None if command is None else (command, name, argument.strip())

    def help_text(self) -> str:
        lines = ["Commands:"]
        for command in self._commands:
            aliases = "".join(f", /{alias}" for alias in command.aliases)
            usage = f" {command.usage}" if command.usage else ""
            lines.append(f"/{command.name}{usage}{aliases} — {command.summary}")
        return "\n".join(lines)
