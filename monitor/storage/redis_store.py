"""The Redis backend: the state in one Redis hash per store, locks as leased keys.

Every key lives under a prefix (``[state] prefix``), so several monitors, or the tests, share one
Redis without meeting: store ``name`` is the hash ``<prefix>:store:<name>``, lock ``name`` is the
string ``<prefix>:lock:<name>``, and ``<prefix>:generation`` is a random id written with the first
change, so a process can tell a Redis that lost its data (the key gone) from one never used: the
host remembers the generation it saw in its state folder (``monitor.storage.generations``), and a
store opened to write whose Redis lacks the remembered generation says so (``memory_lost``).

- Opening reads the whole hash once (``HGETALL``, atomic in Redis); reads then come from memory, as
  the contract says. A reader so sees a state after some complete update.
- ``update`` is one Lua script of ``HSET`` and ``HDEL`` on the hash: atomic, other clients see all of
  it or none of it. It is as durable as Redis's persistence makes it (docs/operations.md). A store
  opened under the run lock writes only while that lock still holds this process's token.
- A lock is ``SET NX PX`` with a random token and a lease, renewed by a daemon thread while held.
  A holder killed by ``kill -9`` renews nothing, so its lock expires after the lease: the stand-in for
  the kernel dropping the file backend's flock. Renewing and releasing compare the token first (Lua),
  so a holder whose lease ran out never extends or deletes the next holder's lock. A renewal that
  finds the lock no longer its own stops renewing; one that cannot reach Redis tries again a third of
  a lease later, never in a loop.
- A Redis that stops answering mid-run is given up after one command's timeout: the location
  remembers it (``unreachable``), and releasing a lock then sends nothing (the lease expires by
  itself, as a killed holder's does), so a process that lost its Redis ends at once.

The password comes from the environment (the caller passes it in), never from the URL written in
the config, and no message of this module contains it.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from monitor.storage.contract import RUN_LOCK, PropertyStore, StoreLock
from monitor.storage.errors import StateError, StateUnavailable, StateWriteError
from monitor.storage.generations import GenerationMemory
from monitor.storage.location import PROPERTIES, StateLocation

# A killed holder's lock is free again after this long. Long enough that a process stalled by a
# loaded machine (the renewal comes every third of it) keeps its lock; short enough that the next
# cron tick after a crash (every minute or more) finds it free.
LOCK_LEASE_SECONDS = 30.0
# Connecting and each command: a Redis that does not answer in this long is treated as down.
SOCKET_TIMEOUT_SECONDS = 5.0
_POLL_SECONDS = 0.05

# Extend the lease only if the lock still holds our token.
_RENEW = ("if redis.call('get', KEYS[1]) == ARGV[1] then"
          " return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0")
# One update, atomic as every script is: refused if the run lock this process took (ARGV[1], empty
# when it took none) is no longer its own (0: another holds it; -1: nobody does; -2: nobody does and
# the generation is gone too, so Redis lost its data); else the fields set and deleted, the generation
# set if it is missing, and the generation returned. ARGV: token, generation, count of fields set,
# then field/value pairs, then fields to delete.
_UPDATE = """
if ARGV[1] ~= '' then
  local holder = redis.call('get', KEYS[2])
  if holder ~= ARGV[1] then
    if holder then return 0 end
    if redis.call('exists', KEYS[3]) == 1 then return -1 end
    return -2
  end
