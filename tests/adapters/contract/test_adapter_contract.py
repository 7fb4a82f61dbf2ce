"""The contract every adapter honours: stable conversion, chunks within limits, honest capabilities."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.contracts import Adapter, Capabilities
from tests.adapters.contract.cases import CASES, ContractCase, inbound_as_json


def _payloads(case: ContractCase) -> list[Path]:
    return sorted(p for p in case.payload_dir.glob("*.json") if not p.name.endswith(".expected.json"))


RECORDED = [(case, path) for case in CASES for path in _payloads(case)]


@pytest.mark.parametrize(
    ("case", "payload"), RECORDED, ids=lambda v: v.stem if isinstance(v, Path) else str(v)
)
def test_convert_is_stable_on_recorded_payloads(case: ContractCase, payload: Path) -> None:
    data = json.loads(payload.read_text(encoding="utf-8"))
    expected = json.loads(payload.with_name(payload.stem + ".expected.json").read_text(encoding="utf-8"))
    first, second = case.convert(data), case.convert(data)
    assert inbound_as_json(first) == expected
    assert first == second  # the same delivery always yields the same event id, chat and text
    if first is not None:
        assert first.platform == case.platform
        assert first.event_id


@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_platform_has_recorded_payloads_for_dm_group_and_thread(case: ContractCase) -> None:
    kinds = {
        message.chat.kind
        for path in _payloads(case)
        if (message := case.convert(json.loads(path.read_text(encoding="utf-8")))) is not None
    }
    assert {"dm", "group", "thread"} <= {str(kind) for kind in kinds}


_MARKDOWN_PIECES = st.sampled_from(
    ["# Heading\n\n", "**bold** ", "*it* ", "`code` ", "[link](https://example.org/?a=1&b=2) ", "<tag> & ",
     "- item\n", "1. step\n", "\n\n", "\n", "```py\nx = 1 < 2\n", "```\n", "> quote\n", "😀", "长文本",
     "| a | b |\n|---|---|\n| 1 | 2 |\n", "word ", "~~gone~~ ", "\\*", "    indented code\n"]
)  # fmt: skip


@st.composite
def markdown_documents(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(_MARKDOWN_PIECES, min_size=1, max_size=60))
    repeat = draw(st.integers(min_value=1, max_value=120))
    filler = draw(st.text(min_size=0, max_size=300))
    return "".join(pieces) * repeat + filler


@pytest.mark.parametrize("case", CASES, ids=str)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdown=markdown_documents())
def test_render_never_exceeds_the_limit_and_the_platform_accepts_every_chunk(
    case: ContractCase, markdown: str
) -> None:
    adapter = case.make_adapter()
    limits: Capabilities = adapter.capabilities
    chunks = adapter.render(markdown)
    for chunk in chunks:
        assert limits.measure(chunk) <= limits.max_text_length
        assert chunk.strip()
        case.accept_chunk(chunk)
    if any(ch.isalnum() for ch in markdown):
        assert chunks, "visible text must not vanish"


def _overrides(adapter: Adapter, method: str) -> bool:
    return getattr(type(adapter), method) is not getattr(Adapter, method)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_capabilities_are_honest(case: ContractCase) -> None:
    adapter = case.make_adapter()
    caps = adapter.capabilities
    assert adapter.name == case.platform
    assert caps.can_edit == _overrides(adapter, "edit")
    assert caps.can_typing == _overrides(adapter, "typing")
    assert caps.max_edit_length is None or caps.max_edit_length <= caps.max_text_length
    # A chunk exactly at the limit, in the platform's own length unit, is accepted; one over is not.
    wide = "😀" if caps.length_unit == "utf16" else "x"
    at_limit = wide * (caps.max_text_length // caps.measure(wide))
    chunks = adapter.render(at_limit + wide * 10)
    assert len(chunks) == 2
    assert all(caps.fits(chunk) for chunk in chunks)
    assert not caps.fits(at_limit + wide * 10)
