"""The quota pacer over a simulated clock: never over a limit in any rolling window, evenly spread."""

from __future__ import annotations

import math
import random
from collections import defaultdict

import pytest
from concurrency_helpers import WINDOW, most_in_a_window

from monitor.core.errors import QuotaScope
from monitor.engine.pacer import ONE_PROJECT, QuotaLog, QuotaPacer, round_estimate
from monitor.state.schema import QUOTA


def _drive(pacer: QuotaPacer, requests: int, rng: random.Random, gaps=(0.0, 0.0, 0.01, 0.3, 2.0)):
    """Send ``requests`` reads as fast as the pacer allows, with irregular work in between."""
    now = 0.0
    sends: dict[str, list[float]] = defaultdict(list)
    while sum(map(len, sends.values())) < requests:
        credential, wait = pacer.acquire(now)
        if credential is None:
            assert wait > 0
            now += wait * rng.choice([1.0, 1.0, 0.5, 1.7])  # sometimes wake early, sometimes late
        else:
            assert wait == 0.0
            sends[credential].append(now)
            now += rng.choice(gaps)
    return sends, now


@pytest.mark.parametrize("seed", range(5))
def test_one_credential_never_exceeds_its_limit_in_any_rolling_window(seed):
    pacer = QuotaPacer(["sa-1"], per_credential=60, per_project=300, margin_seconds=0.0)
    sends, _ = _drive(pacer, 400, random.Random(seed))
    assert most_in_a_window(sends["sa-1"]) == 60


@pytest.mark.parametrize("seed", range(5))
def test_the_project_limit_holds_when_credentials_could_send_more(seed):
    credentials = [f"sa-{i}" for i in range(8)]  # 8 x 60 = 480 > 300
    pacer = QuotaPacer(credentials, per_credential=60, per_project=300, margin_seconds=0.0)
    sends, _ = _drive(pacer, 1500, random.Random(seed), gaps=(0.0, 0.0, 0.01, 0.05))
    everything = [t for times in sends.values() for t in times]
    assert most_in_a_window(everything) == 300
    assert all(most_in_a_window(times) <= 60 for times in sends.values())


def test_the_margin_widens_the_window_the_pacer_enforces():
    pacer = QuotaPacer(["sa-1"], per_credential=60, margin_seconds=1.5)
    sends, _ = _drive(pacer, 200, random.Random(9))
    assert most_in_a_window(sends["sa-1"], window=WINDOW + 1.5) == 60


def test_a_full_window_frees_its_first_slot_exactly_when_the_first_send_ages_out():
    pacer = QuotaPacer(["sa-1"], per_credential=3, per_project=300, margin_seconds=0.0)
    assert [pacer.acquire(t)[0] for t in (0.0, 10.0, 20.0)] == ["sa-1"] * 3
    assert pacer.acquire(30.0) == (None, 30.0)
    assert pacer.acquire(59.999)[0] is None
    assert pacer.acquire(60.0) == ("sa-1", 0.0)
    assert pacer.acquire(60.0) == (None, 10.0)


def test_three_credentials_share_the_reads_evenly():
    credentials = ["sa-1", "sa-2", "sa-3"]
    pacer = QuotaPacer(credentials, per_credential=60, per_project=300)
    sends, _ = _drive(pacer, 700, random.Random(4))
    counts = [len(sends[c]) for c in credentials]
    assert sum(counts) == 700
    assert max(counts) - min(counts) <= 0.1 * 700 / 3
    assert pacer.usage()["credentials"]["sa-2"]["sent"] == len(sends["sa-2"])
    assert pacer.usage()["sent"] == 700


def test_a_paced_round_takes_what_the_quota_allows_and_no_more():
    pacer = QuotaPacer(["sa-1"], per_credential=60, margin_seconds=1.0)
    _, finished = _drive(pacer, 700, random.Random(0))
    # 700 reads at 60 per 61 s: the 700th read goes in the 12th window (11 full ones before it).
    assert 11 * 61 <= finished <= round_estimate(700, 1, 60, 300) * 1.1