end
local set = tonumber(ARGV[3])
for i = 0, set - 1 do redis.call('hset', KEYS[1], ARGV[4 + 2 * i], ARGV[5 + 2 * i]) end
for i = 4 + 2 * set, #ARGV do redis.call('hdel', KEYS[1], ARGV[i]) end
redis.call('set', KEYS[3], ARGV[2], 'NX')
return redis.call('get', KEYS[3])
"""
# Delete the lock only if it still holds our token.
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


class RedisLocation(StateLocation):
    """The stores and locks of one monitor on one Redis, all under ``prefix``."""

    shared_writers = True

    def __init__(self, url: str, *, prefix: str, password: str | None = None,
                 memory_dir: str | Path | None = None) -> None:
        """``memory_dir``: the host's state folder, where it remembers the generation it saw (None:
        a loss of Redis's data is not looked for)."""
        self.url = url
        self.prefix = prefix
        # The token of each lock a RedisLock of this location holds: a store opened here writes only
        # while the run lock it was opened under is still its own.
        self.held_tokens: dict[str, str] = {}
        # The lock whose token fences this location's writes: the run lock, or a runner's own lock
        # when several runners share the state (monitor.state.shared).
        self.fence = RUN_LOCK
        self.leases: dict[str, float] = {}  # locks whose lease is not LOCK_LEASE_SECONDS, by name
        self.scripts: dict[str, object] = {}  # scripts of other modules (monitor.storage.redis_shared)
        # Set when a command could not reach Redis or timed out: nothing more is sent that could wait.
        self.unreachable = False
        # One retry, on a fresh connection, after a connection error only: a Redis restarted since
        # the pooled connection was opened answers the retry. A command that timed out is not sent
        # again: a Redis that did not answer in SOCKET_TIMEOUT_SECONDS is down, and waiting for it
        # twice would hold a run past its budget.
        self._client = redis.Redis.from_url(
            url, password=password, socket_timeout=SOCKET_TIMEOUT_SECONDS,
            socket_connect_timeout=SOCKET_TIMEOUT_SECONDS, decode_responses=True,
            retry=Retry(NoBackoff(), 1, supported_errors=(redis.ConnectionError,)))
        self.generations = GenerationMemory(Path(memory_dir), self.describe()) if memory_dir else None
        # Sent once, then called by their digest (EVALSHA), not with their whole text each time.
        self.update_script = self._client.register_script(_UPDATE)
        self.renew_script = self._client.register_script(_RENEW)
        self.release_script = self._client.register_script(_RELEASE)

    def key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    def exists(self, name: str = PROPERTIES) -> bool:
        with talking_to(self):
            return bool(self._client.exists(self.key("store", name)))

    def open(self, name: str = PROPERTIES, *, read_only: bool = False) -> RedisStore:
        return RedisStore(self, name, read_only=read_only)

    def lock(self, name: str = RUN_LOCK, lease: float | None = None) -> RedisLock:
        """The lock ``name``, with ``lease`` (default: ``leases[name]``, else LOCK_LEASE_SECONDS)."""
        return RedisLock(self, name, lease or self.leases.get(name, LOCK_LEASE_SECONDS))

    def describe(self) -> str:
        """The Redis and prefix, for messages: host, port and database, never the password."""
        kwargs = self._client.connection_pool.connection_kwargs
        where = kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}"
        return f"Redis {where} db {kwargs.get('db', 0)} (prefix {self.prefix!r})"

    def ping(self) -> None:
        """Raise ``StateUnavailable`` if Redis does not answer."""
        with talking_to(self):
            self._client.ping()

    @property
    def client(self) -> redis.Redis:
        return self._client

    def __repr__(self) -> str:
        return f"RedisLocation({self.describe()})"


@contextmanager
def talking_to(location: RedisLocation, writing: bool = False) -> Iterator[None]:
    """Turn the client's errors into the store's, saying which Redis and what to do."""
    try:
        yield
    except redis.AuthenticationError as exc:
        raise StateUnavailable(
            f"{location.describe()} refused the password ({exc}); set the environment variable named by"
            " [state] password_env to the password Redis expects") from None
    except redis.RedisError as exc:
        if isinstance(exc, redis.ConnectionError | redis.TimeoutError):
            location.unreachable = True
        cause = f"{type(exc).__name__}: {str(exc).rstrip('.')}"
        fix = "Start Redis or fix [state] url in the config; `redis-cli -u <url> ping` should answer PONG"
        if writing:
            # Mid-run: what the process did since its last save is lost, and only that.
            raise StateWriteError(
                f"lost the state on {location.describe()} while saving: {cause}. Nothing of this save"
                f" was kept; the next run takes over where the last save left off. {fix}") from None
        raise StateUnavailable(f"cannot reach the state on {location.describe()}: {cause}. {fix}") from None


