"""The status page of a fresh install, after its first real run on the sandbox: a spreadsheet is "not
ok" only when it warned or failed, never for the grey stretch before its first check, and the time
axes span what exists (the first run to now), not a week with one run at its end."""

from __future__ import annotations

from datetime import timedelta

import pytest
from cli_fixtures import A, B, C, D
from report_fixtures import NEXT_ROUND, run_on, sandbox_site

from monitor.config import load_config
from monitor.core.timefmt import format_utc, parse_utc
from monitor.report.charts import Series, line_chart
from monitor.report.page import render_page
from monitor.report.page_data import build_report
from monitor.state import read_state


@pytest.fixture
def fresh(tmp_path):
    """A and C ok, B warning, after one run; D added to the config since, never checked."""
    with sandbox_site(tmp_path, {A: 10, B: 3, C: 10, D: 10}) as (sandbox, clock, path):
        first_run = clock.now()
        run_on(path, clock)
        yield sandbox, clock, path, first_run


def report_at(path, now):
    config = load_config(path, {}, require_secrets=False)  # as `report` reads it
    return build_report(config, read_state(config.run.state_dir), now)


def strip_ids(data) -> list[str]:
    return [strip["id"] for strip in data["timelines"]["strips"]]


def test_the_grey_before_a_first_check_does_not_make_a_spreadsheet_not_ok(fresh):
    _, clock, path, _ = fresh
    data = report_at(path, clock.now() + timedelta(hours=2))
    assert strip_ids(data) == [B]  # only the one that warned
    timelines = data["timelines"]
    assert (timelines["ok_all_the_time"], timelines["not_checked_yet"]) == (4 - 1, 0)
    [b_strip] = timelines["strips"]
    assert [s["health"] for s in b_strip["segments"]][-1] == "warn"
    warned = sum(s["seconds"] for s in b_strip["segments"] if s["health"] == "warn")
    assert b_strip["bad_seconds"] == warned  # its grey start is not counted as bad


def test_a_spreadsheet_added_since_the_run_is_counted_as_not_checked_yet(fresh):
    _, clock, path, _ = fresh
    text = path.read_text().replace(f'id = "{D}"', f'id = "{D[:-1]}y"')  # D replaced by one never read
    path.write_text(text)
    timelines = report_at(path, clock.now())["timelines"]
    assert (timelines["ok_all_the_time"], timelines["not_checked_yet"]) == (2, 1)
    assert "2 spreadsheets ok all the time, 1 not checked yet" in render_page(report_at(path, clock.now()))


def test_the_axes_begin_at_the_first_run_until_keep_has_passed(fresh):
    _, clock, path, first_run = fresh
    later = clock.now() + timedelta(hours=3)
    data = report_at(path, later)
    assert len(data["runs"]) == 1
    start = parse_utc(data["timelines"]["start"])
    assert first_run <= start <= parse_utc(data["runs"][0]["started_at"]) + timedelta(seconds=1)
    assert data["timelines"]["end"] == format_utc(later)
    page = render_page(data)
    assert f'history since <time datetime="{data["timelines"]["start"]}">' in page
    assert "history of the last 7 days" not in page

    clock.advance(NEXT_ROUND)  # a second run; eight days on, the first one is older than keep
    run_on(path, clock)
    data = report_at(path, first_run + timedelta(days=8))
    assert data["timelines"]["start"] == format_utc(first_run + timedelta(days=1))  # keep: 7 days
    assert "history of the last 7 days" in render_page(data)


def test_right_after_the_first_run_the_axes_span_a_round_interval(fresh):
    """A page written as the first run ends: its axis is not a few seconds wide."""
    _, clock, path, _ = fresh
    now = clock.now()
    data = report_at(path, now)
    assert parse_utc(data["timelines"]["start"]) == now - timedelta(minutes=5)  # round_interval


def test_one_run_is_drawn_as_a_dot_where_a_line_would_have_no_length():
    chart = line_chart("duration", [Series("duration", "s0", [(150.0, 40.0)])], start=100.0, end=200.0)
    assert "<polyline" not in chart
    [dot] = [part for part in chart.split("<") if part.startswith("circle")]
    assert 'class="s0"' in dot and 'cx="378.0"' in dot  # halfway along the plot (44 to 712)
    two = line_chart("duration", [Series("duration", "s0", [(150.0, 40.0), (160.0, 30.0)])],
                     start=100.0, end=200.0)
    assert "<polyline" in two and "<circle" not in two
