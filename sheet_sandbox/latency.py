"""How long Google takes to answer: a latency model fitted to real traffic, applied to every answer.

Real Google answers a Sheets, Drive or token request in about 0.4 s; the sandbox on its own answers in
about 2 ms. A client tested only against the second never meets the first: its timeouts, its pacing
and its deadlines go untried. Every answer of the fake Google API (not the ``/_sandbox/`` control API)
is therefore held for a draw from ``GOOGLE_MODEL`` before it is sent:

- the **body**: a log-normal around a median of 0.38 s;
- the **tail**: 0.6 % of answers take 1.5 to 6 s instead (log-uniform);
- the **size**: every byte of the answer adds time, ~2 s per MB of the sandbox's compact JSON.

Where each figure comes from is said at its constant (and in docs/sandbox.md, "Latency").
``Latency`` holds the sandbox's own switches (model, scale, seed) and counts what it delayed. Draws
come from one ``random.Random(seed)`` under a lock: the same seed gives the same sequence of draws,
the n-th answer getting the n-th draw, whichever thread serves it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from . import switches
from .switches import GOOGLE, ModelSwitch

# -- The figures ------------------------------------------------------------------------------
# Source: gspread's test cassettes (github.com/burnash/gspread, tests/cassettes/), 2,130 requests
# recorded against the live Sheets v4 / Drive v3 APIs 2023-2026, each stamped to the second. Over the
# 143 cassettes of 8 or more interactions, the mean time per interaction (first to last stamp, over
# the gaps) is 0.29 s at p10, 0.40 s at p50 and 0.57 s at p90. The one-second stamps cannot time a
# single answer, so the spread of the cassettes' means is taken as the spread of single answers.

# The cassettes' median, 0.40 s, less the tail's share of each mean (0.6 % x ~3.2 s ~ 0.02 s).
BODY_MEDIAN_SECONDS = 0.38
# A log-normal through p10 0.29 s and p90 0.57 s: ln(0.57 / 0.29) / (2 x 1.2816), 1.2816 being the
# standard normal's 90th percentile.
BODY_SIGMA = 0.26
# 12 of the 1,912 recorded gaps between consecutive interactions were 2 s or more (5 longer pauses,
# 55 to 144 s, are the test suite's own waits and were left out): Drive creates, copies and uploads,
# and the first read of a spreadsheet just created. Public reports tell of the same on reads
# (github.com/burnash/gspread/issues/673: 5-10 s for a five-row sheet; issues/585: "sometimes
# 4s ... sometimes 30-35 seconds"; github.com/nithinmurali/pygsheets/issues/216: random read
# timeouts over 200 sheets a night). The sandbox gives every endpoint the same tail: the stricter
# reading for a client.
TAIL_PROBABILITY = 0.006
# The recorded multi-second gaps were 2 s (9 of them: 1 to 3 s long) and 4 to 5 s (3): a log-uniform
# draw between these bounds puts 29 % of the tail above 4 s, as the recordings do (3 of 12).
TAIL_MIN_SECONDS = 1.5
TAIL_MAX_SECONDS = 6.0
# Larger answers are slower. Google recommends "a 2 MB maximum payload" "to speed up requests"
# (developers.google.com/sheets/api/limits). Measured: a Sheets API read of 120,000 rows x 2 text
# columns took 6.0 s from Apps Script, inside Google's network (qiita.com/shi-suzuki/items/
# d23c6c7e4a0bbe2831af): ~25 us per cell once the base time is taken off. The sandbox's answers are
# compact JSON, ~13 bytes per cell for the generated Stock tabs (Google indents its JSON, ~2.4 times
# the bytes, so the term is counted per cell, not per byte of Google's answer). The recordings'
# answers, all under 4 KB, are too small to show the term (it is under 10 ms for them).
SECONDS_PER_CELL = 25e-6
BYTES_PER_CELL = 13
SECONDS_PER_BYTE = SECONDS_PER_CELL / BYTES_PER_CELL  # ~1.9 s per MB: a 44 KB monitor read adds 85 ms

MAX_SCALE = 100.0  # beyond this a draw (up to ~10 minutes) would only stall the sandbox's clients


@dataclass(frozen=True)
class LatencyModel:
    """A distribution of answer times; pure: draws come from the ``random.Random`` passed in."""

    body_median: float = BODY_MEDIAN_SECONDS
    body_sigma: float = BODY_SIGMA
    tail_probability: float = TAIL_PROBABILITY
    tail_min: float = TAIL_MIN_SECONDS
    tail_max: float = TAIL_MAX_SECONDS
    seconds_per_byte: float = SECONDS_PER_BYTE

    def draw(self, rng: random.Random, body_bytes: int = 0) -> float:
        """Seconds before an answer of ``body_bytes`` bytes is sent (unscaled)."""
        # Three draws per answer whatever the branch, so one answer's outcome never shifts the
        # draws of the answers after it.
        normal = rng.gauss(0.0, 1.0)
        in_tail = rng.random() < self.tail_probability
        position = rng.random()
        if in_tail:
            base = self.tail_min * (self.tail_max / self.tail_min) ** position
        else:
            base = self.body_median * math.exp(self.body_sigma * normal)
        return base + self.seconds_per_byte * max(body_bytes, 0)


GOOGLE_MODEL = LatencyModel()


def parse_setting(value: object) -> tuple[str, float]:
    """(model, scale) for a ``latency=`` argument: "google", "off", or a scale of the Google model.

    A scale of 0 turns latency off like "off" does. Raises ValueError saying what is allowed.
    """
    return switches.parse_setting(value, "latency", MAX_SCALE)


class Latency:
    """The sandbox's latency switches and what it delayed. Thread-safe.

    ``delay(body_bytes)`` is asked once per answer; it returns 0.0 while the model is off or the
    scale is 0 (and then draws nothing and counts nothing).
    """

    def __init__(self, setting: object = GOOGLE, seed: int = 0, model: LatencyModel = GOOGLE_MODEL) -> None:
        self._switch = ModelSwitch(setting, seed, "latency", MAX_SCALE)
        self._distribution = model
        self._random = random.Random(seed)
        self._lock = self._switch.lock
        self._delayed = 0
        self._total_seconds = 0.0

    @property
    def active(self) -> bool:
        with self._lock:
            return self._switch.active

    def delay(self, body_bytes: int) -> float:
        """Seconds to hold the next answer, of ``body_bytes`` bytes; counted when above zero."""
        with self._lock:
            if not self._switch.active:
                return 0.0
            seconds = self._switch.scale * self._distribution.draw(self._random, body_bytes)
            self._delayed += 1
            self._total_seconds += seconds
        return seconds

    def configure(self, *, model: object = None, scale: object = None, seed: object = None) -> None:
        """Change any of model ("google"/"off"), scale (0..MAX_SCALE) and seed (an int).

        All are validated before any is applied (ValueError naming the key). A new seed restarts the
        draws from it; without one the sequence goes on where it was.
        """
        if self._switch.configure(model=model, scale=scale, seed=seed):
            with self._lock:
                self._random = random.Random(self._switch.seed)

    def median_seconds(self, body_bytes: int = 0) -> float:
        """The median delay of a ``body_bytes`` answer as now set (0.0 when off), tail aside."""
        with self._lock:
            if not self._switch.active:
                return 0.0
            model = self._distribution
            return self._switch.scale * (model.body_median + model.seconds_per_byte * body_bytes)

    def describe(self) -> str:
        """One line for people: "Google latency model at 1/10 scale: median 38 ms", or "off"."""
        with self._lock:
            active, scale = self._switch.active, self._switch.scale
        if not active:
            return "no added latency (answers as fast as the sandbox can)"
        return (f"Google latency model at {switches.scale_text(scale)}: median "
                f"{self.median_seconds() * 1000:.0f} ms")

    def snapshot(self) -> dict:
        """Settings and counts, JSON-ready: model, scale, seed, delayed, total_seconds, mean_seconds."""
        with self._lock:
            return {
                **self._switch.settings(),
                "delayed": self._delayed,
                "total_seconds": round(self._total_seconds, 6),
                "mean_seconds": round(self._total_seconds / self._delayed, 6) if self._delayed else 0.0,
            }

    def reset(self) -> None:
        """Forget the counts and restart the draws from the seed (settings stay)."""
        with self._lock:
            self._delayed = 0
            self._total_seconds = 0.0
            self._random = random.Random(self._switch.seed)
