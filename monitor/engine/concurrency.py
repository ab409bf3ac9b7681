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
TYPICAL_LATENCY_SECONDS = 0.4
# Weight of each new read in the running estimate: about the last ten reads decide it, so it
# follows a change within seconds without jumping at one slow answer.
_WEIGHT = 0.2


def reads_in_flight(reads_per_second: float, latency_seconds: float, ceiling: int) -> int:
    """The reads to keep in flight at ``reads_per_second`` and ``latency_seconds``, within [1, ceiling]."""
    wanted = math.ceil(reads_per_second * latency_seconds) + 1
    return max(1, min(ceiling, wanted))


class LatencyEstimate:
    """A running estimate of one read's duration, and this run's own mean for its stats."""

    def __init__(self, initial: float | None = None) -> None:
        self.value = initial if initial is not None and initial > 0 else TYPICAL_LATENCY_SECONDS
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
