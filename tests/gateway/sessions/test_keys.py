"""Session keys survive their string form unchanged, whatever the ids contain."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.sessions import KeyScope, SessionKey, SessionKeyError

ids = st.text(min_size=0, max_size=20)
optional_ids = st.none() | ids


@given(
    platform=st.text(min_size=1, max_size=10),
    scope=st.sampled_from(list(KeyScope)),
    chat_id=ids,
    workspace=optional_ids,
    thread_id=optional_ids,
    user_id=optional_ids,
)
def test_string_form_round_trips(
    platform: str,
    scope: KeyScope,
    chat_id: str,
    workspace: str | None,
    thread_id: str | None,
    user_id: str | None,
) -> None:
    key = SessionKey(platform, scope, chat_id, workspace, thread_id, user_id)
    assert SessionKey.parse(key.to_string()) == key


def test_readable_form() -> None:
    key = SessionKey("telegram", KeyScope.GROUP, "-100123", thread_id=None, user_id="42")
    assert key.to_string() == "telegram:-:group:%2D100123:-:42"


@pytest.mark.parametrize("text", ["", "a:b", "telegram:-:nonsense:1:-:-", "-:-:dm:1:-:-"])
def test_malformed_keys_are_refused(text: str) -> None:
    with pytest.raises(SessionKeyError):
        SessionKey.parse(text)


@pytest.mark.parametrize("odd", ["-", "", ":", "%2D", "a:b-c", "%00empty"])
def test_ids_that_look_like_markers_round_trip(odd: str) -> None:
    key = SessionKey("web", KeyScope.DM, odd, odd, odd, odd)
    assert SessionKey.parse(key.to_string()) == key
