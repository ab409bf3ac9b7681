"""Drive's change-feed delay (sheet_sandbox/feed_delay.py): an edit reaches changes.list and the
file's modifiedTime at its file's next coalescing moment, about every 3 minutes, while reads of the
values see it at once. Over real HTTP with the monitor's own Drive client (monitor.google.drive_feed)
and reader, an edit made through gspread, and the sandbox's ManualClock; the model's draws as pure
units."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
import requests
from gspread.auth import DEFAULT_SCOPES

from monitor.core.clock import ManualClock
from monitor.google.client import build_gspread_client
from monitor.google.drive_feed import DriveChangeFeed
from monitor.google.reader import GspreadReader
from sheet_sandbox.feed_delay import GOOGLE_FEED_MODEL, FeedDelay, FeedDelayModel, parse_setting
from sheet_sandbox.google import GoogleSandbox
from sheet_sandbox.server import running_sandbox

SHEET = "store-1"
TIMEOUT = 5


def stock(quantity) -> dict:
    return {"title": "Store 1", "tabs": {"Stock": [["SKU", "Qty"], ["A-1", quantity]]}}


class Drive:
    """The monitor's view of one sandbox (its change feed, modifiedTime and values, through the
    monitor's reader) and an editor (gspread with write scopes), on one ManualClock."""

    def __init__(self, handle, tmp_path) -> None:
        self.handle, self.google, self.clock = handle, handle.google, handle.clock
        [credential] = handle.write_credentials(tmp_path, 1)
        self.credential = str(credential)
        self.reader = GspreadReader.from_credentials(endpoint=handle.base_url, timeout=TIMEOUT)
        self.feed = DriveChangeFeed(self.reader, self.credential)
        self.editor = build_gspread_client(credential, endpoint=handle.base_url, timeout=TIMEOUT,
                                           scopes=DEFAULT_SCOPES)

    def write(self, sheet_id: str, quantity) -> None:
        """A Sheets API write (values.update), as a person's edit."""
        self.editor.open_by_key(sheet_id).values_update(
            "Stock!B2", params={"valueInputOption": "RAW"}, body={"values": [[quantity]]})

    def changed_since(self, position: str) -> tuple[frozenset[str], str]:
        found = self.feed.changed_since(position, TIMEOUT)
        return found.changed, found.position

    def modified(self, sheet_id: str = SHEET) -> str:
        """The file's modifiedTime as Drive wrote it (the reader reads it as a time)."""
        return rfc3339(self.reader.modified_time(sheet_id, self.credential, TIMEOUT))

    def quantity(self, sheet_id: str = SHEET):
        [value_range] = self.reader.read(sheet_id, ["Stock!B2"], self.credential, TIMEOUT)
        return value_range["values"][0][0]

    def moment(self, sheet_id: str = SHEET) -> datetime:
        """When the file's held edits reach Drive."""
        return self.google.feed_delay.held(sheet_id).due

    def advance_to(self, moment: datetime) -> None:
        self.clock.advance((moment - self.clock.now()).total_seconds())
        if self.clock.now() < moment:  # the float sum fell a microsecond short
            self.clock.advance(1e-6)
        assert self.clock.now() == moment

    def list_changes(self, position: str) -> list[dict]:
        """changes.list's raw page (one page holds everything here)."""
        client = self.reader.client_for(self.credential, TIMEOUT)
        return client.http_client.request(
            "get", "https://www.googleapis.com/drive/v3/changes",
            params={"pageToken": position, "fields": "changes(fileId,time,file(modifiedTime))"},
        ).json()["changes"]


@pytest.fixture
def drive(tmp_path):
    # The sandbox's clock starts at the real time: google-auth stamps its JWTs from the real clock.
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False,
                         latency="off") as handle:
        handle.google.store.put_control(SHEET, stock(1))
        yield Drive(handle, tmp_path)


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


# -- over HTTP ---------------------------------------------------------------------------------


