"""RateLimiter: a burst up to capacity, then one polite notice, then silence until the bucket refills."""

from __future__ import annotations

from gateway.access import RateLimiter, RateLimitSettings


class Monotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_exactly_one_notice_then_allowed_after_refill() -> None:
    clock = Monotonic()
    limiter = RateLimiter(RateLimitSettings(capacity=10, refill_s=6.0), clock)
    assert all(limiter.check("p_ada").allowed for _ in range(10))

    refusals = [limiter.check("p_ada") for _ in range(5)]
    assert not any(r.allowed for r in refusals)
    notices = [r.notice for r in refusals if r.notice is not None]
    assert len(notices) == 1 and refusals[0].notice is not None
    assert "wait about 6 seconds" in notices[0]

    clock.now += 5.9
    assert not limiter.check("p_ada").allowed
    clock.now += 0.1
    assert limiter.check("p_ada").allowed
    # A new burst after being let through again gets its own single notice.
    second_burst = [limiter.check("p_ada") for _ in range(3)]
    assert [r.notice is not None for r in second_burst] == [True, False, False]


def test_people_have_separate_buckets() -> None:
    clock = Monotonic()
    limiter = RateLimiter(RateLimitSettings(capacity=2, refill_s=60.0), clock)
    assert limiter.check("p_a").allowed and limiter.check("p_a").allowed
    assert not limiter.check("p_a").allowed
    assert limiter.check("p_b").allowed


def test_refill_is_capped_at_capacity() -> None:
    clock = Monotonic()
    limiter = RateLimiter(RateLimitSettings(capacity=3, refill_s=1.0), clock)
    limiter.check("p_a")
    clock.now += 3600
    assert [limiter.check("p_a").allowed for _ in range(4)] == [True, True, True, False]


def test_disabled_limiter_allows_everything() -> None:
    limiter = RateLimiter(RateLimitSettings(enabled=False, capacity=1), Monotonic())
    assert all(limiter.check("p_a").allowed for _ in range(100))


def test_idle_people_are_forgotten_so_memory_stays_bounded() -> None:
    clock = Monotonic()
    limiter = RateLimiter(RateLimitSettings(capacity=5, refill_s=1.0), clock)
    for n in range(3000):
        limiter.check(f"p_{n}")
        clock.now += 0.01
    # Only people seen within the last ~5 s of refill can still be tracked.
    assert limiter.tracked() < 1100