def test_a_quota_error_naming_no_quota_pauses_that_credential_a_full_window_while_others_carry_on():
    # An HTML page (Google's anti-abuse "Sorry...") or a body naming no limit: after a window nothing
    # older can still count, whatever filled it.
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=60, margin_seconds=1.0)
    first, _ = pacer.acquire(0.0)
    wait = pacer.record_quota_error(first, 0.0)
    assert wait == 0.0  # the other credential can send now
    picks = {pacer.acquire(t)[0] for t in (1.0, 2.0, 30.0, 60.9)}
    assert picks == {"sa-2"}
    assert pacer.acquire(61.0)[0] == first
    assert pacer.usage()["credentials"][first]["quota_errors"] == 1


def test_a_project_wide_quota_error_pauses_every_credential_of_a_single_project():
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=60, margin_seconds=0.0)
    credential, _ = pacer.acquire(5.0)
    assert pacer.record_quota_error(credential, 5.0, QuotaScope.PROJECT) == 60.0
    assert pacer.acquire(30.0) == (None, 35.0)
    assert pacer.next_ready_in(30.0) == 35.0


def test_a_per_user_429_waits_until_the_credentials_oldest_send_ages_out_not_a_window():
    pacer = QuotaPacer(["sa-1"], per_credential=60, margin_seconds=0.0)
    for t in range(20):
        pacer.acquire(float(t))  # 20 sends at 0..19; Google says the other 40 are someone else's
    assert pacer.record_quota_error("sa-1", 20.0, QuotaScope.USER) == 40.0  # the send at 0 leaves at 60
    assert pacer.acquire(59.9)[0] is None
    # Then one read per send of ours that ages out: the others' share stays taken until it has aged
    # out too (at 80), so the window never holds more than Google showed.
    for t in range(60, 80):
        assert pacer.acquire(float(t)) == ("sa-1", 0.0)
        assert pacer.acquire(float(t))[0] is None
    assert [pacer.acquire(80.0)[0] for _ in range(40)] == ["sa-1"] * 40
    assert pacer.usage()["credentials"]["sa-1"]["quota_errors"] == 1


def test_a_read_refused_again_after_the_window_was_filled_waits_a_whole_window():
    pacer = QuotaPacer(["sa-1"], per_credential=60, margin_seconds=0.0)
    for t in range(20):
        pacer.acquire(float(t))
    pacer.record_quota_error("sa-1", 20.0, QuotaScope.USER, sent_at=19.0)
    # A read already in flight when the window was filled is refused alike: nothing changes.
    assert pacer.record_quota_error("sa-1", 20.5, QuotaScope.USER, sent_at=19.5) == 39.5
    assert pacer.acquire(60.0) == ("sa-1", 0.0)
    # Sent into the window as Google showed it, and refused: the others' share grew; a whole window.
    assert pacer.record_quota_error("sa-1", 60.4, QuotaScope.USER, sent_at=60.0) == pytest.approx(60.0)
    assert pacer.acquire(120.3)[0] is None and pacer.acquire(120.4)[0] == "sa-1"
    assert pacer.acquire(121.0)[0] == "sa-1"
    # A window after the last refusal, the next one fills the window again, as a first one does.
    assert pacer.record_quota_error("sa-1", 150.0, QuotaScope.USER, sent_at=121.0) == pytest.approx(30.4)


def test_the_refused_read_leaves_the_logs_as_google_did_not_count_it():
    pacer = QuotaPacer(["sa-1"], per_credential=3, margin_seconds=0.0)
    for t in (0.0, 10.0, 20.0):
        pacer.acquire(t)
    pacer.record_quota_error("sa-1", 20.5, QuotaScope.USER, sent_at=20.0)
    # Google holds the sends at 0 and 10 and one of someone else's: ours at 0 leaves at 60, then 10.
    assert pacer.snapshot(20.5).sent == {"sa-1": (0.0, 10.0, 20.5)}
    assert pacer.acquire(60.0) == ("sa-1", 0.0) and pacer.acquire(60.0)[0] is None


def test_a_per_user_429_pauses_only_that_credential():
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=60, margin_seconds=0.0)
    assert pacer.acquire(0.0)[0] == "sa-1"
    assert pacer.record_quota_error("sa-1", 1.0, QuotaScope.USER) == 0.0  # sa-2 may send now
    assert {pacer.acquire(t)[0] for t in (1.0, 2.0, 30.0, 59.9)} == {"sa-2"}
    credentials = pacer.usage()["credentials"]
    assert credentials["sa-1"]["paused_until"] == 60.0  # its one send, at 0, ages out then
    assert credentials["sa-2"]["paused_until"] is None


