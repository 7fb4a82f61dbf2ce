"""``mnemogate skills export|import``: the skills as plain SKILL.md files, whatever backend keeps them.

``export DIR`` writes every loadable skill as ``DIR/<name>/SKILL.md`` (the layout of ``<home>/skills``) and
names the damaged ones it skipped; ``import DIR`` stores every ``DIR/<name>/SKILL.md`` after exactly the
checks a ``skill_manage`` write passes (front matter, name, limits, threat scan), creating or updating the
skill; a skill equal to the stored one is left alone, so importing the same folder again changes nothing;
skills not in the folder are kept. Each command exits 1 when any skill was skipped or refused.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_core.skills import SkillImport, SkillTransfer, export_skills, import_skills
from agent_core.storage.documents import SkillTexts
from gateway.cli.context import CommandContext
from gateway.storage import open_storage


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser("skills", parents=[common], help="export or import skills as plain files")
    actions = parser.add_subparsers(dest="skills_action", metavar="ACTION", required=True)
    export = actions.add_parser("export", parents=[common], help="write every skill as DIR/<name>/SKILL.md")
    export.add_argument("directory", type=Path, metavar="DIR")
    export.set_defaults(handler=run_export)
    load = actions.add_parser("import", parents=[common], help="store every DIR/<name>/SKILL.md")
    load.add_argument("directory", type=Path, metavar="DIR")
    load.set_defaults(handler=run_import)


def run_export(context: CommandContext) -> int:
    directory: Path = context.args.directory
    done = asyncio.run(_run(context, export_skills, directory))
    return _report(done, "exported", directory)


def run_import(context: CommandContext) -> int:
    directory: Path = context.args.directory
    if not directory.is_dir():
        print(f"mnemogate: error: {directory} is not a directory", file=sys.stderr)
        return 2
    done = asyncio.run(_run(context, import_skills, directory))
    return _report(done, "imported", directory)


Transfer = Callable[[SkillTexts, Path], tuple[SkillTransfer, ...]]


async def _run(context: CommandContext, action: Transfer, directory: Path) -> tuple[SkillTransfer, ...]:
    async with open_storage(context.home.ensure().root, context.settings.storage) as storage:
        return await asyncio.to_thread(action, storage.skills, directory)


def _report(done: tuple[SkillTransfer, ...], verb: str, directory: Path) -> int:
    failed = [item for item in done if item.reason is not None]
    for item in done:
        if item.reason is None:
            print(f"{item.name}: {item.outcome}")
        else:
            print(f"{item.name}: {item.outcome}: {item.reason}", file=sys.stderr)
    changed = sum(item.outcome in (SkillImport.CREATED, SkillImport.UPDATED, "exported") for item in done)
    print(f"{verb} {changed} of {len(done)} skills ({directory})")
    return 1 if failed else 0
