"""A small Dockerfile reader: instructions per stage, with continuation lines joined and flags split off.

Enough of the format for the deploy tests to check deploy/Dockerfile and replay its steps without a Docker
engine: FROM/AS stages, ARG/ENV values, COPY sources, RUN shell commands, exec-form CMD and HEALTHCHECK.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Instruction:
    keyword: str
    flags: tuple[str, ...]
    argument: str

    def exec_form(self) -> list[str]:
        """The JSON array of an exec-form CMD/ENTRYPOINT (or HEALTHCHECK's ``CMD [...]``)."""
        text = self.argument.removeprefix("CMD").strip() if self.keyword == "HEALTHCHECK" else self.argument
        value = json.loads(text)
        assert isinstance(value, list) and all(isinstance(item, str) for item in value), text
        return value


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [item for item in self.instructions if item.keyword == keyword]

    def one(self, keyword: str) -> Instruction:
        found = self.all(keyword)
        assert len(found) == 1, f"stage {self.name}: expected one {keyword}, found {len(found)}"
        return found[0]

    def variables(self, keyword: str) -> dict[str, str]:
        """ARG or ENV values declared in this stage (``KEY=value`` pairs, shell-quoted)."""
        values: dict[str, str] = {}
        for item in self.all(keyword):
            for token in shlex.split(item.argument):
                key, _, value = token.partition("=")
                values[key] = value
        return values


@dataclass
class Dockerfile:
    global_args: dict[str, str]
    stages: list[Stage]

    def stage(self, name: str) -> Stage:
        return next(stage for stage in self.stages if stage.name == name)


def parse(path: Path) -> Dockerfile:
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for instruction in _instructions(path.read_text(encoding="utf-8")):
        if instruction.keyword == "FROM":
            words = instruction.argument.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else str(len(stages))
            stages.append(Stage(words[0], name))
        elif stages:
            stages[-1].instructions.append(instruction)
        elif instruction.keyword == "ARG":
            key, _, value = instruction.argument.partition("=")
            global_args[key] = value.strip('"')
    return Dockerfile(global_args, stages)


def _instructions(text: str) -> list[Instruction]:
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    result = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        flags = []
        rest = rest.strip()
        while rest.startswith("--"):
            flag, _, rest = rest.partition(" ")
            flags.append(flag)
            rest = rest.strip()
        result.append(Instruction(keyword.upper(), tuple(flags), rest))
    return result
