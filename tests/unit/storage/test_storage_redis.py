"""What only the Redis backend does: leases, tokens, the generation key, a Redis that is not there.

The contract itself is checked in tests/contract/test_storage_contract.py, against Redis too.
"""

from __future__ import annotations

import time

import pytest
from redis_fixtures import REDIS_URL

from monitor.storage import StateError, StateUnavailable
from monitor.storage.redis_store import RedisLocation, RedisLock

# Nothing listens here: port 1 is reserved and closed on every machine we run on.
NOWHERE = "redis://127.0.0.1:1/0"


def test_a_killed_holders_lock_is_free_again_after_its_lease(redis_location):
    killed = RedisLock(redis_location, "run", lease=0.3)
    assert killed.acquire(timeout=0)
    killed._stop.set()  # what kill -9 does to the renewing thread: no renewal any more
    other = redis_location.lock("run")
    assert not other.acquire(timeout=0)
    assert other.acquire(timeout=1.0)
    other.release()


def test_a_held_lock_is_renewed_past_its_lease(redis_location):
    holder = RedisLock(redis_location, "run", lease=0.3)
    assert holder.acquire(timeout=0)
    time.sleep(0.5)  # past the lease: only the renewals keep it
    assert not redis_location.lock("run").acquire(timeout=0)
    holder.release()
    assert redis_location.lock("run").acquire(timeout=0)


def test_a_holder_whose_lease_ran_out_does_not_release_the_next_holders_lock(redis_location):
    late = RedisLock(redis_location, "run", lease=0.2)
    assert late.acquire(timeout=0)
    late._stop.set()
    now_holder = redis_location.lock("run")
    assert now_holder.acquire(timeout=1.0)
    late.release()  # its token is not the lock's any more: nothing happens
    assert not redis_location.lock("run").acquire(timeout=0)
    now_holder.release()


def test_the_first_change_writes_a_generation_that_later_changes_keep(redis_location):
    client = redis_location.client
    assert client.get(redis_location.key("generation")) is None
    store = redis_location.open()
    store.set_property("a", "1")
    generation = client.get(redis_location.key("generation"))
    store.set_property("b", "2")
    assert generation and client.get(redis_location.key("generation")) == generation


def test_every_key_lives_under_the_prefix(redis_location):
    with redis_location.lock("run"):
        redis_location.open().set_property("heartbeat", "{}")
        keys = set(redis_location.client.scan_iter(match="*", count=1000))
        mine = {key for key in keys if key.startswith(redis_location.prefix + ":")}
    assert mine == {redis_location.key("store", "properties"), redis_location.key("generation"),
                    redis_location.key("lock", "run")}


def test_an_unreachable_redis_says_where_and_what_to_do_without_the_password():
    location = RedisLocation(NOWHERE, prefix="p", password="hunter2-secret")
    with pytest.raises(StateUnavailable) as caught:
        location.open()
    message = str(caught.value)
    assert "127.0.0.1:1" in message and "[state] url" in message and "PONG" in message
    assert "hunter2-secret" not in message and "hunter2-secret" not in repr(location)
    with pytest.raises(StateUnavailable):
        location.exists()
    with pytest.raises(StateUnavailable):
        location.lock("run").acquire(timeout=0)


def test_a_writer_whose_lease_ran_out_is_refused_and_the_next_holders_state_stands(redis_location):
    stalled = RedisLock(redis_location, "run", lease=0.2)
    assert stalled.acquire(timeout=0)
    store = redis_location.open()
    store.set_property("round", "1")
    stalled._stop.set()  # stalled: no renewal, the lease runs out
    other_place = RedisLocation(REDIS_URL, prefix=redis_location.prefix)
    taken = other_place.lock("run")
    assert taken.acquire(timeout=1.0)
    other_place.open().set_property("round", "2")
    with pytest.raises(StateError, match="lost the run lock"):
        store.set_property("round", "stale")
    taken.release()
    assert redis_location.open(read_only=True).get_property("round") == "2"
    assert store.get_property("round") == "1"  # a refused change leaves the instance as it was