def test_a_per_project_429_stops_the_project_until_its_oldest_send_ages_out():
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=60, per_project=300, margin_seconds=0.0)
    for t in range(10):
        pacer.acquire(float(t))
    assert pacer.record_quota_error("sa-1", 10.0, QuotaScope.PROJECT) == 50.0  # sa-2 waits too
    assert pacer.acquire(59.9)[0] is None
    assert pacer.acquire(60.0)[0] is not None
    assert pacer.acquire(60.0) == (None, 1.0)


def test_a_run_held_by_a_429_knows_it_and_one_held_by_its_own_pace_does_not():
    paced = QuotaPacer(["sa-1"], per_credential=2, margin_seconds=0.0)
    paced.acquire(0.0)
    paced.acquire(1.0)
    assert paced.acquire(2.0)[0] is None and not paced.held_by_quota_errors(2.0)
    refused = QuotaPacer(["sa-1", "sa-2"], per_credential=2, margin_seconds=0.0)
    refused.acquire(0.0)
    refused.record_quota_error("sa-1", 1.0, QuotaScope.USER)
    assert not refused.held_by_quota_errors(1.0)  # sa-2 may still send
    refused.record_quota_error("sa-2", 1.0, QuotaScope.UNKNOWN)
    assert refused.held_by_quota_errors(1.0)
    restored = QuotaPacer(["sa-1", "sa-2"], per_credential=2, margin_seconds=0.0)
    restored.restore(carried_over(refused.snapshot(2.0)))
    assert restored.acquire(3.0) == (None, 57.0) and restored.held_by_quota_errors(3.0)
    assert not restored.held_by_quota_errors(61.0)


def carried_over(log: QuotaLog) -> QuotaLog:
    """The log as the next run reads it back from the state."""
    return QUOTA.decode(QUOTA.encode(log))


def test_sends_of_the_previous_run_still_count_after_a_restore():
    pacer = QuotaPacer(["sa-1"], per_credential=5, margin_seconds=0.0)
    for t in range(5):
        pacer.acquire(float(t))
    saved = carried_over(pacer.snapshot(10.0))
    next_run = QuotaPacer(["sa-1", "sa-new"], per_credential=5, margin_seconds=0.0)
    next_run.restore(saved)
    assert next_run.acquire(20.0)[0] == "sa-new"
    fresh = QuotaPacer(["sa-1"], per_credential=5, margin_seconds=0.0)
    fresh.restore(saved)
    assert fresh.acquire(20.0) == (None, 40.0)
    assert fresh.acquire(60.0) == ("sa-1", 0.0)  # the first of them has aged out


def test_a_snapshot_keeps_only_what_still_counts():
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=60, margin_seconds=1.0)
    for t in (0.0, 30.0, 50.0):
        pacer.acquire(t)
    pacer.record_quota_error("sa-2", 50.0)  # paused until 111
    log = pacer.snapshot(65.0)
    # Each send as the latest moment Google may have counted it (its send + the margin), for a window.
    assert log.window_seconds == 60.0
    assert log.projects == {ONE_PROJECT: (31.0, 51.0)}  # the send at 0 stopped counting at 61
    assert sum(map(len, log.sent.values())) == 2
    assert log.paused_until == {"sa-2": 111.0}
    assert pacer.snapshot(112.0).paused_until == {}  # a pause that ended is not carried over


def test_a_pause_and_the_project_window_are_carried_over():
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=60, per_project=2, margin_seconds=0.0)
    pacer.acquire(0.0)
    pacer.acquire(1.0)
    pacer.record_quota_error("sa-1", 1.0)
    restored = QuotaPacer(["sa-1", "sa-2"], per_credential=60, per_project=2, margin_seconds=0.0)
    restored.restore(carried_over(pacer.snapshot(2.0)))
    assert restored.acquire(2.0) == (None, 58.0)  # the project's two sends fill its window
    assert restored.acquire(60.0) == ("sa-2", 0.0)  # sa-1 is still paused (until 61)
    restored.restore(None)  # a first run has no log: nothing changes
    assert restored.next_ready_in(60.0) == 1.0


def test_sends_of_a_credential_no_longer_configured_still_count_for_the_project():
    pacer = QuotaPacer(["sa-old"], per_credential=60, per_project=2, margin_seconds=0.0)
    pacer.acquire(0.0)
    pacer.acquire(0.0)
    replaced = QuotaPacer(["sa-new"], per_credential=60, per_project=2, margin_seconds=0.0)
    replaced.restore(carried_over(pacer.snapshot(0.0)))
    assert replaced.acquire(10.0) == (None, 50.0)


