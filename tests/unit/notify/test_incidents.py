"""Incidents, pure: one per spreadsheet's trouble from first seen to resolved, and the signed buttons
that name them."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.core.errors import ErrorInfo
from monitor.engine.dlq import DeadLetter
from monitor.engine.health import ERROR, FAIL, OK, WARN, SheetHealth
from monitor.engine.incidents import Action, Incident, incident_id, reconcile, settle_incidents
from monitor.engine.mutes import Mute
from monitor.engine.runner_state import RunnerState
from monitor.engine.tasks import Task
from monitor.notify.buttons import ACK, CHECK, MUTE_DAY, UNMUTE, Offer, Signer, incidents_of, keyboard

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
NAMES = {"s1": "Store 001", "s2": "Store 002"}


def ids():
    rng = random.Random(7)
    return lambda: incident_id(rng)


_IDS = ids()


def settle(state: RunnerState, now: datetime) -> None:
    settle_incidents(state, NAMES, now, _IDS)


def test_one_incident_lasts_from_the_first_warning_through_failing_to_the_recovery():
    state = RunnerState(health={"s1": SheetHealth(WARN, since=NOW)})
    settle(state, NOW)
    first = state.incidents["s1"]
    assert (first.kind, first.opened_at, first.is_open) == ("warning", NOW, True)
    later = NOW + timedelta(minutes=5)
    state.health["s1"] = SheetHealth(FAIL, since=later, down_since=later)
    settle(state, later)
    assert state.incidents["s1"].id == first.id and state.incidents["s1"].kind == "failing"
    state.health["s1"] = SheetHealth(OK, since=NOW + timedelta(hours=1))
    settle(state, NOW + timedelta(hours=1))
    resolved = state.incidents["s1"]
    assert resolved.resolved_at == NOW + timedelta(hours=1) and resolved.id == first.id
    state.health["s1"] = SheetHealth(FAIL, since=NOW + timedelta(hours=2))
    settle(state, NOW + timedelta(hours=2))
    assert state.incidents["s1"].id != first.id and state.incidents["s1"].is_open  # new trouble, new one


def test_a_dead_letter_refused_for_its_sharing_is_access_lost_and_a_paused_one_unreadable():
    task = Task(id="t", target="s1", round_id="r", created_at=NOW)
    forbidden = ErrorInfo("permanent", "The caller does not have permission", 403, "PERMISSION_DENIED")
    state = RunnerState(health={"s1": SheetHealth(ERROR, since=NOW), "s2": SheetHealth(OK, since=NOW)},
                        dlq={"s1": DeadLetter("s1", "Store 001", task, forbidden, NOW, NOW)})
    reconcile(state.incidents, state.health, state.dlq, frozenset({"s2"}), NAMES, NOW, ids())
    assert state.incidents["s1"].kind == "access_lost" and state.incidents["s2"].kind == "unreadable"


def test_a_mute_until_fixed_ends_with_its_incident_and_a_mute_for_a_while_does_not():
    state = RunnerState(health={"s1": SheetHealth(FAIL, since=NOW), "s2": SheetHealth(FAIL, since=NOW)})
    settle(state, NOW)
    state.mutes["s1"] = Mute(until=NOW + timedelta(days=30), reason="x", until_fixed=True, by="@ivan")
    state.mutes["s2"] = Mute(until=NOW + timedelta(days=1), reason="y", by="@olga")
    for sid in NAMES:
        state.health[sid] = SheetHealth(OK, since=NOW + timedelta(minutes=5))
    settle(state, NOW + timedelta(minutes=5))
    assert "s1" not in state.mutes and "s2" in state.mutes
    assert not state.mutes["s2"].until_fixed and Mute(NOW, "z", until_fixed=True).skips_reads is False


def test_acknowledging_keeps_who_did_it_first_and_actions_are_kept_bounded():
    incident = Incident("abc", "s1", "Store 001", "failing", NOW)
    acked = incident.acknowledge("@ivan", NOW).acknowledge("@olga", NOW + timedelta(minutes=1))
    assert (acked.acked_by, acked.acked_at) == ("@ivan", NOW)
    for n in range(25):
        acked = acked.with_action(Action(NOW, f"@user{n}", "checked again"))
    assert [action.by for action in acked.actions] == [f"@user{n}" for n in range(5, 25)]


# ---- buttons -------------------------------------------------------------------------------------------


def test_a_message_about_one_spreadsheet_gets_its_actions_in_words_on_two_rows():
    incident = Incident("abcdefgh", "s1", "Store 001", "failing", NOW)
    rows = keyboard([Offer(incident)], Signer("123:token"))
    assert [[button.text for button in row] for row in rows] == [
        ["✔ Acknowledge", "🔄 Check again"], ["🔕 1 hour", "🔕 1 day", "🔕 Until fixed"]]
    assert all(len(button.data.encode()) <= 64 for row in rows for button in row)
    muted = keyboard([Offer(incident.acknowledge("@ivan", NOW), muted=True)], Signer("123:token"))
    assert [[button.text for button in row] for row in muted] == [["🔄 Check again"], ["🔔 Unmute"]]


def test_a_message_about_several_spreadsheets_gets_a_row_each_led_by_its_name():
    offers = [Offer(Incident(f"id{n:06d}", f"s{n}", f"Store {n:03d} — Nizhny Novgorod", "failing", NOW))
              for n in range(12)]
    rows = keyboard(offers, Signer("123:token"))
    assert len(rows) == 10 and rows[0][0].text == "✔ Store 000 — Nizhn…"
    assert incidents_of(rows) == [f"id{n:06d}" for n in range(10)]


def test_a_buttons_data_verifies_with_the_token_that_signed_it_and_nothing_else():
    signer = Signer("123:token")
    data = signer.data(MUTE_DAY, "abcdefgh")
    assert signer.verify(data) == (MUTE_DAY, "abcdefgh")
    assert Signer("123:other-token").verify(data) is None  # a bot token changed since: refused
    action, incident, signature = data.split(":")
    assert signer.verify(f"{UNMUTE}:{incident}:{signature}") is None  # another action, same signature
    assert signer.verify(f"{action}:abcdefgz:{signature}") is None  # another incident
    assert signer.verify(f"{ACK}:{incident}") is None and signer.verify("") is None


@settings(max_examples=200)
@given(st.text(max_size=64))
def test_no_data_but_the_signed_verifies(data):
    signer = Signer("123:token")
    verified = signer.verify(data)
    assert verified is None or signer.data(*verified) == data


def test_signed_data_names_the_action_and_the_incident_only():
    data = Signer("123:token").data(CHECK, "abcdefgh")
    assert data.startswith("c:abcdefgh:") and len(data) == 23 and "123" not in data
    assert Signer("123:token").data(ACK, "abcdefgh") != data
