"""The OpenAI-compatible API's side of the gateway: its channel (platform "api"), the answer a request waits
for, what a request's messages add to its conversation, and the model it names. Routes: ``gateway.http``."""

from gateway.api.answer import Answer, LiveAnswer
from gateway.api.channel import API_CAPABILITIES, ApiChannel, Prepare
from gateway.api.client_history import (
    INSTRUCTION_ROLES,
    RequestTurns,
    StoredHistory,
    Transcripts,
    UnanswerableRequestError,
    stored_history,
)
from gateway.api.served_model import OFFLINE_MODEL, ServedModel

__all__ = [
    "API_CAPABILITIES",
    "INSTRUCTION_ROLES",
    "OFFLINE_MODEL",
    "Answer",
    "ApiChannel",
    "LiveAnswer",
    "Prepare",
    "RequestTurns",
    "ServedModel",
    "StoredHistory",
    "Transcripts",
    "UnanswerableRequestError",
    "stored_history",
]
