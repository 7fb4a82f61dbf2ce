"""The person archive's layout: its format name and version, where each part lives, and the README that
travels inside it. A reader checks ``manifest.json``'s ``format`` and ``version``; a change that moves or
removes a field bumps ``FORMAT_VERSION`` (adding a field does not).
"""

from __future__ import annotations

from urllib.parse import quote

FORMAT_NAME = "mnemogate-person-export"
FORMAT_VERSION = 1

README = "README.md"
MANIFEST = "manifest.json"
PERSON = "person.json"
LINKS = "links.json"
CONVERSATIONS = "conversations.json"
MEMORY_AUDIT = "memory_audit.jsonl"
USAGE = "usage.jsonl"
SCHEDULES = "schedules.jsonl"
FACTS = "facts.json"


def conversation_file(conversation_id: str) -> str:
    """The conversation's record and segments."""
    return f"conversations/{_component(conversation_id)}/conversation.json"


def messages_file(conversation_id: str) -> str:
    """The conversation's messages, one JSON object per line, oldest first."""
    return f"conversations/{_component(conversation_id)}/messages.jsonl"


def joined_messages_file(conversation_id: str) -> str:
    """The person's own messages in a conversation someone else owns."""
    return f"joined/{_component(conversation_id)}/messages.jsonl"


def memory_file(name: str) -> str:
    """A curated memory document (``MEMORY.md``, ``USER.md``) as the plain file the file backend keeps."""
    return f"memory/{name}"


def _component(value: str) -> str:
    return quote(value, safe="") or "_"


def readme_text(person_id: str) -> str:
    """What the archive holds and how to read it (the same text for every backend)."""
    return f"""# mnemogate export of person {person_id}

Format `{FORMAT_NAME}`, version {FORMAT_VERSION} (also in `manifest.json`). A zip archive of UTF-8 files;
`.json` files hold one JSON document, `.jsonl` files one JSON object per line. Times are epoch seconds (UTC).

- `manifest.json`: format and version, the person, when and from which backend it was exported, counts,
  and every file in the archive.
- `person.json`: the person, their platform accounts and their time zone.
- `links.json`: `/link` codes issued to them (never a code's value) and DM pairing requests of their accounts.
- `conversations.json`: every conversation they own, newest first, with the file holding its messages.
- `conversations/<id>/conversation.json`: one conversation and its segments (frozen system prompt, model,
  token usage, end reason).
- `conversations/<id>/messages.jsonl`: its messages, oldest first: role, text, tool calls and results, and
  recalled context as sent to the model (`api_content`).
- `joined/<id>/messages.jsonl`: their own messages in conversations someone else owns (a shared group
  thread); nobody else's.
- `memory/MEMORY.md`, `memory/USER.md`: their curated memory as plain files, entries separated by a line
  holding `§`.
- `memory_audit.jsonl`: every change to their curated memory: who, when, which conversation, old and new
  text (newest first).
- `usage.jsonl`: every model call they caused: when, model, why (`kind`), platform, tokens (input, output,
  cache read and write) and cost (`null` when the model has no price).
- `schedules.jsonl`: their reminders and scheduled turns, each with its runs.
- `facts.json`: the `local` memory provider's facts about them (only when that provider is configured).

An archive is read while the gateway runs: rows written during the export may or may not be in it. The
`memory/` files are the person's own stores; under `memory.isolation: shared` they are the one shared pair
every person uses (the manifest says which).
"""
