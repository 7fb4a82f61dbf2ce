"""The busy policy's decisions, without a database: where an arriving message goes, who is told what, and
how a flagged turn ends."""

from __future__ import annotations

import pytest

from agent_core.actor import Actor
from gateway.queue import INTERRUPT_WHEN_BUSY, QUEUE_WHEN_BUSY, BusyPolicy, UnknownBusyPolicyError
from gateway.queue.busy_policy import STOPPED_NOTE
from gateway.storage.queue import Admission, ConversationQueue, Interrupt, Placement, QueuedJob

ADA = Actor(person_id="p-ada", platform="test")
ADA_AS_ADMIN = Actor(person_id="p-ada", platform="test", is_admin=True)
BOB = Actor(person_id="p-bob", platform="test")
POLICIES = (QUEUE_WHEN_BUSY, INTERRUPT_WHEN_BUSY)


def waiting(actor: Actor, *, running: int = 1, job: int = 7) -> ConversationQueue:
    return ConversationQueue(running=running, queued=1, newest_queued=QueuedJob(job, actor))


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_an_idle_conversation_takes_the_message_into_the_transcript_now(policy: BusyPolicy) -> None:
    assert policy.admit(ConversationQueue(running=0, queued=0), ADA) == Admission(Placement.TIP)


def test_queue_policy_lets_a_message_sent_mid_turn_wait_with_one_ack() -> None:
    admission = QUEUE_WHEN_BUSY.admit(ConversationQueue(running=1, queued=0), ADA)
    assert admission == Admission(Placement.WAIT, ack_text=QUEUE_WHEN_BUSY.ack_text)


def test_interrupt_policy_also_interrupts_the_running_turn() -> None:
    admission = INTERRUPT_WHEN_BUSY.admit(ConversationQueue(running=1, queued=0), ADA)
    assert admission == Admission(
        Placement.WAIT, interrupt_running=True, ack_text=INTERRUPT_WHEN_BUSY.ack_text
    )


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_more_from_the_same_sender_joins_their_waiting_job_silently(policy: BusyPolicy) -> None:
    assert policy.admit(waiting(ADA), ADA) == Admission(Placement.JOIN, join_job=7)
    assert policy.admit(waiting(ADA, running=0), ADA) == Admission(Placement.JOIN, join_job=7)


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_a_turn_never_answers_another_sender_or_other_rights(policy: BusyPolicy) -> None:
    for other in (BOB, ADA_AS_ADMIN):
        admission = policy.admit(waiting(ADA), other)
        assert admission.placement is Placement.WAIT and admission.join_job is None
        assert admission.ack_text == policy.ack_text  # a turn runs: the newcomer is told


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_behind_another_senders_waiting_job_nothing_runs_so_nothing_is_said(policy: BusyPolicy) -> None:
    assert policy.admit(waiting(ADA, running=0), BOB) == Admission(Placement.WAIT)


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_a_flagged_turn_ends_as_stopped_or_interrupted(policy: BusyPolicy) -> None:
    assert policy.on_interrupt(Interrupt.NONE) is None
    stopped = policy.on_interrupt(Interrupt.STOP)
    assert stopped is not None and (stopped.result, stopped.note) == ("stopped", STOPPED_NOTE)
    interrupted = policy.on_interrupt(Interrupt.NEWER)
    assert interrupted is not None and (interrupted.result, interrupted.note) == ("interrupted", None)


def test_policies_are_found_by_their_configured_name() -> None:
    assert BusyPolicy.named("queue") is QUEUE_WHEN_BUSY
    assert BusyPolicy.named("interrupt") is INTERRUPT_WHEN_BUSY
    with pytest.raises(UnknownBusyPolicyError):
        BusyPolicy.named("ignore")
