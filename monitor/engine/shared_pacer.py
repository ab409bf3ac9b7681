"""The quota pacer of a runner that shares its credentials' projects with other runners.

``QuotaPacer`` keeps its send log in memory: right for one runner, whose log is the whole truth.
Several runners (hosts, cron lines) reading one round through the same projects would each see only
their own sends, and together send as many times the project quota as there are runners. So this
pacer asks a shared log (``SharedSendLog``: on Redis, ``storage.redis_quota.RedisQuotaLog``) for every
send, every wait and every 429, and keeps its own log only for what it reports (``usage``,
``snapshot``). Its choices are the same as ``QuotaPacer``'s: among the credentials with room in
their own window and their project's, and not paused by a 429, the one with the fewest sends in its
window; waits computed the same way, on sends of every runner.

What stays this runner's own: credentials it retired (a key that does not load here may load on
another host), the short pause after a token refusal (``pause``), its totals. Its ``now`` is its own
clock; the shared log answers in durations and hands back send times on its own clock, so the two
never mix (see the storage module on whose clock the log keeps).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

from monitor.config import Config
from monitor.core.errors import QuotaScope
from monitor.engine.pacer import QuotaLog, QuotaPacer

# How soon to ask again when only the spare room held every credential back: the reads out that
# it is kept for come back within a read's time.
_RECHECK_SECONDS = 0.05


class Admitted(Protocol):
    chosen: int | None
    at: float
    members: tuple[str, ...]
    wait: float


class Ready(Protocol):
    ready_in: float
    paused_in: float


class SharedSendLog(Protocol):
    """Sends and 429 pauses per credential and per project, shared by every runner; ids are
    (credential, project) pairs as Google knows them."""

    def admit(self, candidates: Sequence[tuple[str, str]], now: float, requests: int = 1) -> Admitted: ...

    def readiness(self, candidates: Sequence[tuple[str, str]], now: float,
                  requests: int = 1) -> Sequence[Ready]: ...

    def count(self, candidate: tuple[str, str], now: float, requests: int) -> None: ...

    def refused(self, candidate: tuple[str, str], scope: QuotaScope, now: float, *,
                sent_at: float | None = None, members: Sequence[str] = ()) -> float: ...


class SharedQuotaPacer(QuotaPacer):
    """A ``QuotaPacer`` whose windows and 429 pauses are every runner's (see the module docstring).

    ``identities`` names each credential as Google counts it (its service account's e-mail), so that
    runners whose configs name one key file by different paths still share its window.
    """

    def __init__(self, shared_log: SharedSendLog, credentials: Sequence[str], *,
                 identities: Mapping[str, str] | None = None, **limits) -> None:
        super().__init__(credentials, **limits)
        self.shared_log = shared_log
        self._ids = {c: (identities or {}).get(c, c) for c in self.credentials}
        # Each send's time on the shared log's clock and its members, by (credential, our time), so
        # that a 429 can take exactly that read out of the shared log (a list: one clock reading may
        # grant a credential twice).
        self._granted: dict[tuple[str, float], list[tuple[float, tuple[str, ...]]]] = {}
        # Pauses of this runner's own (a token refused once), not a quota's: other runners' copies of
        # the key may be fine.
        self._local_pauses: dict[str, float] = {}

    @classmethod
    def from_config(cls, config: Config, shared_log: SharedSendLog | None = None,
                    identities: Mapping[str, str] | None = None) -> SharedQuotaPacer:
        if shared_log is None:
            raise ValueError("a shared pacer needs the shared log")
        google = config.google
        return cls(shared_log, [str(path) for path in google.credentials], identities=identities,
                   per_credential=google.read_requests_per_minute,
                   per_project=google.project_read_requests_per_minute,
                   credential_projects={str(p): google.project_of(p) for p in google.credentials})

    def acquire(self, now: float, requests: int = 1, *, exclude: Collection[str] = (),
                spare: Mapping[str, int] | None = None, follow_ups: int = 0) -> tuple[str | None, float]:
        """As ``QuotaPacer.acquire``. A credential's ``spare`` and the ``follow_ups`` are asked of the
        shared log as room for that many more in its window and its project's (one question more,
        before the admission: another runner may take that room meanwhile, which costs the margin,
        never a limit)."""
        now = self._advance(now)
        requests = max(1, min(requests, self._credential_limit, self._project_limit))
        candidates = [c for c in self._candidates(now) if c not in exclude]
        spare = spare or {}
        if (spare or follow_ups) and candidates:
            wanted = [min(requests + follow_ups + spare.get(c, 0), self._credential_limit)
                      for c in candidates]
            roomy = [c for c, room in zip(candidates, wanted, strict=True) if room == requests
                     or self.shared_log.readiness([self._pair(c)], now, room)[0].ready_in <= 0]
            if not roomy:
                return None, min(self._ready_in(now).values(), default=math.inf) or _RECHECK_SECONDS
            candidates = roomy
        if not candidates:
            return None, self._local_wait(now)
        answer = self.shared_log.admit([self._pair(c) for c in candidates], now, requests)
        if answer.chosen is None:
            return None, min(answer.wait, self._local_wait(now))
        chosen = candidates[answer.chosen]
        self._forget_old_grants(now)
        self._granted.setdefault((chosen, now), []).append((answer.at, answer.members))
        self._count(chosen, now + self.margin_seconds, requests)
        self._totals[chosen] += requests
        return chosen, 0.0

    def count_unpaced(self, credential: str, now: float, requests: int) -> None:
        super().count_unpaced(credential, now, requests)
        self.shared_log.count(self._pair(credential), now, requests)

    def answered(self, credential: str, sent_at: float, now: float, requests: int = 1, *,
                 left_at: float | None = None) -> None:
        """Nothing changes: the shared log keeps each send for the window widened by the margin,
        answered or not (an entry moved on Redis would be one more script per read)."""

    def next_ready_in(self, now: float) -> float:
        now = self._advance(now)
        return min(self._ready_in(now).values(), default=math.inf)

    def record_quota_error(self, credential: str, now: float, scope: QuotaScope = QuotaScope.UNKNOWN,
                           *, sent_at: float | None = None) -> float:
        """As ``QuotaPacer.record_quota_error``, on the shared log: the scope Google named is filled
        and paused for every runner, not only this one."""
        if credential not in self._sent:
            raise KeyError(f"unknown credential {credential!r}")
        now = self._advance(now)
        self._quota_errors[credential] += 1
        granted = self._granted.get((credential, sent_at)) or [(None, ())]
        shared_at, members = granted.pop(0)
        if sent_at is not None:  # our own log, for usage and snapshot: Google did not count it
            self._uncount(credential, sent_at)
        paused_for = self.shared_log.refused(self._pair(credential), scope, now,
                                             sent_at=shared_at, members=members)
        names = self.projects[self._project_of[credential]] if scope is QuotaScope.PROJECT else (credential,)
        for name in names:  # what usage() shows; the pause that counts is the shared one
            self._paused_until[name] = max(self._paused_until.get(name, -math.inf), now + paused_for)
        return self.next_ready_in(now)

    def held_by_quota_errors(self, now: float) -> bool:
        now = self._advance(now)
        usable = self.usable
        if not usable:
            return False
        shared = self.shared_log.readiness([self._pair(c) for c in usable], now)
        ready = [max(r.ready_in, self._local_pause_in(c, now)) for c, r in zip(usable, shared, strict=True)]
        soonest = min(range(len(usable)), key=ready.__getitem__)
        return ready[soonest] > 0 and shared[soonest].paused_in > 0

    def restore(self, log: QuotaLog | None) -> None:
        """Nothing to restore: the shared log already holds the last minute of every runner's sends."""

    def _ready_in(self, now: float) -> dict[str, float]:
        usable = self.usable
        shared = self.shared_log.readiness([self._pair(c) for c in usable], now) if usable else []
        return {c: max(r.ready_in, self._local_pause_in(c, now)) for c, r in zip(usable, shared, strict=True)}

    def _candidates(self, now: float) -> list[str]:
        """Usable credentials not paused here, the least used first (then the configured order): the
        shared log picks the one with the fewest sends in its window, the first of these on a tie."""
        order = {c: i for i, c in enumerate(self.credentials)}
        free = [c for c in self.usable if self._local_pause_in(c, now) <= 0]
        return sorted(free, key=lambda c: (self._totals[c], order[c]))

    def _local_pause_in(self, credential: str, now: float) -> float:
        return max(0.0, self._local_pauses.get(credential, -math.inf) - now)

    def _local_wait(self, now: float) -> float:
        waits = [self._local_pause_in(c, now) for c in self.usable]
        return min((w for w in waits if w > 0), default=math.inf)

    def pause(self, credential: str, until: float) -> None:
        super().pause(credential, until)
        self._local_pauses[credential] = max(self._local_pauses.get(credential, -math.inf), until)

    def _pair(self, credential: str) -> tuple[str, str]:
        return self._ids[credential], self._project_of[credential]

    def _forget_old_grants(self, now: float) -> None:
        # A 429 answers a read within its timeout; one a window old no longer needs finding.
        for key in [k for k in self._granted if k[1] + self._window <= now]:
            del self._granted[key]
