"""When Drive shows a spreadsheet's edit: a change-feed delay after Google's, applied to every edit.

Google applies a Sheets edit at once (a values read sees it) but tells Drive of it later: the edits
of a spreadsheet are coalesced and reach Drive's change feed (``changes.list``) and the file's
``modifiedTime`` about every 3 minutes. A monitor tested against a Drive that reports each edit the
moment it is made never meets that lag. So every edit of a spreadsheet's contents (a Sheets write, a
control-API PUT of an existing spreadsheet) is *held* until its file's next coalescing moment:

- the **moments**: every 180 s per file, at a phase of its own (drawn from the seed and the file's
  id), so files do not all surface together; an edit surfaces at the first moment after it;
- the **tail**: 5 % of a file's moments come late, by a further 2 to 7 minutes (log-uniform), so
  the longest wait is 10 minutes;
- **coalescing**: edits made while one is held join it and surface with it, as one change, with
  the latest edit's modifiedTime.

Creating, deleting, trashing and renaming a file through Drive, and losing or regaining access, are
not content edits and are reported at once, as before. Where each figure comes from is said at its
constant (and in docs/sandbox.md, "Drive's change-feed delay").

Every draw is a hash of (seed, file id, moment), not a step of one random sequence: a file's moments
do not depend on which other files were edited, or in which order the requests came.
``FeedDelay`` holds the sandbox's switches (model, scale, seed), the held edits and counts; the
store hands it each edit and asks it which held edits are due (store.SpreadsheetStore.settle).
"""

from __future__ import annotations

import hashlib
import heapq
import math
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from . import switches
from .switches import GOOGLE, ModelSwitch

# -- The figures ------------------------------------------------------------------------------
# Every 3 minutes. A Google developer advocate, asked for real-time updates of a spreadsheet: Drive
# can "push updates for sheets but changes are coalesced and only sent around every 3 minutes or
# so"; the asker had found that a spreadsheet's ``modifiedTime`` from Drive "is only refreshed every
# ~3min" (github.com/googleapis/google-api-go-client/issues/444, 2020). Drive's push notifications
# for a spreadsheet come "every 3 minutes (i.e. the behavior is as if there was an every 3 minute
# cronjob" (github.com/deathandmayhem/jolly-roger/issues/173, 2022): moments on a fixed beat, not
# 3 minutes after each edit, so an edit waits from 0 to 3 minutes; "sometimes [...] inmediatly but
# sometimes it has minute or two of dealy" (github.com/PipedreamHQ/pipedream/issues/5256, 2023).
PERIOD_SECONDS = 180.0
# Some take longer: a file edited at 07:13:48 still listed with its old modifiedTime 2m17s later,
# the new one 2m39s later, "may be delayed a few minutes, perhaps 10 minutes sometime"
# (github.com/googleapis/google-api-go-client/issues/906, 2021, an .xlsx in Drive). No report says
# how often: the sandbox makes 1 moment in 20 late, by enough to reach those 10 minutes.
TAIL_PROBABILITY = 0.05
TAIL_MIN_SECONDS = 120.0
TAIL_MAX_SECONDS = 420.0  # a late moment's edit waits at most 180 + 420 s: 10 minutes

MAX_SCALE = 10.0  # beyond this a held edit would wait for hours


@dataclass(frozen=True)
class FeedDelayModel:
    """When a file's edits surface; pure: its draws are hashes of (seed, file id, moment)."""

    period: float = PERIOD_SECONDS
    tail_probability: float = TAIL_PROBABILITY
    tail_min: float = TAIL_MIN_SECONDS
    tail_max: float = TAIL_MAX_SECONDS

    def surfaces_at(self, seed: int, file_id: str, edited: float, scale: float = 1.0) -> float:
        """The epoch second at which an edit of ``file_id`` made at ``edited`` is shown: the file's
        first coalescing moment after it, late when that moment is in the tail."""
        period = self.period * scale
        phase = _unit(seed, file_id, "phase") * period

        def moment(beat: int) -> float:  # to the microsecond, as the clock's datetimes are
            return round(phase + beat * period, 6)

        beat = math.floor((edited - phase) / period) + 1
        while moment(beat) <= edited:  # rounded, the beat may land on the edit itself
            beat += 1
        if _unit(seed, file_id, "late", beat) >= self.tail_probability:
            return moment(beat)
        lateness = self.tail_min * (self.tail_max / self.tail_min) ** _unit(seed, file_id, "by", beat)
        return round(moment(beat) + lateness * scale, 6)

    def longest(self) -> float:
        """The longest an edit can wait, unscaled: a whole period, then the longest tail."""
        return self.period + self.tail_max


GOOGLE_FEED_MODEL = FeedDelayModel()


