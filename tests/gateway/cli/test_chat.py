"""``mnemogate chat`` with the offline model, piped like a shell user would."""

from __future__ import annotations

from pathlib import Path

from .test_cli import mnemogate_stdin


def test_a_remembered_fact_is_known_in_a_new_conversation(home: Path) -> None:
    first = mnemogate_stdin("remember that I drink green tea\n", "chat", "--home", str(home))
    assert first.returncode == 0, first.stderr
    assert "[offline model]" in first.stdout

    second = mnemogate_stdin("what do you know about me\n", "chat", "--home", str(home))
    assert second.returncode == 0, second.stderr
    assert "green tea" in second.stdout
    assert "[offline model]" in second.stdout


def test_slash_commands_in_the_terminal(home: Path) -> None:
    result = mnemogate_stdin(
        "remember that my cat is called Miso\n/memory\n/new\nhello\n/quit\nnever read\n",
        "chat",
        "--home",
        str(home),
    )
    assert result.returncode == 0, result.stderr
    assert "Miso" in result.stdout
    assert "Started a new conversation." in result.stdout
    assert "never read" not in result.stdout
