"""Escalation, pure, on a ManualClock: a failing spreadsheet's incident nobody acknowledged for
``escalate_after`` is told once more, naming its owner, in its own chat or the escalation chat; and
every chat the config names is listed in one place."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from config_fixtures import FULL, load, secrets_folder

from monitor.core.clock import ManualClock
from monitor.engine.health import FAIL, OK, SheetHealth
from monitor.engine.incidents import incident_id, settle_incidents
from monitor.engine.maintenance import start_maintenance
from monitor.engine.mutes import Mute
from monitor.engine.runner_state import RunnerState
from monitor.notify.buttons import ACK, Signer, incidents_of
from monitor.notify.destinations import DEFAULT, Destination
from monitor.notify.documents import AlertMemory
from monitor.notify.notifier import compose_all
from monitor.notify.routing import Routing, configured_chats
from monitor.notify.settings import AlertSettings
from sheet_sandbox.telegram_html import parse_html

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
NAMES = {"s1": "Store 014", "s2": "Store 015"}
TWO_HOURS = AlertSettings(summary="off", digest_at=None, escalate_after=timedelta(hours=2),
                          reminder_every=timedelta(hours=4))
OWNED = Routing(owners={"s1": "@olga"})


class Desk:
    """The state as runs leave it (incidents settled at each run's end), and what each run's
    notifier would compose, on a ManualClock."""

    def __init__(self, routing: Routing = OWNED, settings: AlertSettings = TWO_HOURS) -> None:
        self.clock = ManualClock(START)
        self.state = RunnerState()
        self.memory = AlertMemory()
        self.routing = routing
        self.settings = settings
        self.rng = random.Random(3)

    def fail(self, sid: str) -> None:
        now = self.clock.now()
        self.state.health[sid] = SheetHealth(FAIL, since=now, down_since=now)
        self.settle()

    def recover(self, sid: str) -> None:
        self.state.health[sid] = SheetHealth(OK, since=self.clock.now())
        self.settle()

    def settle(self) -> None:
        settle_incidents(self.state, NAMES, self.clock.now(), lambda: incident_id(self.rng))

    def run(self, signer: Signer | None = None) -> dict[Destination, list[str]]:
        """A run's notifier: what each chat hears (text), its buttons kept in ``self.rows``."""
        self.settle()
        self.memory, composed = compose_all(self.state, [], self.memory, self.settings, NAMES,
                                            self.clock.now(), self.routing, signer)
        self.rows = {where: [m.keyboard for m in messages] for where, messages in composed.items()}
        return {destination: [parse_html(m.text).text for m in messages]
                for destination, messages in composed.items()}

    def escalations(self, signer: Signer | None = None) -> list[str]:
        return [line for texts in self.run(signer).values() for text in texts for line in text.split("\n")
                if line.startswith("⏫")]


def test_an_unacknowledged_failure_is_escalated_once_exactly_at_escalate_after_not_a_second_before():
    desk = Desk()
    desk.fail("s1")
    desk.clock.advance(2 * 3600 - 1)
    assert desk.escalations() == []
    assert desk.state.incidents["s1"].escalated_at is None
    desk.clock.advance(1)
    assert desk.escalations() == [
        "⏫ Store 014 has been failing for 2 hours and nobody acknowledged it · owner: @olga"]
    assert desk.state.incidents["s1"].escalated_at == desk.clock.now()
    for _ in range(3):  # never again for this incident
        desk.clock.advance(3600)
        assert desk.escalations() == []


def test_an_acknowledged_incident_is_never_escalated():
    desk = Desk()
    desk.fail("s1")
    desk.clock.advance(2 * 3600 - 1)
    desk.state.incidents["s1"] = desk.state.incidents["s1"].acknowledge("@ivan", desk.clock.now())
    for _ in range(4):
        desk.clock.advance(3600)
        assert desk.escalations() == []


def test_a_muted_or_maintained_spreadsheet_is_not_escalated_while_silenced_and_is_once_it_is_not():
    desk = Desk()
    desk.fail("s1")
    desk.fail("s2")
    desk.state.mutes["s1"] = Mute(until=START + timedelta(hours=3), reason="moving", by="@ivan")
    start_maintenance(desk.state, START, START + timedelta(hours=4), "@ivan", "servers", ["s2"])
    desk.clock.advance(2 * 3600)
    assert desk.escalations() == []
    desk.clock.advance(3600)  # the mute has ended
    assert [line.split(" has")[0] for line in desk.escalations()] == ["⏫ Store 014"]
    desk.clock.advance(3600)  # and the window
    assert [line.split(" has")[0] for line in desk.escalations()] == ["⏫ Store 015"]


def test_a_trouble_that_ends_and_comes_back_is_a_new_incident_and_escalates_again():
    desk = Desk()
    desk.fail("s1")
    desk.clock.advance(2 * 3600)
    assert len(desk.escalations()) == 1
    desk.recover("s1")
    desk.clock.advance(600)
    desk.fail("s1")
    desk.clock.advance(2 * 3600 - 1)
    assert desk.escalations() == []
    desk.clock.advance(1)
    assert len(desk.escalations()) == 1


def test_escalation_is_off_by_default():
    desk = Desk(settings=AlertSettings(summary="off", digest_at=None))
    desk.fail("s1")
    desk.clock.advance(30 * 24 * 3600)
    assert desk.escalations() == []


def test_escalations_go_to_the_escalation_chat_with_their_buttons_and_the_team_keeps_its_reminder():
    on_call = Destination("-1003333333333", 12)
    desk = Desk(Routing(owners={"s1": "@olga"}, escalation=on_call),
                AlertSettings(summary="off", digest_at=None, escalate_after=timedelta(hours=4),
                              reminder_every=timedelta(hours=4)))
    desk.fail("s1")
    desk.fail("s2")
    desk.clock.advance(4 * 3600)
    said = desk.run(Signer("123:token"))
    [escalation] = said[on_call]
    assert escalation.startswith("sheet-monitor: 2 problems nobody acknowledged for 4 hours")
    assert "⏫ Store 015 has been failing for 4 hours and nobody acknowledged it" in escalation
    [rows] = desk.rows[on_call]
    incidents = {desk.state.incidents[sid].id for sid in NAMES}
    assert set(incidents_of(rows)) == incidents and rows[0][0].data.startswith(f"{ACK}:")
    [team] = said[DEFAULT]
    assert "sheet-monitor reminder: 2 still failing" in team  # the team's own chat still hears it


def test_an_escalation_in_the_spreadsheets_own_chat_replaces_its_reminder_there():
    desk = Desk(settings=AlertSettings(summary="off", digest_at=None, escalate_after=timedelta(hours=4),
                                       reminder_every=timedelta(hours=4)))
    desk.fail("s1")
    desk.clock.advance(4 * 3600)
    [text] = desk.run()[DEFAULT]
    assert "⏫ Store 014 has been failing for 4 hours" in text and "reminder" not in text
    desk.clock.advance(4 * 3600 - 1)
    assert desk.run() == {}  # the reminder counts from the escalation
    desk.clock.advance(1)
    assert "sheet-monitor reminder: 1 still failing" in desk.run()[DEFAULT][0]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return secrets_folder(tmp_path)


def test_every_configured_chat_is_listed_once_the_escalation_chat_included(folder):
    routes = ('\n[[telegram.routes]]\ntags = ["moscow"]\nchat_id = "-1002222222222"\nmessage_thread_id = 7\n'
              '\n[[telegram.routes]]\nprofiles = ["sales"]\nchat_id = "-1001234567890"\n'
              'message_thread_id = 42\n')
    text = FULL.replace('reminder_every = "4h"\n\n[watchdog]',
                        'reminder_every = "4h"\nescalate_after = "2h"\nescalate_to_chat = "-1003333333333"\n'
                        'escalate_to_thread = 12\n\n[watchdog]') + routes
    config = load(folder, text)
    assert [(chat.chat_id, chat.thread_id) for chat in configured_chats(config)] == [
        ("-1001234567890", 42), ("-1002222222222", 7), ("-1003333333333", 12)]  # the default chat's once
    assert Routing.from_config(config).escalation == Destination("-1003333333333", 12)
    topic_only = load(folder, FULL.replace('reminder_every = "4h"\n\n[watchdog]',
                                           'reminder_every = "4h"\nescalate_to_thread = 9\n\n[watchdog]'))
    assert Routing.from_config(topic_only).escalation == Destination("-1001234567890", 9)
    assert any("nothing escalates" in warning for warning in topic_only.warnings)
    assert Routing.from_config(load(folder, FULL)).escalation is None