def test_an_edit_reaches_the_feed_and_modified_time_at_its_moment_and_not_before(drive):
    assert drive.google.feed_delay.active  # Google's delay, without being asked for
    position = drive.feed.start_position(TIMEOUT)
    created = drive.modified()
    drive.clock.advance(7)
    edited_at = drive.clock.now()
    drive.write(SHEET, 40)
    moment = drive.moment()
    assert edited_at < moment <= edited_at + timedelta(seconds=GOOGLE_FEED_MODEL.longest())

    drive.advance_to(moment - timedelta(milliseconds=1))
    assert drive.changed_since(position) == (frozenset(), position)
    assert drive.modified() == created
    drive.advance_to(moment)
    changed, after = drive.changed_since(position)
    assert changed == {SHEET}
    assert drive.modified() == rfc3339(edited_at)  # the edit's time, not the moment's
    assert drive.changed_since(after)[0] == frozenset()  # once


def test_values_reads_see_an_edit_at_once(drive):
    drive.write(SHEET, 41)
    assert drive.google.feed_delay.held(SHEET) is not None  # Drive does not show it yet
    assert drive.quantity() == 41
    grid = drive.reader.read_detailed(SHEET, ["Stock!B2"], drive.credential, TIMEOUT)
    assert grid.value_ranges[0]["values"] == [[41]]


def test_two_edits_in_one_window_surface_as_one_change_with_the_latest_modified_time(drive):
    position = drive.feed.start_position(TIMEOUT)
    drive.write(SHEET, 50)
    moment = drive.moment()
    drive.clock.advance((moment - drive.clock.now()).total_seconds() / 2)
    second_at = drive.clock.now()
    drive.write(SHEET, 51)
    assert drive.moment() == moment  # coalesced into the held edit
    drive.advance_to(moment)
    changes = drive.list_changes(position)
    assert changes == [{"fileId": SHEET, "time": rfc3339(second_at),
                        "file": {"modifiedTime": rfc3339(second_at)}}]
    assert drive.quantity() == 51


def test_an_edit_after_a_moment_waits_for_the_files_next_one(drive):
    position = drive.feed.start_position(TIMEOUT)
    drive.write(SHEET, 60)
    first = drive.moment()
    drive.advance_to(first)
    _, position = drive.changed_since(position)
    drive.write(SHEET, 61)  # at the very moment: the next window's
    second = drive.moment()
    assert second > first
    expected = GOOGLE_FEED_MODEL.surfaces_at(0, SHEET, first.timestamp())
    assert second.timestamp() == pytest.approx(expected)
    assert drive.changed_since(position)[0] == frozenset()
    drive.advance_to(second)
    assert drive.changed_since(position)[0] == {SHEET}


def test_files_edited_together_surface_at_moments_of_their_own(drive):
    for n in range(20):
        drive.google.store.put_control(f"other-{n}", stock(n))
    position = drive.feed.start_position(TIMEOUT)
    for n in range(20):
        drive.write(f"other-{n}", 100 + n)
    moments = sorted(drive.moment(f"other-{n}") for n in range(20))
    assert len(set(moments)) == 20  # no two files on the same beat
    drive.advance_to(moments[9])
    assert len(drive.changed_since(position)[0]) == 10
    drive.advance_to(moments[-1])
    assert len(drive.changed_since(position)[0]) == 20


def test_a_control_api_edit_is_held_and_a_new_file_is_not(drive):
    position = drive.feed.start_position(TIMEOUT)
    base = drive.handle.base_url
    requests.put(f"{base}/_sandbox/spreadsheets/{SHEET}", json=stock(70), timeout=TIMEOUT)
    requests.put(f"{base}/_sandbox/spreadsheets/store-2", json=stock(2), timeout=TIMEOUT)
    assert drive.changed_since(position)[0] == {"store-2"}
    stored = requests.get(f"{base}/_sandbox/spreadsheets/{SHEET}", timeout=TIMEOUT).json()
    assert stored["tabs"]["Stock"][1] == ["A-1", 70]  # the new values are there at once
    drive.advance_to(drive.moment())
    assert drive.changed_since(position)[0] == {SHEET, "store-2"}


def test_values_recomputed_without_an_edit_never_reach_the_feed(drive):
    position = drive.feed.start_position(TIMEOUT)
    before = drive.modified()
    drive.google.store.put_control(SHEET, stock(80), touch=False)  # IMPORTRANGE, NOW(): no edit
    assert drive.google.feed_delay.held(SHEET) is None
    drive.clock.advance(drive.google.feed_delay.longest_seconds())
    assert drive.changed_since(position)[0] == frozenset()
    assert drive.modified() == before and drive.quantity() == 80


