"""The state repository: typed documents round-trip, a save writes only what changed, damage is set aside.

Runs on the in-memory twin of the store (the contract suite shows it behaves as the file backend does);
a stateful hypothesis test drives random sequences of changes, saves and reloads.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from monitor.core.errors import ErrorInfo
from monitor.engine.breaker import OPEN, BreakerState
from monitor.engine.events import ApiDegraded, StateEntryDamaged
from monitor.engine.health import FAIL, OK, WARN, Finding, SheetHealth
from monitor.engine.heartbeat import Heartbeat
from monitor.engine.mutes import Mute
from monitor.engine.tasks import FINISHED, PENDING, Round
from monitor.state.repository import StateRepository, encode_all
from monitor.state.schema import DAMAGED_PREFIX, OUTBOX, SCHEMA_KEY
from monitor.state.whole import State
from monitor.storage import MemoryBacking, MemoryStore

T0 = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
SHEETS = [f"1sheet{n:03d}".ljust(44, "x") for n in range(12)]
ERROR = ErrorInfo("transient", "The service is currently unavailable.", 503, "UNAVAILABLE")


def reload(backing: MemoryBacking) -> tuple[StateRepository, State]:
    repository = StateRepository(MemoryStore(backing))
    return repository, repository.load()


def fresh(backing: MemoryBacking) -> tuple[StateRepository, State]:
    repository, state = reload(backing)
    repository.save_all(state)
    return repository, state


def changed_keys(backing: MemoryBacking, action) -> set[str]:
    before = backing.copy()
    action()
    after = backing.copy()
    return {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}


# -- what a save writes ----------------------------------------------------------------------------


def test_a_save_writes_exactly_the_documents_that_changed():
    backing = MemoryBacking()
    repository, state = fresh(backing)
    state.round = Round.build(SHEETS, T0)
    for sid in SHEETS:
        state.health[sid] = SheetHealth(OK, since=T0, last_checked_at=T0)
    repository.save(state)

    task = state.round.next_due(T0)
    state.round.start(task)
    state.round.succeed(task, T0 + timedelta(seconds=1))
    finding = Finding("c", "threshold", "warn", "min 3")
    state.health[task.target] = SheetHealth(WARN, since=T0, findings=(finding,))
    written = changed_keys(backing, lambda: repository.save(state))
    assert written == {f"task/{task.id}", f"health/{task.target}"}
    assert changed_keys(backing, lambda: repository.save(state)) == set()  # nothing changed since


def test_a_new_round_is_one_document_and_replaces_every_task_of_the_old_one():
    backing = MemoryBacking()
    repository, state = fresh(backing)
    state.round = Round.build(SHEETS, T0)
    for task in list(state.round.tasks.values()):
        state.round.start(task)
        state.round.succeed(task, T0)
    repository.save(state)
    assert sum(key.startswith("task/") for key in backing.copy()) == len(SHEETS)

    new_round = Round.build(SHEETS[:3], T0 + timedelta(minutes=5))
    state.round = new_round
    written = changed_keys(backing, lambda: repository.save(state))
    # Its fresh tasks are implied by the round's list of targets: only that document is written.
    assert {key for key in written if key in backing.copy()} == {"round"}
    assert not any(key.startswith("task/") for key in backing.copy())
    reloaded = StateRepository(MemoryStore(backing)).load()
    assert list(reloaded.round.tasks) == list(new_round.tasks)
    assert [task.target for task in reloaded.round.tasks.values()] == SHEETS[:3]


def test_saving_costs_what_changed_whatever_the_number_of_spreadsheets():
    for count in (10, 2000):
        backing = MemoryBacking()
        repository, state = fresh(backing)
        ids = [f"1sheet{n:05d}".ljust(44, "x") for n in range(count)]
        state.round = Round.build(ids, T0)
        for sid in ids:
            state.health[sid] = SheetHealth(OK, since=T0)
        repository.save(state)
        task = state.round.next_due(T0)
        state.round.start(task)
        written = changed_keys(backing, lambda: repository.save(state))  # noqa: B023
        assert written == {f"task/{task.id}"}


# -- damaged entries -------------------------------------------------------------------------------

DAMAGED_SHAPES = {
    "a breaker that is a string": ("breaker/" + SHEETS[0], '"open"'),
    "a mute that is a string": ("mute/" + SHEETS[0], '"until tomorrow"'),
    "a mute whose until is not a time": ("mute/" + SHEETS[1], '{"until": "tomorrow", "reason": "x"}'),
    "a health record with an extra key": ("health/" + SHEETS[0], '{"health": "ok", "extra": 1}'),
    "a health record that is not JSON": ("health/" + SHEETS[1], "{health: ok"),
    "a DLQ entry missing fields": ("dlq/" + SHEETS[0], json.dumps({"id": SHEETS[0], "name": "x"})),
    "a heartbeat that is a string": ("heartbeat", '"running"'),
    "an event of an unknown kind": ("event/000000000001", '{"kind": "config_problem", "at": "x"}'),
    "a key no release writes": ("sheets", "{}"),
    "a schema whose versions are not numbers": ("schema", '{"layout": "2", "documents": {"task": "1"}}'),
}


@pytest.mark.parametrize("shape", DAMAGED_SHAPES)
def test_a_damaged_entry_is_set_aside_with_one_event_and_the_rest_loads(shape):
    key, raw = DAMAGED_SHAPES[shape]
    backing = MemoryBacking()
    repository, state = fresh(backing)
    state.health[SHEETS[5]] = SheetHealth(FAIL, since=T0)
    state.mutes[SHEETS[6]] = Mute(until=T0 + timedelta(days=1), reason="kept")
    repository.save(state)
    MemoryStore(backing).set_property(key, raw)

    store = MemoryStore(backing)
    repository = StateRepository(store)
    state = repository.load()
    assert [damage.key for damage in state.damaged] == [key]
    assert state.health[SHEETS[5]].health is FAIL and SHEETS[6] in state.mutes  # the rest loaded

    for damage, target in repository.set_aside(state.damaged, T0):
        state.events.add(StateEntryDamaged(at=T0, run_id="r", key=damage.key, problem=damage.problem,
                                           set_aside_as=target))
    repository.save(state)  # whole, when a single document had to be replaced
    stored = backing.copy()
    assert stored.get(key) != raw  # gone (an event's number may be taken again by the next event)
    kept = json.loads(stored[DAMAGED_PREFIX + key])
    assert kept["value"] == raw and kept["problem"]
    reloaded = StateRepository(MemoryStore(backing)).load()
    assert reloaded.damaged == [] and reloaded.set_aside == [key]
    assert [event.key for event in reloaded.events] == [key]


def test_a_state_that_lost_its_schema_document_loads_whole_and_is_saved_whole_again():
    backing = MemoryBacking()
    repository, state = fresh(backing)
    state.health[SHEETS[0]] = SheetHealth(FAIL, since=T0)
    repository.save(state)
    MemoryStore(backing).delete_property(SCHEMA_KEY)  # not the first release's layout for all that

    repository = StateRepository(MemoryStore(backing))
    state = repository.load()
    assert state.damaged == [] and state.health[SHEETS[0]].health is FAIL and state.needs_full_save
    repository.save(state)
    assert SCHEMA_KEY in backing.copy()


def test_a_state_from_a_newer_release_is_refused_untouched():
    backing = MemoryBacking({SCHEMA_KEY: json.dumps({"layout": 3, "documents": {}})})
    from monitor.storage import StateVersionError

    with pytest.raises(StateVersionError, match="newer sheet-monitor"):
        StateRepository(MemoryStore(backing)).load()
    assert backing.copy() == {SCHEMA_KEY: json.dumps({"layout": 3, "documents": {}})}


# -- random sequences of changes, saves and reloads ------------------------------------------------


class SavedStateMachine(RuleBasedStateMachine):
    """Whatever is changed, after a save a fresh load sees exactly the state in memory, and the
    repository's own full comparison finds nothing unsaved."""

    @initialize()
    def start(self):
        self.backing = MemoryBacking()
        self.repository, self.state = fresh(self.backing)
        self.now = T0

    @rule(count=st.integers(min_value=1, max_value=len(SHEETS)))
    def new_round(self, count):
        self.now += timedelta(minutes=5)
        self.state.round = Round.build(SHEETS[:count], self.now)

    @rule(outcome=st.sampled_from(["succeed", "retry", "fail", "skip", "give_up"]))
    def work_on_a_task(self, outcome):
        rnd = self.state.round
        task = rnd.next_due(self.now + timedelta(hours=1)) if rnd else None
        if task is None:
            return
        rnd.start(task)
        if outcome == "succeed":
            rnd.succeed(task, self.now)
        elif outcome == "skip":
            rnd.skip(task, self.now, "muted")
        else:
            rnd.record_failure(task, self.now, ERROR, task.attempts + 1)
            if outcome == "retry":
                rnd.retry_at(task, self.now + timedelta(seconds=9))
            elif outcome == "fail":
                rnd.fail(task)
            else:
                rnd.give_up_for_round(task)

    @rule(sid=st.sampled_from(SHEETS))
    def requeue(self, sid):
        if self.state.round is not None:
            self.state.round.requeue_now(sid)

    @rule(sid=st.sampled_from(SHEETS), health=st.sampled_from([OK, WARN, FAIL]))
    def judge(self, sid, health):
        self.state.health[sid] = SheetHealth(health, since=self.now, last_checked_at=self.now)

    @rule(sid=st.sampled_from(SHEETS), opened=st.booleans())
    def breaker(self, sid, opened):
        if opened:
            self.state.breakers[sid] = BreakerState(OPEN, 3, opened_at=self.now, cooldown_seconds=900)
        else:
            self.state.breakers.pop(sid)

    @rule(sid=st.sampled_from(SHEETS))
    def dead_letter(self, sid):
        rnd = self.state.round
        task = next((task for task in rnd.tasks.values() if task.target == sid), None) if rnd else None
        if task is not None:
            self.state.dlq.record(sid, "Store", task, ERROR, self.now)

    @rule(sid=st.sampled_from(SHEETS))
    def resolve(self, sid):
        self.state.dlq.resolve(sid)

    @rule(sid=st.sampled_from(SHEETS), muted=st.booleans())
    def mute(self, sid, muted):
        if muted:
            self.state.mutes[sid] = Mute(until=self.now + timedelta(hours=2), reason="maintenance")
        else:
            self.state.mutes.pop(sid)

    @rule(many=st.integers(min_value=1, max_value=3))
    def events_come_and_go(self, many):
        for _ in range(many):
            self.state.events.add(ApiDegraded(at=self.now, run_id="r", failing_in_a_row=8))
        pending = self.state.events.pending()
        self.state.events.remove([key for key, _ in pending[: len(pending) // 2]])

    @rule()
    def heartbeat(self):
        self.state.heartbeat = Heartbeat(run_id=f"run-{self.now:%H%M}", started_at=self.now,
                                         budget_seconds=270)

    @rule()
    def save(self):
        self.repository.save(self.state)
        assert self.repository.unsaved(self.state) == []

    @rule()
    def reload(self):
        self.repository.save(self.state)
        self.repository, loaded = reload(self.backing)
        assert self.repository.unsaved(loaded) == []
        assert _documents(loaded) == _documents(self.state)
        self.state = loaded

    @invariant()
    def counts_follow_the_tasks(self):
        rnd = self.state.round
        if rnd is not None:
            recounted = {status: 0 for status in rnd.counts()}
            for task in rnd.tasks.values():
                recounted[task.status] += 1
            assert rnd.counts() == recounted
            assert rnd.is_complete() == all(task.status in FINISHED for task in rnd.tasks.values())
            due = rnd.next_due(self.now + timedelta(hours=1))
            assert due is None or due.status is PENDING


def _documents(state: State) -> dict:
    return encode_all(state)


TestSavedState = SavedStateMachine.TestCase
TestSavedState.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)



# -- documents of an older version -----------------------------------------------------------------


def older_documents() -> MemoryBacking:
    """A state whose quota log and heartbeat are the first version of each (one project's log; run
    stats without reads per project, read time or concurrency)."""
    versions = {name: 1 for name in ("round", "task", "heartbeat", "quota")}
    return MemoryBacking({
        SCHEMA_KEY: json.dumps({"layout": 2, "documents": versions}),
        "quota": json.dumps({"window_seconds": 61.0, "sent": {"sa-1": [5.0, 6.0]}, "project": [5.0, 6.0],
                             "paused_until": {"sa-1": 70.0}}),
        "heartbeat": json.dumps({"run_id": "r1", "started_at": "2026-11-30T03:00:00Z",
                                 "budget_seconds": 270.0, "finished_at": "2026-11-30T03:04:00Z",
                                 "outcome": "ok",
                                 "stats": {"tasks": 2, "reads_by_credential": {"sa-1": 2}}}),
    })


def test_documents_of_an_older_version_are_read_in_todays_shape_and_saved_in_it():
    backing = older_documents()
    repository, state = reload(backing)
    assert state.damaged == []
    assert state.quota.every_project == (5.0, 6.0) and state.quota.projects == {}
    assert state.quota.sent == {"sa-1": (5.0, 6.0)} and state.quota.paused_until == {"sa-1": 70.0}
    stats = state.heartbeat.stats
    assert (stats.counts.reads_by_project, stats.mean_read_seconds, stats.concurrency) == ({}, None, None)
    assert stats.counts.reads_by_credential == {"sa-1": 2}
    assert state.needs_full_save  # so that the schema and the documents agree again
    repository.save(state)
    stored = backing.copy()
    assert json.loads(stored[SCHEMA_KEY])["documents"]["quota"] == 2
    assert "project" not in json.loads(stored["quota"])
    assert reload(backing)[1].quota == state.quota and not reload(backing)[1].needs_full_save


def test_a_feed_saved_before_trash_was_told_reads_with_nothing_in_the_trash():
    backing = MemoryBacking({
        SCHEMA_KEY: json.dumps({"layout": 2, "documents": {"feed": 1}}),
        "feed": json.dumps({"position": "42", "source": "sa-1.json", "asked_at": "2026-11-30T03:00:00Z",
                            "failing_since": None, "last_error": None}),
    })
    repository, state = reload(backing)
    assert state.damaged == [] and (state.feed.position, state.feed.trashed) == ("42", {})
    repository.save(state)
    assert json.loads(backing.copy()[SCHEMA_KEY])["documents"]["feed"] == 2


def test_a_document_already_in_the_newer_shape_under_an_older_schema_reads_the_same():
    backing = older_documents()
    repository, state = reload(backing)
    MemoryStore(backing).update({"quota": json.dumps({"window_seconds": 61.0, "sent": {}, "projects":
                                                      {"east": [9.0]}, "paused_until": {}})}, [])
    assert reload(backing)[1].quota.projects == {"east": (9.0,)}


def test_an_outbox_saved_before_deliveries_were_timed_reads_with_none_and_keeps_the_time_after():
    backing = MemoryBacking({
        SCHEMA_KEY: json.dumps({"layout": 2, "documents": {"outbox": 4}}),
        "outbox": json.dumps({"pending": [], "sent_keys": ["k1"], "dropped": [], "halted": None, "halts": {},
                              "migrations": {}, "overflowed": 0, "delivered": 3, "sending": None}),
    })
    repository, state = reload(backing)
    assert state.damaged == [] and (state.outbox.delivered, state.outbox.last_delivered_at) == (3, None)
    state.outbox = replace(state.outbox, last_delivered_at=T0)
    repository.save(state)
    assert json.loads(backing.copy()[SCHEMA_KEY])["documents"]["outbox"] == OUTBOX.version  # the current one
    assert reload(backing)[1].outbox.last_delivered_at == T0
