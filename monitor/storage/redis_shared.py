"""Redis operations for several processes writing one store at once: a compare-and-set, a re-read.

The store contract has one writer at a time; runners that share a store (monitor.state.shared) need
more, which only the Redis backend offers, and which knows nothing of what keys mean:

- ``compare_and_set``: set one field to a new value only if it still holds what this process last
  saw of it (optimistic concurrency on the stored text) and a guard field still starts with the text
  expected (a document's id, its first field: compared without decoding the whole document, which
  for a round of 20,000 spreadsheets is a megabyte); in the same script, read back a few other
  fields. One script, so atomic: two processes asking for the same field at once, one wins and the
  other is told what the field now holds.
- ``refresh``: read the whole hash again (``HGETALL``, atomic), so the store's memory holds what the
  others wrote too. What this process had not saved is the caller's to save first.
- ``alive``: which of some locks are held right now (a run's lease is a lock: monitor.storage.redis_store).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from monitor.storage.errors import StateError
from monitor.storage.redis_store import RedisLocation, RedisStore, talking_to

# KEYS: the hash, the fencing lock. ARGV: fence token, field, expected ('' for none), new value, guard
# field, the text the guard must start with, then the fields to read back. Returns {status, stored
# value or false, read values...}: status 1 set, 0 refused (the field held something else), 2 the
# guard starts otherwise (or is gone), 3 the fence is no longer this process's.
_COMPARE_AND_SET = """
if ARGV[1] ~= '' and redis.call('get', KEYS[2]) ~= ARGV[1] then return {3} end
local guard = redis.call('hget', KEYS[1], ARGV[5])
if not guard or string.sub(guard, 1, #ARGV[6]) ~= ARGV[6] then return {2} end
local stored = redis.call('hget', KEYS[1], ARGV[2])
local status = 0
if (stored or '') == ARGV[3] then
  redis.call('hset', KEYS[1], ARGV[2], ARGV[4])
  stored = ARGV[4]
  status = 1
end
local reply = {status, stored}
for i = 7, #ARGV do reply[#reply + 1] = redis.call('hget', KEYS[1], ARGV[i]) end
return reply
"""

SET, REFUSED, GUARD_CHANGED = "set", "refused", "guard_changed"


@dataclass(frozen=True)
class Swap:
    """What ``compare_and_set`` found: ``status`` (SET, REFUSED, GUARD_CHANGED), the field as stored
    now (None: absent), and the fields read back (None: absent)."""

    status: str
    stored: str | None
    read: dict[str, str | None]


def compare_and_set(store: RedisStore, field: str, new: str, *, guard: tuple[str, str],
                    read: Sequence[str] = ()) -> Swap:
    """Set ``field`` to ``new`` if it holds what ``store`` last saw of it and the field ``guard[0]``
    starts with the text ``guard[1]``; read ``read`` back in the same step. The store's memory then
    holds what was found (or set). Raises StateError when this process lost the lock fencing its writes."""
    location = store.location
    script = location.scripts.get("compare_and_set")
    if script is None:  # sent once per process, then called by its digest
        script = location.scripts["compare_and_set"] = location.client.register_script(_COMPARE_AND_SET)
    expected = store.get_property(field) or ""
    token = location.held_tokens.get(location.fence, "")
    with talking_to(location, writing=True):
        reply = script(keys=[store.hash_key, location.key("lock", location.fence)],
                       args=[token, field, expected, new, *guard, *read])
    code = int(reply[0])
    if code == 3:
        raise StateError(f"this process lost its lock {location.fence!r} on {location.describe()} (it was"
                         " stalled past its lease); nothing was claimed. The next run goes on")
    if code == 2:
        return Swap(GUARD_CHANGED, None, {})
    stored = reply[1] or None
    values = {name: (value or None) for name, value in zip(read, reply[2:], strict=False)}
    store.hold({field: stored, **values})
    return Swap(SET if code == 1 else REFUSED, stored, values)


def refresh(store: RedisStore) -> None:
    """Read the whole store again: its memory then holds what every process saved."""
    with talking_to(store.location):
        properties = store.location.client.hgetall(store.hash_key)
    store.hold(properties, whole=True)


def alive(location: RedisLocation, locks: Sequence[str]) -> set[str]:
    """Which of ``locks`` (names) are held now."""
    if not locks:
        return set()
    with talking_to(location):
        values = location.client.mget([location.key("lock", name) for name in locks])
    return {name for name, value in zip(locks, values, strict=True) if value is not None}
