"""A time bound for a block of test code: a hang fails the test instead of the suite."""

from __future__ import annotations

import contextlib
import signal
import threading


class Hang(AssertionError):
    """The call did not return within its time bound."""


@contextlib.contextmanager
def time_bound(seconds: float, what: str = "the call"):
    """Fail with :class:`Hang` when the block runs longer than ``seconds``.

    ``signal.setitimer`` interrupts Python code in the main thread (where pytest
    runs tests); elsewhere the block runs unbounded.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum, frame):
        raise Hang(f"{what} did not return within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
