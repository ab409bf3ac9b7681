"""Google's read quotas paced across every runner that shares them, through one Redis.

Google counts reads per credential and per Cloud project over a rolling minute, whoever sends them:
two runners sharing a project each pacing on its own would together send twice its quota. So on
Redis the send log is Redis's: one sorted set per scope (``<quota prefix>:sent:credential:<id>``,
``<quota prefix>:sent:project:<id>``), a member per send scored by its time, and one Lua script
(:data:`_ADMIT`) that gives a send to the first candidate credential whose own window and whose
project's both have room and that no 429 pauses, recording it in both at once, or answers when the
soonest slot frees. Scripts run one at a time in Redis, so no two runners can both take a window's
last slot. A 429's pause is a key per scope (``<quota prefix>:paused:<scope>:<id>`` holding the time
it ends), so one runner's refusal pauses that scope for all of them.

**Whose clock.** Redis's own (``TIME``, read inside each script). Runners on different hosts have
different clocks: a host two seconds behind would record its sends two seconds early, and they would
leave everyone's window two seconds before Google's, which the one-second margin does not cover.
One clock for every runner makes the windows agree with each other; Google's clock is a third one,
which the margin covers as it does for one runner (a round trip to Redis is a millisecond). The
caller's ``now`` is used instead only when asked (``server_time=False``): tests move a ManualClock,
and the same scripts then run on its timeline. Answers are durations ("wait 3.2 s") and send times
on the log's own timeline, which the caller hands back untouched, so the two clocks never mix.

Every key expires by itself shortly after the window it serves (a send's set a window after its
newest send, a pause when it ends): nothing is ever cleaned by hand, and a runner killed at any
moment leaves only sends that will age out. Expiry is real time, the scores are the log's: on a
ManualClock the keys simply outlive the test a little, and the scripts ignore what has aged out.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count

from monitor.core.errors import QuotaScope
from monitor.storage.redis_store import RedisLocation, talking_to

# A key outlives the moment it stops mattering by this long, so that a runner whose clock or whose
# Redis call lags a little still finds it.
_EXPIRY_SLACK_SECONDS = 5.0

# Shared by the scripts: the log's clock (ARGV now, or Redis's TIME when that is empty), and when
# ``requests`` more sends fit in a scope: a send at s counts until s + window, so they fit once at
# most limit - requests still count. Trimming what aged out only saves memory: the sends still in
# the set are the newest, so the entry the index points at is the same with or without the old ones.
_COMMON = """
local function clock(arg)
  if arg ~= '' then return tonumber(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function ready_at(key, limit, requests, now, window)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local excess = redis.call('ZCARD', key) + requests - 1 - limit
  if excess < 0 then return now end
  local entry = redis.call('ZRANGE', key, excess, excess, 'WITHSCORES')
  return tonumber(entry[2]) + window
end
local function paused_until(key)
  local ends = redis.call('GET', key)
  if ends then return tonumber(ends) end
  return -math.huge
end
local function add(keys, now, requests, token, window)
  for _, key in ipairs(keys) do
    for i = 1, requests do redis.call('ZADD', key, now, token .. ':' .. i) end
    redis.call('PEXPIRE', key, math.ceil((window + tonumber(ARGV[#ARGV])) * 1000))
  end
end
local function num(x) return string.format('%.17g', x) end
"""

# KEYS: per candidate, in order of preference: its sends, its project's sends, its pause, its
# project's pause. ARGV: now, window, credential limit, project limit, requests, member token, slack.
# Admits the candidate with room that has the fewest sends in its own window (the first such in
# the given order on a tie) and records its sends; returns {its number from 1, now, 0} or
# {0, now, seconds ends the soonest candidate is ready}.
_ADMIT = _COMMON + """
local now, window = clock(ARGV[1]), tonumber(ARGV[2])
local limit, project_limit, requests = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local best, fewest, soonest = 0, math.huge, math.huge
for i = 1, #KEYS / 4 do
  local sent, project, pause, project_pause = KEYS[4 * i - 3], KEYS[4 * i - 2], KEYS[4 * i - 1], KEYS[4 * i]
  local ready = math.max(ready_at(sent, limit, requests, now, window),
                         ready_at(project, project_limit, requests, now, window),
                         paused_until(pause), paused_until(project_pause))
  if ready <= now then
    local in_window = redis.call('ZCARD', sent)
    if in_window < fewest then best, fewest = i, in_window end
  elseif ready < soonest then soonest = ready end
end
if best == 0 then return {0, num(now), num(soonest - now)} end
add({KEYS[4 * best - 3], KEYS[4 * best - 2]}, now, requests, ARGV[6], window)
return {best, num(now), '0'}
"""

# KEYS and ARGV[1..5] as _ADMIT's; takes nothing. Returns {now, then per candidate: when it is
# ready, when its pauses end}.
_READY = _COMMON + """
local now, window = clock(ARGV[1]), tonumber(ARGV[2])
local limit, project_limit, requests = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local answer = {num(now)}
for i = 1, #KEYS / 4 do
  local pause = math.max(paused_until(KEYS[4 * i - 1]), paused_until(KEYS[4 * i]))
  local ready = math.max(ready_at(KEYS[4 * i - 3], limit, requests, now, window),
                         ready_at(KEYS[4 * i - 2], project_limit, requests, now, window), pause)
  table.insert(answer, num(ready))
  table.insert(answer, num(pause))
end
return answer
"""

# KEYS: the credential's sends, its project's. ARGV: now, window, requests, member token, slack.
# Sends made without a slot of their own (a refusal's explanation): they fill the same windows.
_COUNT = _COMMON + """
local now = clock(ARGV[1])
add({KEYS[1], KEYS[2]}, now, tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[2]))
return num(now)
"""

# A 429. KEYS: the credential's sends, its project's, the sends of the scope Google named (one of
# those two), that scope's pause, when that scope was last filled. ARGV: now, window, the scope's
# limit, '1' to fill the scope (USER, PROJECT) or '0' (a refusal naming no scope), when the refused
# read was sent ('' if not known), member token, then the refused read's members, then slack.
# See QuotaPacer.record_quota_error for the reasoning; this is its arithmetic on the shared log.
# Returns {now, when the scope's pause ends}.
_REFUSED = _COMMON + """
local now, window, limit = clock(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
for i = 7, #ARGV - 1 do
  redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('ZREM', KEYS[2], ARGV[i])
end
local ends = now + window
if ARGV[4] == '1' then
  local filled = redis.call('GET', KEYS[5])
  filled = filled and tonumber(filled) or -math.huge
  local sent_at = ARGV[5] ~= '' and tonumber(ARGV[5]) or -math.huge
  local again = sent_at > filled and filled > now - window
  -- The others' sends, taken as made just now (the latest they can have been) fill the window.
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window)
  for i = 1, limit - redis.call('ZCARD', KEYS[3]) do
    redis.call('ZADD', KEYS[3], now, ARGV[6] .. ':others:' .. i)
  end
  redis.call('PEXPIRE', KEYS[3], math.ceil((window + tonumber(ARGV[#ARGV])) * 1000))
  redis.call('SET', KEYS[5], num(now), 'PX', math.ceil(window * 1000))
  if not again then ends = ready_at(KEYS[3], limit, 1, now, window) end
end
ends = math.max(ends, paused_until(KEYS[4]))
redis.call('SET', KEYS[4], num(ends), 'PX', math.ceil((ends - now + tonumber(ARGV[#ARGV])) * 1000))
return {num(now), num(ends)}
"""


@dataclass(frozen=True)
class Admission:
    """What :meth:`RedisQuotaLog.admit` answered: the candidate given the send (its index), when on
    the log's clock and the members that record it; or, none, the seconds until one is ready."""

    chosen: int | None
    at: float
    members: tuple[str, ...] = ()
    wait: float = 0.0


@dataclass(frozen=True)
class Readiness:
    """Seconds until a candidate may send (0.0: now), and until a 429's pause on it ends."""

    ready_in: float
    paused_in: float


Candidate = tuple[str, str]  # (credential's id, its project's id)


class RedisQuotaLog:
    """The send log and 429 pauses of every runner pacing the same credentials and projects.

    Ids are what Google counts by: a credential's service account, a project's id. Keys live under
    ``prefix``; every monitor sharing the projects must use the same one. Limits and window are the
    pacer's (limits less its reserve, window with its margin).
    """

    def __init__(self, location: RedisLocation, *, prefix: str, window: float, credential_limit: int,
                 project_limit: int, server_time: bool = True) -> None:
        self.location = location
        self.prefix = prefix
        self.window = window
        self.credential_limit = credential_limit
        self.project_limit = project_limit
        self.server_time = server_time
        client = location.client
        self._admit = client.register_script(_ADMIT)
        self._ready = client.register_script(_READY)
        self._count = client.register_script(_COUNT)
        self._refused = client.register_script(_REFUSED)
        # Members must be unique across runners: a random name for this log, a counter per send.
        self._name = secrets.token_hex(6)
        self._tokens = count()

    def key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    def admit(self, candidates: Sequence[Candidate], now: float, requests: int = 1) -> Admission:
        """Give ``requests`` sends to one of ``candidates`` (in order of preference) and record them,
        or say how long until the soonest can have them."""
        if not candidates:
            raise ValueError("no candidate credential")
        token = self._token()
        answer = self._call(self._admit, self._candidate_keys(candidates),
                            [self._now(now), self.window, self.credential_limit, self.project_limit,
                             requests, token, _EXPIRY_SLACK_SECONDS])
        index, at, wait = int(answer[0]), float(answer[1]), float(answer[2])
        if index == 0:
            return Admission(None, at, wait=max(0.0, wait))
        return Admission(index - 1, at, tuple(f"{token}:{i}" for i in range(1, requests + 1)))

    def readiness(self, candidates: Sequence[Candidate], now: float, requests: int = 1) -> list[Readiness]:
        """Each candidate's :class:`Readiness`; takes nothing."""
        if not candidates:
            return []
        answer = self._call(self._ready, self._candidate_keys(candidates),
                            [self._now(now), self.window, self.credential_limit, self.project_limit,
                             requests, _EXPIRY_SLACK_SECONDS])
        at = float(answer[0])
        times = [float(value) for value in answer[1:]]
        return [Readiness(max(0.0, ready - at), max(0.0, pause - at))
                for ready, pause in zip(times[::2], times[1::2], strict=True)]

    def count(self, candidate: Candidate, now: float, requests: int) -> None:
        """``requests`` sent with ``candidate`` without a slot of their own."""
        credential, project = candidate
        sent = [self.key("sent", "credential", credential), self.key("sent", "project", project)]
        self._call(self._count, sent,
                   [self._now(now), self.window, requests, self._token(), _EXPIRY_SLACK_SECONDS])

    def refused(self, candidate: Candidate, scope: QuotaScope, now: float, *,
                sent_at: float | None = None, members: Sequence[str] = ()) -> float:
        """A 429 for ``candidate``'s read (``members``, sent at ``sent_at`` on the log's clock): the
        read leaves the log, the scope Google named is filled and paused for every runner; returns the
        seconds until that pause ends."""
        credential, project = candidate
        sent = [self.key("sent", "credential", credential), self.key("sent", "project", project)]
        if scope is QuotaScope.PROJECT:
            kind, name, limit, scope_sent = "project", project, self.project_limit, sent[1]
        else:
            kind, name, limit, scope_sent = "credential", credential, self.credential_limit, sent[0]
        fill = "1" if scope in (QuotaScope.USER, QuotaScope.PROJECT) else "0"
        keys = [*sent, scope_sent, self.key("paused", kind, name), self.key("filled", kind, name)]
        shown_sent_at = "" if sent_at is None else repr(sent_at)
        answer = self._call(self._refused, keys, [self._now(now), self.window, limit, fill, shown_sent_at,
                                                  self._token(), *members, _EXPIRY_SLACK_SECONDS])
        return max(0.0, float(answer[1]) - float(answer[0]))

    def _candidate_keys(self, candidates: Sequence[Candidate]) -> list[str]:
        return [key for credential, project in candidates for key in (
            self.key("sent", "credential", credential), self.key("sent", "project", project),
            self.key("paused", "credential", credential), self.key("paused", "project", project))]

    def _now(self, now: float) -> str:
        if not math.isfinite(now):
            raise ValueError(f"not a time: {now!r}")
        return "" if self.server_time else repr(float(now))

    def _token(self) -> str:
        return f"{self._name}:{next(self._tokens)}"

    def _call(self, script, keys: list[str], args: list) -> list:
        # Not a save: a Redis lost here costs no state, and the run stops with the store's one line.
        with talking_to(self.location):
            return script(keys=keys, args=args)
