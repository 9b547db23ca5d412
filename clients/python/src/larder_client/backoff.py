"""Bounded exponential backoff with jitter between failed connection attempts."""
from __future__ import annotations

import random
from collections.abc import Callable


class Backoff:
    """The wait before the next connection attempt after `failures` failed ones in a row.

    initial * multiplier**failures, capped at maximum, then scaled by a random
    factor in [1 - jitter, 1 + jitter] so that many clients of one restarted
    server do not reconnect in lockstep. Defaults: 0.1 s doubling to 5 s, ±20 %
    (gRPC's shape, with a cap that suits one server rather than a fleet).
    """

    def __init__(self, initial: float = 0.1, maximum: float = 5.0, multiplier: float = 2.0,
                 jitter: float = 0.2, random_fraction: Callable[[], float] = random.random) -> None:
        if not (0 < initial <= maximum) or multiplier < 1 or not (0 <= jitter < 1):
            raise ValueError("Backoff needs 0 < initial <= maximum, multiplier >= 1, 0 <= jitter < 1")
        self.initial, self.maximum, self.multiplier, self.jitter = initial, maximum, multiplier, jitter
        self._random = random_fraction
        self.failures = 0

    def next_delay(self) -> float:
        """Records one more failed attempt; returns how long to wait before the next one (seconds)."""
        base = min(self.maximum, self.initial * self.multiplier ** min(self.failures, 64))
        self.failures += 1
        return base * (1 + self.jitter * (2 * self._random() - 1))

    def reset(self) -> None:
        """After a successful connection: the next failure waits `initial` again."""
        self.failures = 0