def _unit(seed: int, file_id: str, purpose: str, beat: int = 0) -> float:
    """A number in [0, 1) that only its arguments decide (not Python's salted hash)."""
    digest = hashlib.blake2b(f"{seed}\x00{file_id}\x00{purpose}\x00{beat}".encode(),
                             digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


@dataclass
class HeldEdit:
    """A file's edits Drive does not show yet."""

    file_id: str
    due: datetime  # when they surface
    modified: datetime  # the modifiedTime Drive shows then: the latest edit's
    edited_at: datetime  # when the latest edit was made: the change's time
    first_edit_at: datetime  # when the first was: how long the file waited
    edits: int = 1


def parse_setting(value: object) -> tuple[str, float]:
    """(model, scale) for a ``feed_delay=`` argument: "google", "off", or a scale of Google's."""
    return switches.parse_setting(value, "feed_delay", MAX_SCALE)


class FeedDelay:
    """The sandbox's change-feed delay: its switches, the edits it holds, and counts. Thread-safe.

    ``hold`` takes an edit (False while off: the caller shows it at once); ``due`` hands back the
    held edits whose moment has passed, earliest first (all of them once the delay is off).
    """

    def __init__(self, setting: object = GOOGLE, seed: int = 0,
                 model: FeedDelayModel = GOOGLE_FEED_MODEL) -> None:
        self._switch = ModelSwitch(setting, seed, "feed_delay", MAX_SCALE)
        self._model = model
        self._lock = self._switch.lock
        self._held: dict[str, HeldEdit] = {}
        self._queue: list[tuple[datetime, str]] = []  # (due, file id); stale rows skipped on pop
        self._edits = 0
        self._surfaced = 0
        self._waited_seconds = 0.0

    @property
    def active(self) -> bool:
        with self._lock:
            return self._switch.active

    def surfaces_at(self, file_id: str, edited: datetime) -> datetime | None:
        """When an edit of ``file_id`` made at ``edited`` would surface as now set; None when off."""
        with self._lock:
            return self._surfaces_at(file_id, edited)

    def _surfaces_at(self, file_id: str, edited: datetime) -> datetime | None:
        if not self._switch.active:
            return None
        at = self._model.surfaces_at(self._switch.seed, file_id, edited.timestamp(), self._switch.scale)
        return datetime.fromtimestamp(at, UTC)

    def hold(self, file_id: str, modified: datetime, now: datetime) -> bool:
        """An edit of ``file_id`` at ``now``, after which Drive is to show ``modified``: held until
        its moment (joining the file's held edits, if any) and True; False while the delay is off."""
        with self._lock:
            if not self._switch.active:
                return False
            self._edits += 1
            held = self._held.get(file_id)
            if held is not None:
                held.modified, held.edited_at, held.edits = modified, now, held.edits + 1
                return True
            due = self._surfaces_at(file_id, now)
            self._held[file_id] = HeldEdit(file_id, due, modified, now, now)
            heapq.heappush(self._queue, (due, file_id))
            return True

    def due(self, now: datetime) -> list[HeldEdit]:
        """The held edits whose moment is ``now`` or before (every one while off), earliest first;
        they are no longer held."""
        with self._lock:
            everything = not self._switch.active
            ready: list[HeldEdit] = []
            while self._queue and (everything or self._queue[0][0] <= now):
                due, file_id = heapq.heappop(self._queue)
                held = self._held.get(file_id)
                if held is None or held.due != due:
                    continue  # dropped (its file was deleted) after it was queued
                del self._held[file_id]
                ready.append(held)
                self._surfaced += 1
                self._waited_seconds += max((min(due, now) - held.first_edit_at).total_seconds(), 0.0)
            return ready

    def drop(self, file_id: str) -> None:
        """Forget the file's held edits: it is gone, nothing of it will surface."""
        with self._lock:
            self._held.pop(file_id, None)

    def held(self, file_id: str) -> HeldEdit | None:
        """What Drive does not show yet of the file (a copy), or None."""
        with self._lock:
            held = self._held.get(file_id)
            return None if held is None else replace(held)

    def settled_by(self) -> datetime | None:
        """When every edit held now will have surfaced (None when none is held): a test that moves
        its clock there sees them all in Drive."""
        with self._lock:
            return max((held.due for held in self._held.values()), default=None)

    def longest_seconds(self) -> float:
        """The longest an edit made now can be held (0.0 when off)."""
        with self._lock:
            return self._model.longest() * self._switch.scale if self._switch.active else 0.0

    def configure(self, *, model: object = None, scale: object = None, seed: object = None) -> None:
        """Change any of model ("google"/"off"), scale (0..MAX_SCALE) and seed (an int); all are
        validated before any is applied (ValueError naming the key). Edits already held keep their
        moment; once off, they surface at the next look at Drive."""
        self._switch.configure(model=model, scale=scale, seed=seed)

    def describe(self) -> str:
        """One line for people: "Google's change-feed delay at full scale: ..." or "off"."""
        with self._lock:
            active, scale = self._switch.active, self._switch.scale
        if not active:
            return "no change-feed delay (Drive shows every edit at once)"
        model = self._model
        return (f"Google's change-feed delay at {switches.scale_text(scale)}: a spreadsheet's edits "
                f"reach Drive's change feed and modifiedTime at its next moment, every "
                f"{_seconds(model.period * scale)} per file ({model.tail_probability:.0%} of moments "
                f"late: at most {_seconds(model.longest() * scale)})")

    def snapshot(self) -> dict:
        """Settings and counts, JSON-ready: model, scale, seed, active, period_seconds,
        longest_seconds, edits (held edits), surfaced (changes they made), held (files waiting),
        mean_wait_seconds (from a file's first held edit to its moment)."""
        with self._lock:
            return {
                **self._switch.settings(),
                "period_seconds": self._model.period * self._switch.scale,
                "longest_seconds": self._model.longest() * self._switch.scale,
                "edits": self._edits,
                "surfaced": self._surfaced,
                "held": len(self._held),
                "mean_wait_seconds": round(self._waited_seconds / self._surfaced, 3)
                if self._surfaced else 0.0,
            }

    def clear(self) -> None:
        """Forget every held edit (the store forgets its files)."""
        with self._lock:
            self._held.clear()
            self._queue.clear()

    def reset(self) -> None:
        """Forget the counts (settings stay)."""
        with self._lock:
            self._edits = self._surfaced = 0
            self._waited_seconds = 0.0


def _seconds(seconds: float) -> str:
    if seconds >= 60 and (seconds / 60).is_integer():
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"
