"""Loading the attack and harmless corpora (YAML fixtures beside this module) as typed cases."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from agent_core.threats import Scope

CORPUS_DIR = Path(__file__).parent / "corpus"


@dataclass(frozen=True)
class Case:
    """One corpus text, the scope it is judged at, and (for attacks) a finding it must produce."""

    label: str
    klass: str
    text: str
    scope: Scope
    expect: str | None
    known_miss: str | None


def load(name: str) -> tuple[Case, ...]:
    """Every case of ``corpus/<name>.yaml``, labelled ``<name>-<n>-<class>``."""
    raw = yaml.safe_load((CORPUS_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    return tuple(
        Case(
            f"{name}-{n:03d}-{item['class']}",
            str(item["class"]),
            str(item["text"]),
            Scope[str(item.get("scope", "strict")).upper()],
            item.get("expect"),
            item.get("known_miss"),
        )
        for n, item in enumerate(raw, start=1)
    )


ATTACKS = load("attacks")
HARMLESS = load("harmless")
