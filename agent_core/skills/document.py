"""The SKILL.md format: YAML front matter (name, description, tags) then a markdown body.

Invariants: ``render`` and ``parse`` round-trip every valid document; names are lowercase slugs that
are always exactly one safe path component; ``validate_document`` enforces the limits and the STRICT
threat scan that every write must pass, with messages fit to show to the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import yaml

from agent_core.skills.errors import InvalidSkillNameError, SkillContentError, SkillFormatError
from agent_core.threats import Scope, first_threat_message

MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_BODY_CHARS = 100_000
MAX_TAGS = 20
MAX_TAG_CHARS = 40
_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_FENCE = "---"


@dataclass(frozen=True)
class SkillDocument:
    """One skill: its identity, its one-line description, its tags and the procedure text."""

    name: str
    description: str
    tags: tuple[str, ...]
    body: str

    def render(self) -> str:
        """The SKILL.md text (deterministic for equal documents)."""
        front = {"name": self.name, "description": self.description, "tags": list(self.tags)}
        dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1_000_000)
        return f"{_FENCE}\n{dumped}{_FENCE}\n\n{self.body}\n"


def validate_name(name: object) -> str:
    """``name`` if it is a lowercase slug (a-z, 0-9, inner hyphens, ≤64 chars); raises otherwise."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidSkillNameError(
            f"Invalid skill name {name!r}: use 1-{MAX_NAME_CHARS} lowercase letters, digits and inner "
            "hyphens, e.g. 'deploy-to-fly'."
        )
    return name


def parse(text: str, *, expected_name: str | None = None) -> SkillDocument:
    """Read a SKILL.md; raises SkillFormatError when the front matter is missing or malformed.

    A missing ``name`` defaults to ``expected_name`` (the directory name); a different one is an error,
    because the directory name is what ``skill_view`` looks up.
    """
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != _FENCE:
        raise SkillFormatError("SKILL.md must start with a '---' front matter line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == _FENCE)
    except StopIteration:
        raise SkillFormatError("SKILL.md front matter is not closed by a '---' line") from None
    try:
        front = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise SkillFormatError(f"SKILL.md front matter is not valid YAML: {_first_line(exc)}") from None
    if not isinstance(front, dict):
        raise SkillFormatError("SKILL.md front matter must be a mapping with name and description")
    name = front.get("name", expected_name)
    if expected_name is not None and name != expected_name:
        raise SkillFormatError(f"front matter name {name!r} differs from its directory {expected_name!r}")
    description = front.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillFormatError("SKILL.md front matter needs a non-empty 'description'")
    try:
        valid_name = validate_name(name)
    except InvalidSkillNameError as exc:
        raise SkillFormatError(str(exc)) from None
    body = "\n".join(lines[end + 1 :]).strip()
    return SkillDocument(valid_name, " ".join(description.split()), _tags_from_yaml(front.get("tags")), body)


def build(name: object, description: object, tags: object, body: object) -> SkillDocument:
    """A validated document from model-supplied values; raises SkillContentError / InvalidSkillNameError."""
    document = SkillDocument(
        validate_name(name), _description(description), normalise_tags(tags), _body(body)
    )
    validate_document(document)
    return document


def validate_document(document: SkillDocument) -> None:
    """Limits and the STRICT threat scan every write must pass (skills enter every prompt's index)."""
    for field_name, text in (
        ("description", document.description),
        ("tags", " ".join(document.tags)),
        ("body", document.body),
    ):
        problem = first_threat_message(text, Scope.STRICT)
        if problem is not None:
            raise SkillContentError(f"Skill {field_name} refused. {problem}")


def normalise_tags(tags: object) -> tuple[str, ...]:
    """Tags as a sorted, de-duplicated tuple of short single-line strings; raises SkillContentError."""
    if tags is None:
        return ()
    if not isinstance(tags, Sequence) or isinstance(tags, str):
        raise SkillContentError("tags must be a list of short strings.")
    if len(tags) > MAX_TAGS:
        raise SkillContentError(f"At most {MAX_TAGS} tags are allowed (got {len(tags)}).")
    cleaned: set[str] = set()
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip() or len(tag.strip()) > MAX_TAG_CHARS or "\n" in tag:
            raise SkillContentError(f"Each tag must be a single-line string of 1-{MAX_TAG_CHARS} chars.")
        cleaned.add(tag.strip().lower())
    return tuple(sorted(cleaned))


def _description(description: object) -> str:
    if not isinstance(description, str) or not description.strip():
        raise SkillContentError("A description is required: one line saying when to use this skill.")
    text = description.strip()
    if "\n" in text:
        raise SkillContentError("The description must be a single line; put details in the body.")
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise SkillContentError(
            f"The description is {len(text):,} chars; the limit is {MAX_DESCRIPTION_CHARS:,}. Shorten it."
        )
    return text


def _body(body: object) -> str:
    if not isinstance(body, str) or not body.strip():
        raise SkillContentError("A body is required: the procedure in markdown.")
    text = body.replace("\r\n", "\n").strip()
    if len(text) > MAX_BODY_CHARS:
        raise SkillContentError(
            f"The body is {len(text):,} chars; the limit is {MAX_BODY_CHARS:,}. Shorten it or split "
            "the skill."
        )
    return text


def _tags_from_yaml(raw: object) -> tuple[str, ...]:
    # Hand-written YAML gives "a, b" strings and bare numbers ("3.11"); both are ordinary tags.
    if isinstance(raw, str):
        raw = [part for part in raw.split(",") if part.strip()]
    elif isinstance(raw, list):
        raw = [str(tag) if isinstance(tag, int | float) else tag for tag in raw]
    try:
        return normalise_tags(raw)
    except SkillContentError as exc:
        raise SkillFormatError(f"SKILL.md front matter 'tags': {exc}") from None


def _first_line(exc: yaml.YAMLError) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