def test_a_file_deleted_with_a_held_edit_is_reported_removed_only(drive):
    position = drive.feed.start_position(TIMEOUT)
    drive.write(SHEET, 90)
    drive.google.store.delete(SHEET)
    drive.clock.advance(drive.google.feed_delay.longest_seconds())
    found = drive.feed.changed_since(position, TIMEOUT)
    assert (found.changed, found.removed) == (frozenset(), {SHEET})


def test_switching_the_delay_off_shows_held_edits_at_the_next_look(drive):
    position = drive.feed.start_position(TIMEOUT)
    drive.write(SHEET, 95)
    answer = requests.put(f"{drive.handle.base_url}/_sandbox/feed_delay", json={"model": "off"},
                          timeout=TIMEOUT)
    assert answer.status_code == 200 and answer.json()["active"] is False
    changed, position = drive.changed_since(position)
    assert changed == {SHEET}
    drive.write(SHEET, 96)  # and later edits at once
    assert drive.changed_since(position)[0] == {SHEET}


def test_with_the_delay_off_every_edit_is_in_drive_at_once(tmp_path):
    with running_sandbox(clock=ManualClock(datetime.now(UTC)), telegram=False, latency="off",
                         feed_delay="off") as handle:
        handle.google.store.put_control(SHEET, stock(1))
        drive = Drive(handle, tmp_path)
        position = drive.feed.start_position(TIMEOUT)
        drive.clock.advance(3)
        drive.write(SHEET, 2)
        assert drive.changed_since(position)[0] == {SHEET}
        assert drive.modified() == rfc3339(drive.clock.now())


def test_the_control_api_shows_the_model_and_what_it_held(drive):
    base = drive.handle.base_url
    drive.write(SHEET, 5)
    drive.write(SHEET, 6)
    snapshot = requests.get(f"{base}/_sandbox/feed_delay", timeout=TIMEOUT).json()
    assert snapshot == {"model": "google", "scale": 1.0, "seed": 0, "active": True,
                        "period_seconds": 180.0, "longest_seconds": 600.0, "edits": 2,
                        "surfaced": 0, "held": 1, "mean_wait_seconds": 0.0}
    waited = (drive.moment() - drive.clock.now()).total_seconds()
    drive.advance_to(drive.moment())
    stats = requests.get(f"{base}/_sandbox/stats", timeout=TIMEOUT).json()["feed_delay"]
    assert (stats["surfaced"], stats["held"]) == (1, 0)
    assert stats["mean_wait_seconds"] == pytest.approx(waited, abs=0.01)
    scaled = requests.put(f"{base}/_sandbox/feed_delay", json={"scale": 0.1, "seed": 4},
                          timeout=TIMEOUT).json()
    assert (scaled["period_seconds"], scaled["longest_seconds"], scaled["seed"]) == (
        pytest.approx(18.0), pytest.approx(60.0), 4)
    requests.post(f"{base}/_sandbox/reset", timeout=TIMEOUT)
    after_reset = requests.get(f"{base}/_sandbox/feed_delay", timeout=TIMEOUT).json()
    assert (after_reset["edits"], after_reset["scale"]) == (0, 0.1)  # counts go, settings stay


@pytest.mark.parametrize(("body", "message"), [
    ({"speed": 1}, "unknown feed_delay key 'speed'; allowed: model, scale, seed"),
    ({}, "give at least one of model, scale, seed"),
    ({"model": None}, "must not be null"),
    ({"model": "slow"}, 'feed_delay "model" must be one of google, off'),
    ({"scale": 11}, 'feed_delay "scale" must be from 0 to 10'),
    ({"seed": "3"}, 'feed_delay "seed" must be an integer'),
])
def test_bad_feed_delay_settings_are_refused_naming_the_key(drive, body, message):
    base = drive.handle.base_url
    answer = requests.put(f"{base}/_sandbox/feed_delay", json=body, timeout=TIMEOUT)
    assert answer.status_code == 400 and message in answer.json()["error"]["message"]
    assert requests.get(f"{base}/_sandbox/feed_delay", timeout=TIMEOUT).json()["active"] is True