def test_the_reserve_keeps_slots_free_in_every_window():
    pacer = QuotaPacer(["sa-1"], per_credential=10, reserve=2, margin_seconds=0.0)
    granted = [pacer.acquire(0.0)[0] for _ in range(10)]
    assert granted.count("sa-1") == 8


def test_a_clock_stepping_back_is_treated_as_standing_still():
    pacer = QuotaPacer(["sa-1"], per_credential=2, margin_seconds=0.0)
    pacer.acquire(100.0)
    pacer.acquire(100.0)
    assert pacer.acquire(50.0) == (None, 60.0)


def test_invalid_configurations_are_refused():
    with pytest.raises(ValueError):
        QuotaPacer([])
    with pytest.raises(ValueError):
        QuotaPacer(["a", "a"])
    with pytest.raises(ValueError):
        QuotaPacer(["a"], per_credential=2, reserve=2)


# -- reads of two requests (a spreadsheet's time zone, then its values) --------------------------------


def test_two_requests_go_only_when_both_fit_in_the_window_of_one_credential():
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=3, per_project=5, margin_seconds=0.0)
    assert pacer.acquire(0.0, requests=2) == ("sa-1", 0.0)
    assert pacer.acquire(1.0, requests=2) == ("sa-2", 0.0)
    # sa-1 has one slot left, sa-2 one, the project one: a single request fits, a pair does not.
    assert pacer.acquire(2.0, requests=2) == (None, 58.0)  # until the first pair ages out
    assert pacer.acquire(2.0) == ("sa-1", 0.0)
    assert pacer.acquire(60.0, requests=2) == ("sa-1", 0.0)  # sa-1's first pair has aged out
    assert pacer.usage()["credentials"]["sa-1"]["sent"] == 5


@pytest.mark.parametrize("seed", range(3))
def test_pairs_and_single_requests_mixed_never_exceed_a_limit_in_any_rolling_window(seed):
    rng = random.Random(seed)
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=60, per_project=100, margin_seconds=0.0)
    now, sends = 0.0, defaultdict(list)
    while sum(map(len, sends.values())) < 600:
        requests = rng.choice((1, 1, 2))
        credential, wait = pacer.acquire(now, requests=requests)
        if credential is None:
            now += wait
        else:
            sends[credential] += [now] * requests
            now += rng.choice((0.0, 0.01, 0.3))
    assert all(most_in_a_window(times) <= 60 for times in sends.values())
    assert most_in_a_window([t for times in sends.values() for t in times]) <= 100


def test_more_requests_than_a_limit_are_taken_as_the_limit_rather_than_never_sent():
    pacer = QuotaPacer(["sa-1"], per_credential=1, per_project=300, margin_seconds=0.0)
    assert pacer.acquire(0.0, requests=2) == ("sa-1", 0.0)
    assert pacer.acquire(0.0, requests=2) == (None, 60.0)


def test_credentials_excluded_are_not_given_out_and_the_wait_is_the_others():
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=2, per_project=300, margin_seconds=0.0)
    assert pacer.acquire(0.0, exclude={"sa-1"}) == ("sa-2", 0.0)
    assert pacer.acquire(1.0, exclude={"sa-1"}) == ("sa-2", 0.0)
    assert pacer.acquire(2.0, exclude={"sa-1"}) == (None, 58.0)  # sa-2's window, not sa-1's room
    assert pacer.acquire(2.0, exclude={"sa-1", "sa-2"}) == (None, math.inf)  # nobody to wait for
    assert pacer.acquire(2.0) == ("sa-1", 0.0)


def test_a_read_of_two_requests_takes_two_slots_or_waits_for_both():
    pacer = QuotaPacer(["sa-1"], per_credential=3, per_project=300, margin_seconds=0.0)
    assert pacer.acquire(0.0, 2) == ("sa-1", 0.0)
    assert pacer.acquire(10.0, 2) == (None, 50.0)  # one slot left: both free when the first two age out
    assert pacer.acquire(10.0) == ("sa-1", 0.0)
    assert pacer.usage()["sent"] == 3


