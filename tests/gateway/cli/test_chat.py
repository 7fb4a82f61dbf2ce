"""``mnemogate chat`` with the offline model, piped like a shell user would."""

from __future__ import annotations

from pathlib import Path

from tests.cli_process import mnemogate


def test_a_remembered_fact_is_known_in_a_new_conversation(home: Path) -> None:
    first = mnemogate("chat", "--home", str(home), stdin="remember that I drink green tea\n")
    assert first.returncode == 0, first.stderr
    assert "[offline model]" in first.stdout

    second = mnemogate("chat", "--home", str(home), stdin="what do you know about me\n")
    assert second.returncode == 0, second.stderr
    assert "green tea" in second.stdout
    assert "[offline model]" in second.stdout


def test_slash_commands_in_the_terminal(home: Path) -> None:
    result = mnemogate(
        "chat",
        "--home",
        str(home),
        stdin="remember that my cat is called Miso\n/memory\n/new\nhello\n/quit\nnever read\n",
    )
    assert result.returncode == 0, result.stderr
    assert "Miso" in result.stdout
    assert "Started a new conversation." in result.stdout
    assert "never read" not in result.stdout


def test_gateway_commands_answer_in_the_terminal_instead_of_the_model(home: Path) -> None:
    result = mnemogate("chat", "--home", str(home), stdin="hello\n/help\n/status\n/whoami\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "you said: /" not in out  # none of them reached the model
    assert "/status" in out and "/whoami" in out and "/quit" in out  # the command table's /help
    assert "Conversation: " in out and "Model: offline" in out  # /status of this conversation
    assert "Person: local" in out and "Role: admin" in out  # /whoami


def test_new_in_the_terminal_starts_the_conversation_the_next_lines_join(home: Path) -> None:
    result = mnemogate("chat", "--home", str(home), stdin="hello\n/status\n/new\n/status\nhello again\n")
    assert result.returncode == 0, result.stderr
    before, after = [line for line in result.stdout.splitlines() if line.startswith("Conversation: ")]
    assert before != after
    resumed = mnemogate("chat", "--continue", "--home", str(home), stdin="/status\n")
    assert after in resumed.stdout
    assert "Segments: 1" in resumed.stdout
