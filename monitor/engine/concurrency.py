"""How many reads to keep in flight: as many as the window has room for now, up to the ceiling.

Google counts reads over a rolling 60-second window, so N reads at L a window cannot take less than
floor((N - 1) / L) windows plus one read's answer: each window's allowance sent as soon as it frees,
the last one answered. A run sized for the *average* rate (Little's law: rate x latency, 4 to 8 reads
at 300 a minute) spreads each window's allowance over the window instead: 300 reads at 0.4 s with 4
in flight take 30 s to send, and a round of four windows ends half a window late. So while the pacer
has slots free now, the run keeps up to ``[google] max_concurrent_reads`` in flight, and a window's
allowance goes in L x latency / ceiling seconds (300 x 0.4 / 64: about 2 s); once the window is
full, a read starts as each slot frees, a window after the answer of the read that held it (the
pacer: Google counted it by then), so the next window's reads go at the pace the last one's were
answered. The pacer still decides every send, so no rolling window ever holds more than the quotas
allow, however many reads are out. Half the ceiling at most are reads with grid data
(:func:`grid_reads_in_flight`), whose answers are the large ones.

A credential's first read goes alone: it fetches the credential's access token, and a read sent
beside it would wait inside its request for that token, its slot counted when it left but its
arrival at Google later by the token's time, which the pacer's 1 s margin may not cover. Once one of
its reads has come back, or its first has been out for ``FIRST_READ_HOLD_SECONDS``, its reads go
together (:func:`first_reads_out`): a read sent then is late at Google only by what the token takes
beyond that, which the margin covers for a token up to 2 s (Google's take a fraction of a second;
a read answered within the margin needs no guess at all: its answer bounds when Google counted it),
and a slow or hanging spreadsheet read first holds its credential back no longer than that. And a window
filled at once keeps a slot free for each values read out: such a read may still send a request
without a slot of its own (a refused range's tab titles), which a full window would refuse (the
pacer's ``spare``).

The latency is measured as the run goes; it tells when a read is taken for hanging, and check-config
uses it for the round's time when the reads, not the quota, set the pace (:func:`round_time_at_latency`).

The run's own thread applies each answer (judges it, records it, saves), one at a time. Reads out
beyond what it takes in as they come back gain nothing: their answers only wait, parsed, in memory
(a batchGet of 7,500 cells holds ~300 KB). So the run also measures its own time per read
(:class:`OwnPace`) and keeps out no more than Little's law says keep it busy
(:func:`reads_worth_keeping_out`): at Google's latency that is the whole ceiling; against a server
that answers in milliseconds, a handful. It applies answers one a step, a read sent between two, so
the reads out never stand idle behind a batch of answers being applied.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager

# Until a run has measured its own: the median time of one request to real Google in gspread's
# recorded traffic (docs/sandbox.md, "Latency"). A run starts from the previous run's mean instead.
TYPICAL_READ_SECONDS = 0.4
# Weight of each new read in the running estimate: about the last ten reads decide it, so it
# follows a change within seconds without jumping at one slow answer.
_WEIGHT = 0.2
# How long a credential's first read goes alone at most (see the module doc): the pacer's margin.
FIRST_READ_HOLD_SECONDS = 1.0
# Reads kept out per read the run's own thread can apply within one read's latency: four times, as
# answers that come together are applied one after another while the next reads wait to be sent
# (with twice, a round of answers that all took 0.1 s went 15 % slower than with no limit; with four
# times, 5 %: tests/unit/engine/test_run_concurrent.py).
_HEADROOM = 4.0
# Reads kept out at least (when the ceiling allows), however fast answers come.
FEWEST_OUT = 4


def grid_reads_in_flight(ceiling: int) -> int:
    """The most reads with grid data in flight at once (a first read's values with the zone, a read
    with Google's details): half the ceiling. Each answer holds every cell of its ranges (and their
    formulas, with details), several times a batchGet's, parsed while it is out; the batchGets of a
    burst of edits go at the whole ceiling, which sends a window's allowance twice as fast."""
    return max(1, ceiling // 2)


def reads_worth_keeping_out(read_seconds: float, own_seconds: float | None, ceiling: int) -> int:
    """The most reads worth having out at once: while one is out for ``read_seconds``, the run's own
    thread applies ``read_seconds / own_seconds`` others (Little's law), four times that for answers
    that come together, from FEWEST_OUT to the ceiling. FEWEST_OUT until the run has measured its own time
    (``own_seconds`` None); the ceiling when that time is nil (a clock that stands still)."""
    fewest = min(ceiling, FEWEST_OUT)
    if own_seconds is None:
        return fewest
    if own_seconds <= 0:
        return ceiling
    return max(fewest, min(ceiling, math.ceil(_HEADROOM * read_seconds / own_seconds)))


def reads_in_flight(per_window: int, ceiling: int) -> int:
    """The most reads a run keeps in flight while its window has room: the ceiling
    (``[google] max_concurrent_reads``), or a whole window's allowance when that is fewer."""
    return max(1, min(ceiling, per_window))


def round_time_at_latency(spreadsheets: int, rate_per_minute: float, read_seconds: float,
                          ceiling: int) -> float:
    """Seconds a round takes when each read takes ``read_seconds``: the quota's bound, or the reads'
    own when even ``reads_in_flight`` of them at a time cannot send a window's allowance within the
    window."""
    in_flight = reads_in_flight(max(1, int(rate_per_minute)), ceiling)
    return max(spreadsheets * 60.0 / rate_per_minute, spreadsheets * read_seconds / in_flight)


def first_reads_out(out: Iterable[tuple[str, float]], answered: Collection[str], now: float,
                    hold_seconds: float) -> dict[str, float]:
    """The credentials to give no read now, each with the seconds until it may have one again: of the
    reads ``out`` (credential, when it was sent), those out for less than ``hold_seconds`` with a
    credential none of whose reads has come back yet (``answered``: the credentials that had one)."""
    held: dict[str, float] = {}
    for credential, started in out:
        left = started + hold_seconds - now
        if credential not in answered and left > 0:
            held[credential] = max(held.get(credential, 0.0), left)
    return held


class LatencyEstimate:
    """A running estimate of one read's duration, and this run's own mean for its stats."""

    def __init__(self, initial: float | None = None) -> None:
        self.value = initial if initial is not None and initial > 0 else TYPICAL_READ_SECONDS
        self.count = 0
        self.total = 0.0

    def add(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        self.value += _WEIGHT * (seconds - self.value)
        self.count += 1
        self.total += seconds

    @property
    def mean(self) -> float | None:
        """This run's mean read time, None before its first read."""
        return self.total / self.count if self.count else None


class OwnPace:
    """The run's own thread's time per read: its time that was not spent waiting (for answers, for
    Drive's feed, for the chat) while reads were out, over the reads it applied in that time, as a
    running estimate. Time with no read out (building a round, asleep) is no read's."""

    def __init__(self, monotonic) -> None:
        self._monotonic = monotonic
        self._mark = monotonic()
        self._waited = 0.0
        self.per_read: float | None = None

    def first_out(self) -> None:
        """A read goes out while none is: the time per read counts from now."""
        self._mark, self._waited = self._monotonic(), 0.0

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Time in the block is not the run's own work."""
        started = self._monotonic()
        try:
            yield
        finally:
            self._waited += self._monotonic() - started

    def applied(self, reads: int) -> None:
        """``reads`` answers were applied: the time since the last ones, less the waits, is theirs."""
        if reads <= 0:
            return
        now = self._monotonic()
        sample = max(0.0, now - self._mark - self._waited) / reads
        self._mark, self._waited = now, 0.0
        if self.per_read is None:
            self.per_read = sample
        else:
            self.per_read += min(1.0, _WEIGHT * reads) * (sample - self.per_read)