def test_spare_room_is_left_beside_the_slots_taken_in_the_credentials_window_and_its_projects():
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=3, per_project=5, margin_seconds=0.0)
    assert pacer.acquire(0.0, spare={"sa-1": 1}) == ("sa-1", 0.0)  # fewest sends: sa-1, room for 2
    assert pacer.acquire(1.0, spare={"sa-1": 2}) == ("sa-2", 0.0)  # sa-1 has 1 sent: no room for 3
    # The project keeps the spares of all its credentials: 2 sent, room for 1 + 2 of 5.
    assert pacer.acquire(2.0, spare={"sa-1": 1, "sa-2": 1})[0] is not None
    assert pacer.acquire(3.0, spare={"sa-1": 1, "sa-2": 1}) == (None, 57.0)  # 3 sent: 3 + 1 + 2 > 5
    assert pacer.acquire(3.0)[0] is not None  # without the spare it would have gone


def test_follow_ups_of_the_read_granted_are_left_free_in_the_windows_of_the_credential_chosen():
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=3, per_project=5, margin_seconds=0.0)
    assert pacer.acquire(0.0, follow_ups=1) == ("sa-1", 0.0)
    assert pacer.acquire(1.0, follow_ups=1) == ("sa-2", 0.0)
    assert pacer.acquire(2.0, follow_ups=1, spare={"sa-1": 1})[0] == "sa-2"  # sa-1: 1 + 1 + 1 spare
    # 3 sent in the project: a read and its follow-up fit (3 + 2 = 5), not beside a spare of one more.
    assert pacer.acquire(3.0, follow_ups=1, spare={"sa-2": 1}) == (None, 57.0)
    assert pacer.acquire(3.0, follow_ups=1)[0] == "sa-1"
    assert pacer.usage()["sent"] == 4  # the follow-ups' room is kept, not taken


# -- a read answered frees its slots a window after its answer, when that is before the margin's guess


def test_a_read_answered_within_the_margin_frees_its_slot_a_window_after_its_answer():
    pacer = QuotaPacer(["sa-1"], per_credential=2, per_project=300, margin_seconds=1.0)
    assert pacer.acquire(0.0)[0] == pacer.acquire(0.0)[0] == "sa-1"
    assert pacer.acquire(0.1) == (None, 60.9)  # unanswered: counted until 1 s after its send
    pacer.answered("sa-1", 0.0, 0.4)  # one answered at 0.4: Google counted it by then
    assert pacer.acquire(0.5) == (None, 59.9)
    assert pacer.acquire(60.399)[0] is None
    assert pacer.acquire(60.4) == ("sa-1", 0.0)  # its slot; the other's frees at 61 only
    assert pacer.acquire(60.4) == (None, pytest.approx(0.6))


def test_a_read_answered_after_the_margin_keeps_the_margins_guess():
    # Arrived at Google by 1 s after its send, as guessed, or later: the guess is kept either way
    # (a read answered slowly most likely arrived early and was slow to answer).
    pacer = QuotaPacer(["sa-1"], per_credential=1, per_project=300, margin_seconds=1.0)
    pacer.acquire(0.0)
    pacer.answered("sa-1", 0.0, 5.0)
    assert pacer.acquire(5.0) == (None, 56.0)


def test_an_answer_frees_the_project_slot_too_and_a_read_of_two_requests_both():
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=60, per_project=2, margin_seconds=1.0)
    assert pacer.acquire(0.0, 2)[0] == "sa-1"
    pacer.answered("sa-1", 0.0, 0.5, requests=2)
    assert pacer.acquire(60.5, 2)[0] is not None  # both slots of the project's window, at once


def test_an_answer_for_a_send_no_longer_counted_changes_nothing():
    pacer = QuotaPacer(["sa-1"], per_credential=2, per_project=300, margin_seconds=1.0)
    pacer.acquire(0.0)
    pacer.acquire(0.2)
    pacer.record_quota_error("sa-1", 0.3, QuotaScope.USER, sent_at=0.0)  # refused: out of the logs
    pacer.answered("sa-1", 0.0, 0.3)  # must not take the other send's slot for its own
    # The other send's guess, and the others' sends Google's 429 showed (taken as sent at 0.3).
    assert pacer.snapshot(0.3).sent == {"sa-1": (1.2, 1.3)}


@pytest.mark.parametrize(("seed", "late"), [(4, None), (8, [0.0, 0.0, 0.5, 1.5, 3.0])],
                         ids=["sent-at-their-grant", "begun-up-to-3-s-late"])
