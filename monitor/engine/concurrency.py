"""How many reads to keep in flight: enough for the quota at the latency Google shows, no more.

Little's law: a run that sends ``rate`` reads a second, each taking ``latency`` seconds, has
``rate * latency`` of them in flight on average. Fewer, and the quota goes unused while the run waits
on the network (one at a time at 0.4 s a read, 700 reads are 4.7 minutes of waiting, whatever the
quota); more only queue at the pacer. One spare keeps the next read ready the moment a quota slot
frees. The latency is measured as the run goes, so spreadsheets that hang (each one a worker held
for its whole timeout) raise the mean and with it the number of workers.
"""

from __future__ import annotations

import math

# Until a run has measured its own: the median time of one request to real Google in gspread's
# recorded traffic (docs/sandbox.md, "Latency"). A run starts from the previous run's mean instead.
TYPICAL_READ_SECONDS = 0.4
# Weight of each new read in the running estimate: about the last ten reads decide it, so it
# follows a change within seconds without jumping at one slow answer.
_WEIGHT = 0.2


def reads_in_flight(reads_per_second: float, read_seconds: float, ceiling: int) -> int:
    """The reads to keep in flight at ``reads_per_second`` when each takes ``read_seconds``: enough
    that the quota, not the wait for answers, sets the pace, never above ``ceiling``
    (``[google] max_concurrent_reads``)."""
    return max(1, min(ceiling, math.ceil(reads_per_second * read_seconds) + 1))


def round_time_at_latency(spreadsheets: int, rate_per_minute: float, read_seconds: float,
                          ceiling: int) -> float:
    """Seconds a round takes when each read takes ``read_seconds``: the quota's bound, or the reads'
    own if ``reads_in_flight`` at that latency cannot keep up with the quota."""
    in_flight = reads_in_flight(rate_per_minute / 60.0, read_seconds, ceiling)
    return max(spreadsheets * 60.0 / rate_per_minute, spreadsheets * read_seconds / in_flight)


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
