"""The status page and its JSON, built from a state as runs leave it: what it shows, in which order,
escaped; written whole or not at all; and after a run, never failing it."""

from __future__ import annotations

import json
import logging
import re
from datetime import timedelta

import pytest
from cli_fixtures import B, C, invoke, json_of
from report_fixtures import HOSTILE_FINDING, NOW, report_config, seed_with_history

from monitor.app.report_step import publish_page
from monitor.config import load_config
from monitor.report.charts import Guide, Series, line_chart, strip
from monitor.report.page import render_page
from monitor.report.page_data import build_report
from monitor.report.publish import write_page
from monitor.state import read_state


@pytest.fixture
def config_path(tmp_path):
    path = report_config(tmp_path / "site")
    seed_with_history(path)
    return path


def page_and_data(config_path):
    config = load_config(config_path, {})
    state = read_state(config.run.state_dir)
    data = build_report(config, state, NOW)
    return render_page(data), data


def test_text_from_spreadsheets_is_shown_as_text_never_as_markup(config_path):
    page, _ = page_and_data(config_path)
    assert "<script" not in page and "onerror=" not in page.replace("onerror=&quot;", "")
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt; &amp; &quot;Store&quot;" in page
    assert "&lt;img src=x onerror=&quot;window.pwned = 2&quot;&gt; below 5" in page
    assert "migrating &lt;the&gt; sheet" in page


def test_failing_spreadsheets_come_before_warning_ones_with_links_to_the_bad_cell(config_path):
    _, data = page_and_data(config_path)
    listed = data["problems"]["listed"]
    assert [(p["id"], p["health"]) for p in listed] == [(B, "warn")]  # A is muted, C skipped
    (finding,) = listed[0]["findings"]
    assert finding["message"] == HOSTILE_FINDING
    assert finding["url"].endswith(f"/d/{B}/edit#gid=0&range=C7")
    assert data["fleet"]["by_health"]["muted"] == 1 and [row["id"] for row in data["breakers"]] == [C]
    assert len(data["dlq"]) == 1 and data["monitor"]["telegram"]["outbox"] == 1


def test_spreadsheets_under_maintenance_have_their_card_and_table_with_the_windows_end_and_reason(tmp_path):
    window = (f'\n[[maintenance]]\nstart = "{(NOW - timedelta(hours=1)).isoformat()}"\n'
              f'end = "{(NOW + timedelta(hours=1)).isoformat()}"\nsheets = ["{B}"]\n'
              'reason = "moving <the> servers"\n')
    path = report_config(tmp_path / "site", extra=window)
    seed_with_history(path)
    page, data = page_and_data(path)
    assert data["fleet"]["by_health"]["maintenance"] == 1 and data["problems"]["listed"] == []
    [row] = data["maintenance"]
    assert (row["id"], row["reason"], row["until"]) == (B, "moving <the> servers", "2026-11-30T16:00:00.000Z")
    assert '<div class="card maintenance"><b>1</b>in maintenance</div>' in page
    assert "Under maintenance" in page and "moving &lt;the&gt; servers" in page


def test_the_history_spans_keep_and_each_run_is_measured_against_budget_and_quota(config_path):
    _, data = page_and_data(config_path)
    runs = data["runs"]
    assert len(runs) == 7 * 24 * 12 - 36  # every 5 minutes of the week but its last 3 hours
    assert runs[0]["started_at"] >= "2026-11-23T15:00" and runs[-1]["budget_seconds"] == 240
    assert data["quota_per_minute"] == {"example": 60}  # its one credential, 60 reads a minute
    assert all(set(run["reads_per_minute"]) == {"example"} for run in runs)
    strips = data["timelines"]
    assert len(strips["strips"]) + strips["ok_all_the_time"] == 3
    b_strip = next(s for s in strips["strips"] if s["id"] == B)
    assert b_strip["segments"][-1]["health"] == "warn"
    total = sum(segment["seconds"] for segment in b_strip["segments"])
    assert total == pytest.approx(timedelta(days=7).total_seconds())


