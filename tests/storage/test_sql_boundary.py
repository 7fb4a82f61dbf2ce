"""Only storage backends speak SQL: outside a package path containing ``/sqlite/`` or ``/postgres/`` no
module imports ``sqlite3`` or ``psycopg`` or holds an SQL statement string.

Strings are read from the syntax tree (docstrings and comments are prose, not statements), so a docstring
may say "each migration runs under BEGIN IMMEDIATE" while code outside a backend may not run it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agent_core", "gateway", "adapters", "bench")
BACKEND_DIRS = ("sqlite", "postgres")

# Files whose strings quote SQL as text (chat messages, corpora), never as a statement; say why.
QUOTED_SQL = {
    "bench/store_corpus.py": "synthetic chat messages that quote SQL in a code block; never executed",
}

_STATEMENTS = {
    "SELECT … FROM": re.compile(r"\bSELECT\b.*?\bFROM\b", re.DOTALL),
    "INSERT INTO": re.compile(r"\bINSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\b"),
    "UPDATE … SET": re.compile(r"\bUPDATE\s+[\"\w.]+\s+SET\b"),
    "DELETE FROM": re.compile(r"\bDELETE\s+FROM\b"),
    "CREATE TABLE/INDEX": re.compile(
        r"\bCREATE\s+(?:(?:UNIQUE|VIRTUAL|TEMP|TEMPORARY)\s+)*(?:TABLE|INDEX|TRIGGER|VIEW)\b"
    ),
    "PRAGMA": re.compile(r"\bPRAGMA\s+\w+"),
    "BEGIN IMMEDIATE": re.compile(r"\bBEGIN\s+(?:IMMEDIATE|EXCLUSIVE|DEFERRED)\b"),
    "MATCH '…'": re.compile(r"\bMATCH\s+['\"?:]"),
}


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _outside_backends() -> list[Path]:
    return sorted(
        path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if not any(part in BACKEND_DIRS for part in path.relative_to(ROOT).parts[:-1])
    )


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings (of the module, a class or a function)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, text) of every string literal that is not a docstring; an f-string's literal parts joined."""
    skip = _docstrings(tree)
    inside_fstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
            inside_fstrings.update(id(v) for v in node.values)
            yield node.lineno, " ? ".join(parts)
    for node in ast.walk(tree):
        is_string = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_string and id(node) not in skip and id(node) not in inside_fstrings:
            yield node.lineno, node.value


def findings(path: Path, relative: str | None = None) -> list[Finding]:
    """What in ``path`` belongs in a backend: ``sqlite3`` imports and SQL statement strings."""
    relative = relative or path.relative_to(ROOT).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for driver in ("sqlite3", "psycopg", "psycopg_pool"):
            if any(name == driver or name.startswith(driver + ".") for name in names):
                found.append(Finding(relative, node.lineno, f"import {driver}"))
    if relative not in QUOTED_SQL:
        found += [Finding(relative, line, what) for line, what in _statements(tree)]
    return sorted(found, key=lambda f: (f.path, f.line))


def _statements(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for line, text in _strings(tree):
        for label, pattern in _STATEMENTS.items():
            if pattern.search(text):
                yield line, f"SQL ({label}): {' '.join(text.split())[:70]!r}"


def test_no_module_outside_a_backend_imports_sqlite3_or_holds_sql() -> None:
    problems = [str(finding) for path in _outside_backends() for finding in findings(path)]
    assert not problems, (
        "SQL and sqlite3 belong in a storage backend (a package under …/sqlite/); move these behind a "
        "port method:\n  " + "\n  ".join(problems)
    )


def test_the_scan_sees_statements_and_imports_but_not_prose(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""Docstring prose may say BEGIN IMMEDIATE and SELECT x FROM y."""\n'
        "import sqlite3\n"
        "from sqlite3 import Connection\n"
        "# a comment: DELETE FROM nothing\n"
        'A = "SELECT id FROM messages WHERE id > ?"\n'
        'B = f"UPDATE outbox SET state = {1}"\n'
        "C = ('INSERT OR IGNORE INTO t(a) '\n     'VALUES (1)')\n"
        'D = "messages_fts MATCH ?"\n'
        'E = "PRAGMA quick_check"\n'
        'F = "select a model from the list"\n',
        encoding="utf-8",
    )
    lines = [(f.line, f.what.split(":")[0]) for f in findings(sample, "bench/sample.py")]
    assert lines == [
        (2, "import sqlite3"),
        (3, "import sqlite3"),
        (5, "SQL (SELECT … FROM)"),
        (6, "SQL (UPDATE … SET)"),
        (7, "SQL (INSERT INTO)"),
        (9, "SQL (MATCH '…')"),
        (10, "SQL (PRAGMA)"),
    ]


def test_backend_packages_are_exempt_and_the_quoted_sql_files_still_quote_it() -> None:
    scanned = {path.relative_to(ROOT).as_posix() for path in _outside_backends()}
    assert "agent_core/storage/sqlite/schema.py" not in scanned
    assert "gateway/storage/sqlite/schema.py" not in scanned
    assert "gateway/runtime.py" in scanned
    for relative in QUOTED_SQL:
        tree = ast.parse((ROOT / relative).read_text(encoding="utf-8"))
        assert list(_statements(tree)), f"{relative} quotes no SQL any more: drop it from QUOTED_SQL"
