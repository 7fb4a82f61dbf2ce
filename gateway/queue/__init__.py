"""The durable turn queue and the worker pool that runs it across any number of processes."""

from gateway.queue.busy_policy import INTERRUPT_WHEN_BUSY, QUEUE_WHEN_BUSY, BusyPolicy
from gateway.queue.errors import QueueError, UnknownBusyPolicyError
from gateway.queue.settings import BusyPolicyName, QueueSettings
from gateway.queue.signals import Signals
from gateway.queue.turn_lane import ERROR_REPLY, LaneOutcome, TurnAgent, TurnLane
from gateway.queue.turn_queue import EnqueueResult, IdlePolicy, TurnQueue, principal_for
from gateway.queue.worker_pool import LaneObserver, WorkerPool, new_holder

__all__ = [
    "ERROR_REPLY",
    "INTERRUPT_WHEN_BUSY",
    "QUEUE_WHEN_BUSY",
    "BusyPolicy",
    "BusyPolicyName",
    "EnqueueResult",
    "IdlePolicy",
    "LaneObserver",
    "LaneOutcome",
    "QueueError",
    "QueueSettings",
    "Signals",
    "TurnAgent",
    "TurnLane",
    "TurnQueue",
    "UnknownBusyPolicyError",
    "WorkerPool",
    "new_holder",
    "principal_for",
]