def test_report_json_prints_the_pages_data(config_path):
    result = invoke(config_path, "report", "--json")
    assert result.exit_code == 0
    data = json_of(result)
    assert set(data) >= {"generated_at", "fleet", "problems", "muted", "breakers", "dlq", "runs",
                         "quota_per_minute", "round_interval_seconds", "timelines", "monitor"}


def test_report_html_writes_the_page_and_says_where(config_path, tmp_path):
    target = tmp_path / "page.html"
    result = invoke(config_path, "report", "--html", str(target))
    assert result.exit_code == 0 and f"written to {target}" in result.stdout
    assert target.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("args", [(), ("--json", "--html", "x.html")])
def test_report_needs_one_of_html_or_json(config_path, args):
    result = invoke(config_path, "report", *args)
    assert result.exit_code == 2 and "--html FILE" in result.stderr


def test_a_page_that_cannot_be_written_fails_report_with_the_folder_named(config_path, tmp_path):
    result = invoke(config_path, "report", "--html", str(tmp_path / "missing" / "page.html"))
    assert result.exit_code == 1 and "missing/page.html" in result.stderr and "folder exists" in result.stderr


def test_the_page_is_replaced_whole_and_leaves_no_temporary_file(config_path, tmp_path):
    config, state = load_config(config_path, {}), read_state(config_path.parent / "state")
    target = tmp_path / "out" / "index.html"
    target.parent.mkdir()
    target.write_text("the old page")
    write_page(config, state, NOW, target)
    assert [p.name for p in target.parent.iterdir()] == ["index.html"]
    assert "sheet-monitor status" in target.read_text() and oct(target.stat().st_mode)[-3:] == "644"


def test_after_a_run_a_page_not_written_is_one_warning_and_no_failure(tmp_path, caplog):
    path = report_config(tmp_path / "site", extra=f'\n[report]\nhtml = "{tmp_path}/nowhere/index.html"\n')
    seed_with_history(path)
    config = load_config(path, {})
    with caplog.at_level(logging.INFO):
        publish_page(config, read_state(config.run.state_dir), NOW)  # does not raise
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "report_not_written" in warnings[0].getMessage()


def test_a_line_chart_scales_values_to_its_box_and_names_its_guides():
    svg = line_chart("Run <duration>", [Series("dur", "s0", [(0.0, 0.0), (100.0, 50.0)])],
                     [Guide("budget & more", 100.0)], start=0.0, end=100.0)
    points = re.search(r'points="([^"]+)"', svg).group(1).split()
    (x0, y0), (x1, y1) = (tuple(map(float, p.split(","))) for p in points)
    assert x0 == 44.0 and x1 == 712.0  # the plot's left and right edges
    assert y0 == 158.0 and y1 < y0  # zero at the bottom, 50 above it
    assert "budget &amp; more" in svg and "Run &lt;duration&gt;" in svg


def test_a_strip_gives_each_segment_its_share_of_the_width():
    svg = strip([(0.0, 25.0, "ok"), (25.0, 100.0, "fail")], start=0.0, end=100.0, label="x")
    assert '<rect class="ok" x="0.0" width="250.0"' in svg
    assert '<rect class="fail" x="250.0" width="750.0"' in svg


def test_json_and_page_agree_on_counts(config_path):
    page, data = page_and_data(config_path)
    json.dumps(data)  # JSON-able as it is
    assert f"<b>{data['fleet']['by_health']['warn']}</b>warning" in page


def test_report_html_is_a_file_beside_the_config_unless_absolute(tmp_path):
    path = report_config(tmp_path / "site", extra='\n[report]\nhtml = "public/index.html"\nkeep = "2d"\n')
    config = load_config(path, {})
    assert config.report.html == tmp_path / "site" / "public" / "index.html"
    assert config.report.keep == timedelta(days=2)


def test_a_folder_given_as_report_html_is_refused_with_its_line_and_an_example(tmp_path):
    from monitor.config import ConfigError

    path = report_config(tmp_path / "site", extra='\n[report]\nhtml = "public/"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path, {})
    text = str(info.value)
    assert "monitor.toml:" in text and "report.html" in text
    assert 'html = "/var/www/sheet-monitor/index.html"' in text
