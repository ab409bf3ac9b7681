"""Client-side pacing of read requests, so that a healthy run sees no 429 at all.

Google (and the sandbox) count reads per credential and per Google Cloud project over a *rolling*
60-second window. We therefore keep a sliding log of send times per credential and per project (the
credentials are grouped by the project their key files name), and let a request go only if fewer
than the limit were sent in the last window, both for the credential and for its project. That bound
holds for every rolling window by construction. A token bucket would not: with a burst of N and a
refill of N/60 per second, N requests at t=0 and N-1 more by t=59 put 2N-1 in one window; it is only
safe with a burst of 1, which wastes the first minute. The logs cost one float per request in the
window (<= limit).

The server counts a request when it *arrives*, we record it when we *send*; if an old request
arrived late and a new one early, the server could see two requests closer together than we did.
So each send is kept as the latest moment the server may have counted it, and counts for a window
from then: at first its send time plus ``margin_seconds`` (default 1 s), a guess that covers a
request reaching the server up to that late; once its answer is back (:meth:`QuotaPacer.answered`),
no later than that answer, because a server counts a request before it answers it. That bound is
certain whatever the network did, and a request sent after it plus a window arrives after it plus a
window: the slot of a read answered within the margin frees when its answer is a window old, not
the margin after. The margin covers the way to the server, not a wait before the request leaves: a
read whose request began to go only after its grant (every worker busy, the machine short of CPU)
has its guess count from then (``answered``'s ``left_at``), its answer still bounding it.
``reserve`` keeps a few requests per window free for anything else using the same credential (an
admin's ``check ID``).

Pure over time: every call takes ``now`` as float seconds. Any steady timeline works; use epoch
seconds (``clock.time()``) if you persist the logs between runs with :meth:`QuotaPacer.snapshot`,
because the previous run's last minute of requests still counts at the server. A clock that steps
back is treated as standing still. Not thread-safe, and need not be: only the run's own thread asks it
for a slot, before it hands a read to a worker.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from monitor.config import Config
from monitor.core.errors import QuotaScope
from monitor.core.tracking import document

WINDOW_SECONDS = 60.0
DEFAULT_MARGIN_SECONDS = 1.0
ONE_PROJECT = "project"  # the project of every credential of a pacer told of no projects


@document
class QuotaLog:
    """The recent sends a run leaves for the next, whose first minute they still fill: for each, the
    latest moment Google may have counted it (epoch seconds); it counts until ``window_seconds`` after.

    A log that does not say its window (the default) is of send times, each counting for the window
    widened by the margin: the same moments, read as they were written."""

    window_seconds: float = WINDOW_SECONDS + DEFAULT_MARGIN_SECONDS
    sent: dict[str, tuple[float, ...]] = field(default_factory=dict)  # by credential
    projects: dict[str, tuple[float, ...]] = field(default_factory=dict)  # by Google Cloud project
    paused_until: dict[str, float] = field(default_factory=dict)  # by credential, by a 429
    # Sends whose project is not known (a log written before quotas were paced per project): each
    # counts against every project, the reading that cannot underestimate any project's window.
    every_project: tuple[float, ...] = ()


class QuotaPacer:
    """Chooses which credential sends the next read, and when.

    ``acquire(now)`` returns ``(credential, 0.0)`` and counts the send, or ``(None, wait)`` when
    nothing may be sent for ``wait`` seconds. A credential may send when it is under its own limit,
    not paused, and its project is under the project limit. Among those it picks the one with the
    fewest sends in the window, then the fewest overall, then the configured order, so N credentials
    each carry about 1/N of the reads (as far as their projects' limits let them).

    ``credential_projects`` maps each credential to its Google Cloud project; without it all
    credentials share one project (``ONE_PROJECT``), the reading that never paces too fast.
    """

    def __init__(
        self,
        credentials: Sequence[str],
        per_credential: int = 60,
        per_project: int = 300,
        *,
        credential_projects: Mapping[str, str] | None = None,
        window_seconds: float = WINDOW_SECONDS,
        margin_seconds: float = DEFAULT_MARGIN_SECONDS,
        reserve: int = 0,
    ) -> None:
        if not credentials:
            raise ValueError("at least one credential is needed")
        if len(set(credentials)) != len(credentials):
            raise ValueError("credentials must be unique")
        if window_seconds <= 0 or margin_seconds < 0 or reserve < 0:
            raise ValueError("window_seconds must be > 0, margin_seconds and reserve >= 0")
        if min(per_credential, per_project) - reserve < 1:
            raise ValueError(
                f"limits (per credential {per_credential}, per project {per_project}) must exceed "
                f"the reserve ({reserve})"
            )
        if credential_projects is not None and not set(credentials) <= credential_projects.keys():
            missing = sorted(set(credentials) - credential_projects.keys())
            raise ValueError(f"no project given for {', '.join(missing)}")
        self.credentials = tuple(credentials)
        self.per_credential = per_credential
        self.per_project = per_project
        self.window_seconds = window_seconds
        self.margin_seconds = margin_seconds
        self.reserve = reserve
        self._project_of = {c: credential_projects[c] if credential_projects else ONE_PROJECT
                            for c in self.credentials}
        groups: dict[str, list[str]] = {}
        for credential in self.credentials:
            groups.setdefault(self._project_of[credential], []).append(credential)
        self.projects: Mapping[str, tuple[str, ...]] = {p: tuple(cs) for p, cs in groups.items()}
        self._window = window_seconds + margin_seconds
        self._credential_limit = per_credential - reserve
        self._project_limit = per_project - reserve
        # Each send as the latest moment Google may have counted it (see the module doc), sorted: it
        # counts until a window after that.
        self._sent: dict[str, list[float]] = {c: [] for c in self.credentials}
        self._project_sent: dict[str, list[float]] = {p: [] for p in self.projects}
        self._paused_until: dict[str, float] = {}
        # When a 429 last filled a window, by (scope, credential or project): a read sent after it
        # and refused again shows the others' share growing (see record_quota_error).
        self._filled_at: dict[tuple[QuotaScope, str], float] = {}
        self._totals: Counter[str] = Counter()
        self._quota_errors: Counter[str] = Counter()
        self._latest = -math.inf
        self._retired: set[str] = set()  # credentials that cannot read at all (for this run)

    @classmethod
    def from_config(cls, config: Config) -> QuotaPacer:
        """The pacer for the config's credentials, grouped by their projects, and read quotas."""
        google = config.google
        return cls(
            [str(path) for path in google.credentials],
            per_credential=google.read_requests_per_minute,
            per_project=google.project_read_requests_per_minute,
            credential_projects={str(path): google.project_of(path) for path in google.credentials},
        )

    @property
    def window_with_margin(self) -> float:
        """The window sends are counted in: the quota's, widened by the margin."""
        return self._window

    def project_of(self, credential: str) -> str:
        """The project whose quota ``credential``'s reads count against (KeyError if unknown)."""
        return self._project_of[credential]

    def retire(self, credential: str) -> None:
        """Give out ``credential`` no more: its key does not load, or Google refuses it for good."""
        self._retired.add(credential)

    def count_unpaced(self, credential: str, now: float, requests: int) -> None:
        """``requests`` more were sent with ``credential`` and answered by ``now`` without a slot of
        their own (a refusal's explanation, asked on the refused read's slot): they fill the same
        windows, counted by Google by ``now`` at the latest."""
        now = self._advance(now)
        self._count(credential, now, requests)
        self._totals[credential] += requests

    def answered(self, credential: str, sent_at: float, now: float, requests: int = 1, *,
                 left_at: float | None = None) -> None:
        """The read granted to ``credential`` at ``sent_at`` (its ``requests`` slots) was answered by
        ``now``: Google counted it by then, so its slots free a window after ``now`` if that is
        sooner than the margin's guess (a read answered within the margin). ``left_at``: when its
        request began to go, if later than the grant (a worker busy, a machine short of CPU): the
        margin's guess counts from then, as it covers the way to Google, not the wait before it;
        capped by the answer all the same. A send not in the logs (a 429 took it out, or it aged
        out) is left alone."""
        now = self._advance(now)
        guessed = sent_at + self.margin_seconds
        counted = min(now, max(sent_at, left_at if left_at is not None else sent_at) + self.margin_seconds)
        if counted == guessed:
            return
        for log in (self._sent[credential], self._project_sent[self._project_of[credential]]):
            for _ in range(requests):
                if not _take(log, guessed):
                    break
                bisect.insort(log, counted)

    def _count(self, credential: str, at: float, requests: int) -> None:
        """``requests`` sends of ``credential`` that Google counts by ``at`` at the latest."""
        for log in (self._sent[credential], self._project_sent[self._project_of[credential]]):
            for _ in range(requests):
                bisect.insort(log, at)

    def _uncount(self, credential: str, sent_at: float) -> None:
        """The send granted at ``sent_at`` leaves the logs: Google did not count it (a 429)."""
        for log in (self._sent[credential], self._project_sent[self._project_of[credential]]):
            _take(log, sent_at + self.margin_seconds)

    def pause(self, credential: str, until: float) -> None:
        """Give out ``credential`` again only from ``until`` (epoch seconds)."""
        self._paused_until[credential] = max(self._paused_until.get(credential, -math.inf), until)

    @property
    def usable(self) -> tuple[str, ...]:
        """The credentials not retired, in the configured order."""
        return tuple(c for c in self.credentials if c not in self._retired)

    def acquire(self, now: float, requests: int = 1, *, exclude: Collection[str] = (),
                spare: Mapping[str, int] | None = None, follow_ups: int = 0) -> tuple[str | None, float]:
        """Take ``requests`` send slots of one credential at ``now`` if any credential has them (`check
        ID` of a spreadsheet whose dates need its time zone sends two); else say how long to wait.
        A count above a limit is taken as the limit: one credential could never send it at once.
        ``exclude``: credentials not to give out now, whatever their room (the run's credentials
        whose first read, which fetches their token, is still out); the wait is then the others'
        (infinite when there are none: the caller waits for what it has out). ``spare``: slots to
        leave free beside the ones taken, by credential (and their sum in its project's window):
        requests that reads already out may still send without a slot of their own (a refused
        range's tab titles, :meth:`count_unpaced`), which would otherwise meet a full window.
        ``follow_ups``: as many the read granted now may send so, left free beside its own slots in
        the chosen credential's windows: a read that takes a window's last slot would otherwise
        send its explanation into a full window."""
        now = self._advance(now)
        requests = max(1, min(requests, self._credential_limit, self._project_limit))
        room = requests + follow_ups
        ready = {c: at for c, at in self._ready_at_by_credential(now, room, spare or {}).items()
                 if c not in exclude}
        soonest = min(ready.values(), default=math.inf)  # none at all once every one is retired
        if soonest > now:
            return None, soonest - now
        order = {c: i for i, c in enumerate(self.credentials)}
        free = [c for c in ready if ready[c] <= now]
        chosen = min(free, key=lambda c: (len(self._sent[c]), self._totals[c], order[c]))
        self._count(chosen, now + self.margin_seconds, requests)
        self._totals[chosen] += requests
        return chosen, 0.0

    def acquire_with_room(self, now: float, requests: int = 1, follow_ups: int = 0, *,
                          exclude: Collection[str] = (), spare: Mapping[str, int] | None = None
                          ) -> tuple[str | None, float, int]:
        """As :meth:`acquire`, with room kept for ``follow_ups`` when a credential has it, else
        without them when a window's last slots are all that is free: the read goes all the same,
        and must not send them (an idle slot in every window would cost more than the rare refusal
        told without its explanation). Returns the follow-ups whose room was kept, beside
        :meth:`acquire`'s answer."""
        credential, wait = self.acquire(now, requests, exclude=exclude, spare=spare, follow_ups=follow_ups)
        if credential is None and follow_ups:
            follow_ups = 0
            credential, wait = self.acquire(now, requests, exclude=exclude, spare=spare)
        return credential, wait, follow_ups

    def next_ready_in(self, now: float) -> float:
        """Seconds until :meth:`acquire` would grant a slot (0.0 if now); takes nothing."""
        now = self._advance(now)
        return max(0.0, min(self._ready_at_by_credential(now).values(), default=math.inf) - now)

    def record_quota_error(self, credential: str, now: float, scope: QuotaScope = QuotaScope.UNKNOWN,
                           *, sent_at: float | None = None) -> float:
        """A 429 came back for ``credential``: wait as long as the quota it names needs, no longer.

        ``scope`` says whose quota Google says is full (``core.errors.quota_scope``). Of the sends in
        that window we know only ours; the others (another tool, an admin's ``check``) are taken to
        fill the rest of it, sent just now: the latest they can have been, so no slot of theirs is
        taken for free. So the wait ends when our oldest send in the window ages out, and then one
        read goes per send of ours that ages out, until the others have aged out too: the window's
        limit as Google showed it, rather than a burst at the configured one into the next 429.

        - USER: the credential's window; only it waits.
        - PROJECT: its project's window; every credential of the project waits, the other projects'
          carry on (their quotas are their own).
        - UNKNOWN (an HTML page, a body naming no limit): the credential waits a full window, after
          which nothing older can still count.

        The refused read itself (sent at ``sent_at``) leaves the logs: Google did not count it, and
        keeping it would make the others' share look smaller by one, for a window.

        A read refused although it was sent (``sent_at``) after the same window was filled less
        than a window ago went into the window as Google had shown it: the others' share is growing
        faster than ours ages out, and guessing again would only meet more 429s. Then the scope
        waits a full window. (Reads already in flight when a window is filled are refused alike,
        and change nothing.)

        The wait is also kept as the credentials' ``paused_until``, carried to the next run with the
        sends, so that a run held back by it knows why (:meth:`held_by_quota_errors`).
        Returns :meth:`next_ready_in`: how long until this credential (or another) may send again.
        """
        if credential not in self._sent:
            raise KeyError(f"unknown credential {credential!r}")
        now = self._advance(now)
        self._quota_errors[credential] += 1
        project = self._project_of[credential]
        if sent_at is not None:  # Google did not count the refused read: neither do we
            self._uncount(credential, sent_at)
        if scope is QuotaScope.PROJECT:
            until = self._fill(self._project_sent[project], self._project_limit, (scope, project), now,
                               sent_at)
            paused = self.projects[project]
        elif scope is QuotaScope.USER:
            until = self._fill(self._sent[credential], self._credential_limit, (scope, credential), now,
                               sent_at)
            paused = (credential,)
        else:
            until, paused = now + self._window, (credential,)
        for name in paused:
            self._paused_until[name] = max(self._paused_until.get(name, -math.inf), until)
        return self.next_ready_in(now)

    def _fill(self, log: list[float], limit: int, key: tuple[QuotaScope, str], now: float,
              sent_at: float | None) -> float:
        """Fill the window Google said is full with the others' sends, taken as sent at ``now`` (and
        counted by Google up to the margin later, as our own sends are guessed); when its first slot
        frees (a whole window on if it was refused again: see above)."""
        filled = self._filled_at.get(key, -math.inf)
        again = sent_at is not None and sent_at > filled > now - self._window
        # now + margin >= every entry (each is at most its send + margin): the log stays sorted.
        log.extend([now + self.margin_seconds] * max(0, limit - len(log)))
        self._filled_at[key] = now
        return now + self._window if again else self._ready_at(log, limit, now)

    def held_by_quota_errors(self, now: float) -> bool:
        """True when nothing may be sent at ``now`` and the credential free soonest waits on a 429
        (this run's or the last run's): what makes a run that read nothing a degraded one."""
        now = self._advance(now)
        ready = self._ready_at_by_credential(now)
        if not ready:
            return False
        soonest = min(ready, key=ready.__getitem__)
        return ready[soonest] > now and self._paused_until.get(soonest, -math.inf) > now

    def usage(self) -> dict[str, Any]:
        """Counts since this pacer was built (JSON-ready, for run stats and benchmarks)."""
        return {
            "sent": sum(self._totals.values()),
            "quota_errors": sum(self._quota_errors.values()),
            "credentials": {
                c: {
                    "project": self._project_of[c],
                    "sent": self._totals[c],
                    "quota_errors": self._quota_errors[c],
                    "paused_until": self._paused_until.get(c),
                }
                for c in self.credentials
            },
            "projects": {
                p: {"sent": sum(self._totals[c] for c in members),
                    "quota_errors": sum(self._quota_errors[c] for c in members)}
                for p, members in self.projects.items()
            },
        }

    def snapshot(self, now: float) -> QuotaLog:
        """The sends and pauses still mattering at ``now``, to carry into the next run."""
        now = self._advance(now)
        return QuotaLog(
            window_seconds=self.window_seconds,
            sent={c: tuple(self._sent[c]) for c in self.credentials},
            projects={p: tuple(log) for p, log in self._project_sent.items()},
            paused_until={c: t for c, t in self._paused_until.items() if t > now},
        )

    def restore(self, log: QuotaLog | None) -> None:
        """Load what :meth:`snapshot` saved (same time base). Unknown credentials are ignored for
        per-credential limits; their sends still count against their project when it is one of
        ours (the project's own log holds them). Sends of projects no longer configured are
        ignored: that quota is not ours. Sends of no known project count against every project. A log
        kept over a longer window (one of send times, widened by the margin) is read as the moments
        its sends stop counting, less this pacer's window."""
        if log is None:
            return
        shift = log.window_seconds - self.window_seconds
        for c, times in log.sent.items():
            if c in self._sent:
                self._sent[c] = sorted(t + shift for t in times)
        for p in self._project_sent:
            self._project_sent[p] = sorted(t + shift for t in (*log.projects.get(p, ()), *log.every_project))
        for c, until in log.paused_until.items():
            if c in self._sent:
                self._paused_until[c] = until
        # The previous run's clock read at least its last send (each kept up to the margin after it).
        latest = [t - self.margin_seconds for sent in self._logs() for t in sent]
        self._latest = max(latest, default=self._latest)

    def _logs(self) -> Iterable[list[float]]:
        return (*self._sent.values(), *self._project_sent.values())

    def _advance(self, now: float) -> float:
        now = max(float(now), self._latest)
        self._latest = now
        for log in self._logs():
            # Same expression as _ready_at, so float rounding cannot disagree about the boundary.
            aged = 0
            while aged < len(log) and log[aged] + self.window_seconds <= now:
                aged += 1
            del log[:aged]
        return now

    def _ready_at_by_credential(self, now: float, requests: int = 1, spare: Mapping[str, int] | None = None
                                ) -> dict[str, float]:
        """When each credential may send ``requests`` and leave ``spare`` free: its own window and
        pause, and its project's."""
        spare = spare or {}
        kept: Counter[str] = Counter()
        for credential, count in spare.items():
            if credential in self._project_of:
                kept[self._project_of[credential]] += count
        projects = {p: self._ready_at(log, self._project_limit, now,
                                      min(requests + kept[p], self._project_limit))
                    for p, log in self._project_sent.items()}
        return {c: max(self._credential_ready_at(c, now, requests + spare.get(c, 0)),
                       projects[self._project_of[c]])
                for c in self.usable}

    def _credential_ready_at(self, credential: str, now: float, requests: int) -> float:
        requests = min(requests, self._credential_limit)
        ready = self._ready_at(self._sent[credential], self._credential_limit, now, requests)
        return max(ready, self._paused_until.get(credential, -math.inf))

    def _ready_at(self, log: list[float], limit: int, now: float, requests: int = 1) -> float:
        # A send counted by c stops counting at c + window; ``requests`` fit once at most limit -
        # requests sends still count (requests <= limit: acquire sees to it).
        excess = len(log) + requests - 1 - limit
        if excess < 0:
            return now
        return log[excess] + self.window_seconds


def _take(log: list[float], at: float) -> bool:
    """Take one entry ``at`` out of the sorted ``log``; False when it holds none."""
    index = bisect.bisect_left(log, at)
    if index < len(log) and log[index] == at:
        del log[index]
        return True
    return False


# -- the arithmetic of a round (check-config's plan) --------------------------------------------------

ProjectSizes = Mapping[str, int] | Sequence[int] | int  # credentials per project; an int: one project


def _sizes(projects: ProjectSizes) -> list[int]:
    if isinstance(projects, int):
        sizes = [projects]
    else:
        sizes = list(projects.values()) if isinstance(projects, Mapping) else list(projects)
    if not sizes or min(sizes) < 1:
        raise ValueError("at least one credential is needed, and every project needs one")
    return sizes


def sustained_rate(projects: ProjectSizes, per_credential: int = 60, per_project: int = 300) -> int:
    """Reads per window the credentials sustain: for each project the lower of its credentials'
    quotas together and its own quota, summed over the projects."""
    return sum(min(size * per_credential, per_project) for size in _sizes(projects))


def round_estimate(
    spreadsheets: int,
    projects: ProjectSizes,
    per_credential: int = 60,
    per_project: int = 300,
    *,
    window_seconds: float = WINDOW_SECONDS,
) -> float:
    """Seconds a round of one read per spreadsheet needs at the sustained quota rate.

    700 sheets with one credential at 60/min take 700 s (11.7 min), with three in one project 233 s
    (3.9 min); ten credentials in one project are capped at 300/min (140 s), five in each of two
    projects are not (70 s). The first window's burst makes a real round up to one window shorter;
    this is the figure to plan with.
    """
    return spreadsheets * window_seconds / sustained_rate(projects, per_credential, per_project)


@dataclass(frozen=True)
class Growth:
    """Credentials to add so that a round fits: to existing projects, and in new projects."""

    added: Mapping[str, int]  # existing project -> credentials to add to it
    new_projects: tuple[int, ...] = ()  # the credentials of each new project

    @property
    def credentials(self) -> int:
        return sum(self.added.values()) + sum(self.new_projects)


def credentials_needed(
    spreadsheets: int,
    within_seconds: float,
    projects: Mapping[str, int],
    per_credential: int = 60,
    per_project: int = 300,
    *,
    closed: Iterable[str] = (),
    window_seconds: float = WINDOW_SECONDS,
) -> Growth:
    """Which credentials to add so that a round finishes within ``within_seconds``, given the
    credentials each project has now: first to projects whose quota has room (in their order; not to
    those ``closed``, groups that are no known project), then in new projects, each filled up to its
    quota. Nothing to add: an empty Growth.

    The fewest credentials when the project quota is a multiple of the per-credential quota (Google's
    defaults, 300 and 60); otherwise a project's last credential uses only part of its quota, and the
    answer may be a credential or two above the least.
    """
    if within_seconds <= 0:
        raise ValueError("within_seconds must be > 0")
    # Reads per window still missing; rounded so that float noise cannot ask for one more credential.
    deficit = round(spreadsheets * window_seconds / within_seconds
                    - sum(min(n * per_credential, per_project) for n in projects.values()), 6)
    added: dict[str, int] = {}
    closed = set(closed)
    for name, size in projects.items():
        room = per_project - min(size * per_credential, per_project)
        if deficit <= 0 or room <= 0 or name in closed:
            continue
        count = min(math.ceil(room / per_credential), math.ceil(deficit / per_credential))
        added[name] = count
        deficit -= min(count * per_credential, room)
    if deficit <= 0:
        return Growth(added)
    full, rest = divmod(deficit, per_project)
    new = [math.ceil(per_project / per_credential)] * int(full)
    if rest > 0:
        new.append(math.ceil(rest / per_credential))
    return Growth(added, tuple(new))