def test_reset_forgets_the_held_edits(drive):
    drive.write(SHEET, 7)
    drive.google.reset()
    assert drive.google.feed_delay.held(SHEET) is None
    drive.google.store.put_control(SHEET, stock(8))  # the file anew: created, shown at once
    position = drive.feed.start_position(TIMEOUT)
    drive.clock.advance(drive.google.feed_delay.longest_seconds())
    assert drive.changed_since(position)[0] == frozenset()


# -- the model, pure -------------------------------------------------------------------------


def edits(count: int, seed: int = 0) -> list[tuple[str, float, float]]:
    """(file, edited, surfaces) for ``count`` edits at random moments of random files."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        file_id, edited = f"file-{rng.randrange(500)}", 1.8e9 + rng.uniform(0, 86_400)
        out.append((file_id, edited, GOOGLE_FEED_MODEL.surfaces_at(seed, file_id, edited)))
    return out


def test_an_edit_waits_up_to_a_period_or_in_the_tail_up_to_ten_minutes():
    waits = sorted(surfaces - edited for _, edited, surfaces in edits(20_000))
    assert all(0 < wait <= 600 for wait in waits)
    late = sum(wait > 180 for wait in waits) / len(waits)
    assert 0.03 < late < 0.07  # the tail: 5 % of moments
    median = waits[len(waits) // 2]
    assert 80 < median < 100  # a beat at a random phase: half a period on average


def test_a_files_moments_keep_its_beat_and_files_have_phases_of_their_own():
    model = FeedDelayModel(tail_probability=0.0)
    first = model.surfaces_at(0, "a", 1.8e9)
    assert model.surfaces_at(0, "a", first - 1) == first  # the same window: the same moment
    assert model.surfaces_at(0, "a", first) == pytest.approx(first + 180)  # the next one
    phases = {round(model.surfaces_at(0, f"f{n}", 1.8e9) % 180) for n in range(50)}
    assert len(phases) > 40


def test_moments_depend_only_on_seed_file_and_time():
    assert FeedDelay(seed=3).surfaces_at("a", datetime(2027, 1, 1, tzinfo=UTC)) == \
        FeedDelay(seed=3).surfaces_at("a", datetime(2027, 1, 1, tzinfo=UTC))
    assert FeedDelay(seed=3).surfaces_at("a", datetime(2027, 1, 1, tzinfo=UTC)) != \
        FeedDelay(seed=4).surfaces_at("a", datetime(2027, 1, 1, tzinfo=UTC))


def test_a_scale_shortens_the_period_and_the_tail():
    scaled = FeedDelay(0.1)
    assert scaled.longest_seconds() == pytest.approx(60.0)
    edited = datetime(2027, 1, 1, tzinfo=UTC)
    assert timedelta(0) < scaled.surfaces_at("a", edited) - edited <= timedelta(seconds=60)
    assert FeedDelay(0).surfaces_at("a", edited) is None and FeedDelay("off").longest_seconds() == 0


def test_held_edits_come_due_in_the_order_of_their_moments():
    delay = FeedDelay()
    now = datetime(2027, 1, 1, tzinfo=UTC)
    for n in range(10):
        assert delay.hold(f"f{n}", now, now)
    due = delay.due(now + timedelta(seconds=600))
    assert len(due) == 10 and [held.due for held in due] == sorted(held.due for held in due)
    assert delay.due(now + timedelta(days=1)) == []


@pytest.mark.parametrize(("setting", "text"), [
    ("google", "Google's change-feed delay at full scale: a spreadsheet's edits reach Drive's change "
               "feed and modifiedTime at its next moment, every 3 min per file (5% of moments late: "
               "at most 10 min)"),
    (0.1, "Google's change-feed delay at 1/10 scale: a spreadsheet's edits reach Drive's change "
          "feed and modifiedTime at its next moment, every 18 s per file (5% of moments late: at "
          "most 1 min)"),
    ("off", "no change-feed delay (Drive shows every edit at once)"),
])
def test_the_description_says_the_period_and_the_longest_wait(setting, text):
    assert FeedDelay(setting).describe() == text


@pytest.mark.parametrize("value", ["fast", None, True, [0.1]])
def test_a_feed_delay_argument_must_be_google_off_or_a_scale(value):
    with pytest.raises(ValueError, match="feed_delay must be 'google', 'off' or a scale"):
        parse_setting(value)
    with pytest.raises(ValueError, match='"scale" must be from 0 to 10, got 11'):
        GoogleSandbox(clock=ManualClock(), feed_delay=11)