class RedisStore(PropertyStore):
    """A ``PropertyStore`` on a Redis hash; see the module docstring."""

    def __init__(self, location: RedisLocation, name: str, *, read_only: bool = False) -> None:
        self.location = location
        self.hash_key = location.key("store", name)
        with talking_to(location):
            pipe = location.client.pipeline(transaction=True)  # MULTI: the hash and the generation at once
            properties, generation = pipe.hgetall(self.hash_key).get(location.key("generation")).execute()
        super().__init__(properties, read_only=read_only)
        memory = location.generations if not read_only and name == PROPERTIES else None
        self._memory = memory
        self._generation = generation  # as this host last wrote it down (None: not yet)
        if memory is None:
            return
        remembered = memory.remembered()
        if generation is None and remembered is not None:
            # Redis lost this state's data (restarted without persistence, flushed). Only a writer
            # looks: it is the one that tells, and its first save writes a new generation.
            self.memory_lost = remembered
        elif generation is not None and generation != remembered:
            # Another generation than the remembered one: another process (or host) noticed the loss
            # first and told it; this host only learns the new one.
            memory.remember(generation)

    def _persist(self, changed: dict[str, str], removed: list[str]) -> None:
        # Under the run lock, the update is fenced by its token: a process stalled past its lease,
        # whose lock another process has taken since, is refused instead of writing over that one.
        # The generation is set once, never changed: its absence later means Redis lost what it held.
        fence = self.location.fence
        token = self.location.held_tokens.get(fence, "")
        pairs = [item for pair in changed.items() for item in pair]
        with talking_to(self.location, writing=True):
            applied = self.location.update_script(
                keys=[self.hash_key, self.location.key("lock", fence), self.location.key("generation")],
                args=[token, secrets.token_hex(8), len(changed), *pairs, *removed])
        if applied in (0, -1, -2):
            raise StateError(self._refusal(applied))
        if self._memory is not None and applied != self._generation:
            self._memory.remember(applied)  # the first save of a new generation: once, not per save
            self._generation = applied

    def _refusal(self, code: int) -> str:
        if code == -2:
            return (f"{self._describe()} lost its data while this process worked (the run lock and"
                    " the generation key are gone: Redis restarted without persistence, or was"
                    " flushed); this change was not saved. The next run starts from the empty state and"
                    " says so; turn on appendonly in Redis (docs/operations.md, \"State on Redis\")")
        holder = "another process holds it now" if code == 0 else "nobody holds it now"
        return (f"{self._describe()}: this process lost the run lock (its {LOCK_LEASE_SECONDS:.0f} s lease"
                f" ran out while the process was stalled, and {holder}); this change was not saved."
                " Nothing to fix by hand: the next run goes on from the saved state")

    def hold(self, values: dict[str, str | None], whole: bool = False) -> None:
        """Take ``values`` (None: absent) as what the hash holds now, read by a caller sharing the store
        with other writers (monitor.storage.redis_shared); ``whole``: they are all of it."""
        if whole:
            self._properties.clear()
        for key, value in values.items():
            if value is None:
                self._properties.pop(key, None)
            else:
                self._properties[key] = value

    def _lock(self, name: str) -> RedisLock:
        return RedisLock(self.location, name)

    def _describe(self) -> str:
        return f"the state on {self.location.describe()}"


class RedisLock(StoreLock):
    """A lock held as ``<prefix>:lock:<name>`` with a lease renewed while held."""

    def __init__(self, location: RedisLocation, name: str, lease: float = LOCK_LEASE_SECONDS) -> None:
        self.location = location
        self.name = name
        self.key = location.key("lock", name)
        self.lease = lease
        self._token: str | None = None
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.lost = False  # a renewal found the lock no longer held by this instance

    @property
    def held(self) -> bool:
        return self._token is not None

    def acquire(self, timeout: float) -> bool:
        if self.held:
            return True
        token = secrets.token_hex(16)
        deadline = time.monotonic() + max(timeout, 0.0)
        with talking_to(self.location):
            while not self.location.client.set(self.key, token, nx=True, px=int(self.lease * 1000)):
                if time.monotonic() >= deadline:
                    return False
                time.sleep(_POLL_SECONDS)
        self._token = token
        self.location.held_tokens[self.name] = token
        self._stop = threading.Event()
        self._renewer = threading.Thread(target=self._renew, args=(token, self._stop),
                                         name=f"lock-lease-{self.name}", daemon=True)
        self._renewer.start()
        return True

    def _renew(self, token: str, stop: threading.Event) -> None:
        while not stop.wait(self.lease / 3):
            try:
                renewed = self.location.renew_script(keys=[self.key], args=[token, int(self.lease * 1000)])
            except redis.RedisError:
                continue  # Redis away for a moment: the lease still runs; try again a third of it later
            if not renewed:
                # The lock is not ours any more (the lease ran out, or Redis lost it): renewing can
                # never succeed again, and this holder's next write is refused by its token.
                self.lost = True
                return

    def release(self) -> None:
        token, self._token = self._token, None
        if token is None:
            return
        if self.location.held_tokens.get(self.name) == token:
            del self.location.held_tokens[self.name]
        self._stop.set()
        if self.location.unreachable:
            return  # a command would wait out its timeout again: the lease expires by itself
        # Redis away: the lease expires by itself, as a killed holder's does.
        with suppress(redis.RedisError):
            self.location.release_script(keys=[self.key], args=[token])

    def describe(self) -> str:
        return f"{self.key} on {self.location.describe()}"
