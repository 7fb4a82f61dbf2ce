"""Retention: what the gateway deletes once it is old enough (the ``retention`` settings), run in the
background by ``serve`` and on demand by ``mnemogate retention``, through the storage's retention port."""

from gateway.retention.policy import KIND_LABELS, cutoffs
from gateway.retention.runner import (
    ConversationForgetter,
    RetentionLeaseLostError,
    RetentionReport,
    RetentionRunner,
)
from gateway.retention.settings import RetentionSettings

__all__ = [
    "KIND_LABELS",
    "ConversationForgetter",
    "RetentionLeaseLostError",
    "RetentionReport",
    "RetentionRunner",
    "RetentionSettings",
    "cutoffs",
]
