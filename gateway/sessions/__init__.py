"""Session keys and the rules that map an inbound message to its conversation."""

from gateway.sessions.keys import KeyScope, SessionKey, SessionKeyError

__all__ = ["KeyScope", "SessionKey", "SessionKeyError"]