def test_answers_never_let_a_rolling_window_hold_more_than_the_limit_at_the_server(seed, late):
    # Reads arrive at the server at any moment after their send, before their answer and (the
    # margin's assumption) within the margin; the server counts them then. However late within
    # that span, no server window holds more than the limit. ``late``: how long after its grant a
    # request may begin to go (every worker busy, a machine short of CPU), told to the pacer.
    rng = random.Random(seed)
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=20, per_project=30, margin_seconds=1.0)
    now, out, arrivals = 0.0, [], defaultdict(list)
    while sum(map(len, arrivals.values())) < 400:
        for flight in [f for f in out if f[3] <= now]:
            credential, sent, began, answer = flight
            arrivals[credential].append(rng.uniform(began, min(answer, began + 1.0)))
            pacer.answered(credential, sent, answer, left_at=None if late is None else began)
            out.remove(flight)
        credential, wait = pacer.acquire(now)
        if credential is None:
            now += min([wait, *(f[3] - now for f in out)]) or 0.01
            continue
        began = now if late is None else now + rng.choice(late)
        out.append((credential, now, began, began + rng.choice([0.05, 0.3, 0.5, 0.9, 3.0])))
        now += rng.choice([0.0, 0.0, 0.01, 0.2])
    everything = [t for times in arrivals.values() for t in times]
    assert most_in_a_window(everything) <= 30
    assert all(most_in_a_window(times) <= 20 for times in arrivals.values())


def test_a_log_of_send_times_over_the_widened_window_is_read_as_it_was_written():
    # Written as send times counted for the window widened by the margin (the window left unsaid).
    written = carried_over(QuotaLog(sent={"sa-1": (0.0,)}, projects={ONE_PROJECT: (0.0,)}))
    pacer = QuotaPacer(["sa-1"], per_credential=1, margin_seconds=1.0)
    pacer.restore(written)
    assert pacer.acquire(10.0) == (None, 51.0)  # frees at 61, as it would have for the writer


# -- a request that began to go after its grant: the margin's guess counts from then


def test_a_read_that_began_late_and_was_answered_late_counts_from_when_it_began():
    # Granted at 0, its worker began at 2 (every worker busy), answered at 5: Google may have
    # counted it up to 3 (the margin after it began), not 1.
    pacer = QuotaPacer(["sa-1"], per_credential=1, per_project=300, margin_seconds=1.0)
    pacer.acquire(0.0)
    pacer.answered("sa-1", 0.0, 5.0, left_at=2.0)
    assert pacer.acquire(5.0) == (None, 58.0)
    assert pacer.acquire(62.999)[0] is None  # just before: Google may still count it
    assert pacer.acquire(63.0) == ("sa-1", 0.0)  # at: aged out at the server too


def test_a_read_that_began_late_and_was_answered_soon_after_counts_from_its_answer():
    pacer = QuotaPacer(["sa-1"], per_credential=1, per_project=300, margin_seconds=1.0)
    pacer.acquire(0.0)
    pacer.answered("sa-1", 0.0, 2.4, left_at=2.0)  # the answer bounds it: 2.4, not 3
    assert pacer.acquire(62.399)[0] is None
    assert pacer.acquire(62.4) == ("sa-1", 0.0)


def test_a_read_that_began_at_once_keeps_the_margins_guess_or_its_earlier_answer():
    pacer = QuotaPacer(["sa-1", "sa-2"], per_credential=1, per_project=300, margin_seconds=1.0)
    pacer.acquire(0.0)
    pacer.acquire(0.0)
    pacer.answered("sa-2", 0.0, 0.4, left_at=0.0)
    pacer.answered("sa-1", 0.0, 5.0, left_at=0.0)
    assert pacer.snapshot(5.0).sent == {"sa-1": (1.0,), "sa-2": (0.4,)}


def test_a_window_s_last_slot_goes_to_a_read_without_room_for_its_follow_ups():
    pacer = QuotaPacer(["sa-1"], per_credential=3, per_project=300, margin_seconds=0.0)
    assert pacer.acquire_with_room(0.0, 1, 1) == ("sa-1", 0.0, 1)
    assert pacer.acquire_with_room(1.0, 1, 1) == ("sa-1", 0.0, 1)  # 2 sent, the third slot kept free
    assert pacer.acquire_with_room(2.0, 1, 1) == ("sa-1", 0.0, 0)  # the last slot: no room beside it
    assert pacer.acquire_with_room(3.0, 1, 1) == (None, 57.0, 0)
