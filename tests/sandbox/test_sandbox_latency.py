"""The sandbox's latency model: its figures, its switches and its counts, without waiting on anything."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from concurrency_helpers import gathered_from_threads

from monitor.core.clock import ManualClock
from sheet_sandbox import latency as lat
from sheet_sandbox.google import GoogleSandbox
from sheet_sandbox.http import Request
from sheet_sandbox.latency import GOOGLE_MODEL, Latency, LatencyModel, parse_setting

DRAWS = 20_000
# What gspread's recorded cassettes show per interaction (p10, p50, p90 of the cassettes' means).
RECORDED_QUANTILES = {0.1: 0.29, 0.5: 0.40, 0.9: 0.57}
MONITOR_READ_BYTES = 44_000  # a 5-range read of a generated 400-row Stock tab


def draws(model: LatencyModel = GOOGLE_MODEL, seed: int = 1, body_bytes: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [model.draw(rng, body_bytes) for _ in range(DRAWS)]


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))]


def test_the_same_seed_gives_the_same_draws_and_another_seed_others():
    first, again = Latency(seed=3), Latency(seed=3)
    sequence = [first.delay(100) for _ in range(50)]
    assert sequence == [again.delay(100) for _ in range(50)]
    assert sequence != [Latency(seed=4).delay(100) for _ in range(50)]


@pytest.mark.parametrize("q", sorted(RECORDED_QUANTILES))
def test_the_body_matches_the_fitted_log_normal(q):
    expected = lat.BODY_MEDIAN_SECONDS * math.exp(lat.BODY_SIGMA * statistics.NormalDist().inv_cdf(q))
    assert quantile(draws(), q) == pytest.approx(expected, rel=0.03)


@pytest.mark.parametrize("q", sorted(RECORDED_QUANTILES))
def test_answers_plus_the_tails_share_match_the_recorded_cassettes(q):
    values = draws()
    tail_share = statistics.fmean(values) - statistics.fmean(v for v in values if v < lat.TAIL_MIN_SECONDS)
    assert quantile(values, q) + tail_share == pytest.approx(RECORDED_QUANTILES[q], rel=0.06)


def test_a_few_answers_take_several_seconds_and_none_more_than_the_tail_allows():
    values = draws()
    slow = [v for v in values if v >= lat.TAIL_MIN_SECONDS]
    # 0.6 % of 20,000 is 120; the bounds are over four standard deviations wide.
    assert 75 <= len(slow) <= 165
    assert any(v > 4.0 for v in slow)
    assert max(values) <= lat.TAIL_MAX_SECONDS
    assert statistics.median(values) < 0.5  # the tail does not move the body


def test_larger_answers_are_slower_by_the_per_byte_term():
    sizes = [0, 1_000, MONITOR_READ_BYTES, 1_000_000]
    per_size = [draws(body_bytes=size) for size in sizes]  # the same seed: the same underlying draws
    for index in range(len(sizes) - 1):
        gaps = {round(b - a, 9) for a, b in zip(per_size[index], per_size[index + 1], strict=True)}
        assert gaps == {round((sizes[index + 1] - sizes[index]) * lat.SECONDS_PER_BYTE, 9)}
        assert min(gaps) > 0
    assert 1.5 < lat.SECONDS_PER_BYTE * 1_000_000 < 2.5  # ~2 s per MB of compact JSON
    assert statistics.median(per_size[2]) == pytest.approx(0.38 + 0.085, abs=0.01)


def test_a_scale_multiplies_every_draw():
    full, tenth = Latency("google", seed=5), Latency(0.1, seed=5)
    for size in (0, 500, 80_000):
        assert tenth.delay(size) == pytest.approx(full.delay(size) * 0.1)


@pytest.mark.parametrize("setting", ["off", 0, 0.0])
def test_off_or_a_zero_scale_delays_nothing_and_counts_nothing(setting):
    latency = Latency(setting)
    assert [latency.delay(10_000) for _ in range(5)] == [0.0] * 5
    assert latency.snapshot()["delayed"] == 0
    assert latency.active is False
    assert latency.median_seconds() == 0.0


def test_delays_are_counted_with_their_total_and_mean():
    latency = Latency(seed=2)
    given = [latency.delay(1_000) for _ in range(4)]
    snapshot = latency.snapshot()
    assert snapshot["delayed"] == 4
    assert snapshot["total_seconds"] == pytest.approx(sum(given), abs=1e-5)
    assert snapshot["mean_seconds"] == pytest.approx(sum(given) / 4, abs=1e-5)
    assert {key: snapshot[key] for key in ("model", "scale", "seed", "active")} == {
        "model": "google", "scale": 1.0, "seed": 2, "active": True}


def test_reset_forgets_the_counts_and_replays_the_same_draws():
    latency = Latency(seed=9)
    before = [latency.delay(0) for _ in range(5)]
    latency.reset()
    assert latency.snapshot()["delayed"] == 0
    assert [latency.delay(0) for _ in range(5)] == before


def test_threads_drawing_at_once_share_one_sequence():
    sequential = Latency(seed=11)
    expected = sorted(sequential.delay(0) for _ in range(800))
    shared = Latency(seed=11)
    got = gathered_from_threads(lambda: [shared.delay(0) for _ in range(100)])
    assert sorted(got) == expected  # every draw handed out once, none lost or repeated
    assert shared.snapshot()["delayed"] == 800


def test_configure_changes_model_scale_and_seed():
    latency = Latency(seed=1)
    latency.configure(model="off")
    assert latency.delay(0) == 0.0
    latency.configure(model="google", scale=0.5, seed=7)
    assert latency.delay(0) == pytest.approx(0.5 * GOOGLE_MODEL.draw(random.Random(7), 0))
    assert latency.snapshot()["seed"] == 7


@pytest.mark.parametrize(("settings", "message"), [
    ({"model": "fast"}, '"model" must be one of google, off'),
    ({"scale": -0.1}, '"scale" must be from 0 to 100'),
    ({"scale": 101}, '"scale" must be from 0 to 100'),
    ({"scale": float("nan")}, '"scale" must be a number'),
    ({"scale": "0.1"}, '"scale" must be a number'),
    ({"scale": True}, '"scale" must be a number'),
    ({"seed": 1.5}, '"seed" must be an integer'),
    ({"model": "off", "seed": "3"}, '"seed" must be an integer'),
])
def test_bad_settings_are_refused_naming_the_key_and_change_nothing(settings, message):
    latency = Latency(0.2, seed=1)
    with pytest.raises(ValueError, match=message):
        latency.configure(**settings)
    snapshot = latency.snapshot()
    assert (snapshot["model"], snapshot["scale"], snapshot["seed"]) == ("google", 0.2, 1)


@pytest.mark.parametrize("value", ["fast", None, True, [0.1]])
def test_a_latency_argument_must_be_google_off_or_a_scale(value):
    with pytest.raises(ValueError, match="latency must be 'google', 'off' or a scale"):
        parse_setting(value)
    with pytest.raises(ValueError, match='"scale" must be from 0 to 100, got -1'):
        parse_setting(-1)


def test_settings_parse_to_model_and_scale():
    assert parse_setting("google") == ("google", 1.0)
    assert parse_setting("off") == ("off", 1.0)
    assert parse_setting(0.05) == ("google", 0.05)


@pytest.mark.parametrize(("setting", "text"), [
    ("google", "Google latency model at full scale: median 380 ms"),
    (0.1, "Google latency model at 1/10 scale: median 38 ms"),
    (0.02, "Google latency model at 1/50 scale: median 8 ms"),
    (2.5, "Google latency model at scale 2.5: median 950 ms"),
    ("off", "no added latency (answers as fast as the sandbox can)"),
])
def test_the_description_says_the_scale_and_the_median(setting, text):
    assert Latency(setting).describe() == text


def sandbox_request(sandbox: GoogleSandbox, path: str, token: str | None = None):
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return sandbox(Request("GET", path, {}, headers, b""))


def test_every_google_answer_is_delayed_on_top_of_a_faults_latency_but_not_the_control_api():
    sandbox = GoogleSandbox(clock=ManualClock(), seed=4, latency=1.0)
    token = sandbox.auth.mint_token("monitor-1@sheet-monitor-sandbox.iam.gserviceaccount.com")
    sandbox.store.put_control("s1", {"title": "T", "tabs": {"Stock": [["a", 1]]}})
    sandbox.faults.add({"spreadsheet": "s1", "latency_ms": 250, "times": 1})
    rng = random.Random(4)

    slow = sandbox_request(sandbox, "/v4/spreadsheets/s1/values/Stock!A1", token)
    assert slow.status == 200
    assert slow.delay_seconds == pytest.approx(0.25 + GOOGLE_MODEL.draw(rng, len(slow.body)))
    refused = sandbox_request(sandbox, "/v4/spreadsheets/s1/values/Stock!A1")
    assert refused.status == 403  # errors take Google's time too
    assert refused.delay_seconds == pytest.approx(GOOGLE_MODEL.draw(rng, len(refused.body)))
    assert sandbox_request(sandbox, "/_sandbox/stats").delay_seconds == 0.0
    assert sandbox.latency.snapshot()["delayed"] == 2


def test_a_held_request_is_not_counted_as_a_delayed_answer():
    sandbox = GoogleSandbox(clock=ManualClock(), require_auth=False, latency="google")
    sandbox.faults.add({"spreadsheet": "*", "hang": True, "times": 1})
    held = sandbox_request(sandbox, "/v4/spreadsheets/s1")
    assert held.hang and held.delay_seconds == 0.0
    assert sandbox.latency.snapshot()["delayed"] == 0


def test_a_sandbox_answers_with_googles_latency_unless_told_otherwise():
    assert GoogleSandbox(clock=ManualClock()).latency.snapshot()["model"] == "google"
    assert GoogleSandbox(clock=ManualClock(), latency="off").latency.active is False
