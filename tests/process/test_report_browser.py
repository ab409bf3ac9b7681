"""The status page in a real browser: headless Chromium (Debian's package) driven over the DevTools
protocol. A page rendered from a week of generated history must load without a console error, show
its key parts (checked in the DOM, not in pixels), keep spreadsheet text inert, fit a phone's width,
and give a screenshot. Without Chromium the tests skip here and fail under CI (.ci/run installs it)."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from cli_fixtures import A, B
from report_fixtures import (
    HOSTILE_FINDING,
    HOSTILE_NAME,
    NOW,
    report_config,
    run_on,
    sandbox_site,
    seed_with_history,
)

from monitor.config import load_config
from monitor.report.browser import Browser, chromium_path
from monitor.report.publish import write_page
from monitor.state import read_state

pytestmark = pytest.mark.skipif(
    chromium_path() is None and not os.environ.get("CI"),
    reason="no Chromium on this machine (apt-get install chromium); CI installs it and runs these")

VISIBLE = """(selector) => [...document.querySelectorAll(selector)].filter(element => {
    const box = element.getBoundingClientRect(), style = getComputedStyle(element);
    return box.width > 0 && box.height > 0 && style.visibility !== "hidden" && style.display !== "none";
}).length"""


@pytest.fixture
def page(tmp_path):
    config_path = report_config(tmp_path / "site")
    seed_with_history(config_path)
    config = load_config(config_path, {})
    target = tmp_path / "index.html"
    write_page(config, read_state(config.run.state_dir), NOW, target)
    return target


def visible(browser: Browser, selector: str) -> int:
    return browser.evaluate(f"({VISIBLE})({selector!r})")


def test_the_page_loads_without_errors_and_shows_its_key_parts(page, tmp_path):
    with Browser(width=1280, height=900) as browser:
        browser.open(page.as_uri())
        assert browser.console_errors == []
        for part in ("#verdict", "#fleet .card", "#problems .problem", "#attention table", "#monitor li"):
            assert visible(browser, part) >= 1, part
        assert visible(browser, "#charts svg.chart") == 3
        # duration, reads of the one project, failing, warning (a flat line has no height: counted apart)
        assert browser.evaluate("document.querySelectorAll('#charts polyline').length") == 4
        # A line is a line: filled, it would close into a shape from its last point back to its first.
        fills = browser.evaluate(
            "[...document.querySelectorAll('#charts polyline')].map(line => getComputedStyle(line).fill)")
        assert set(fills) == {"none"}
        assert visible(browser, "#timelines svg.strip rect") >= 3
        text = browser.evaluate("document.body.innerText")
        assert HOSTILE_NAME in text and HOSTILE_FINDING in text  # shown as written, as text
        assert browser.evaluate("typeof window.pwned") == "undefined"  # and nothing of it ran
        assert browser.evaluate("document.scripts.length") == 0
        shot = tmp_path / "page.png"
        browser.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_on_a_phone_nothing_is_wider_than_the_screen(page):
    with Browser(width=390, height=844) as browser:
        browser.open(page.as_uri())
        assert browser.console_errors == []
        assert browser.evaluate("document.documentElement.scrollWidth") <= 390
        assert visible(browser, "#fleet .card") >= 3 and visible(browser, "#charts svg.chart") == 3


def test_a_fresh_install_draws_its_one_run_as_a_visible_dot_in_every_chart(tmp_path):
    with sandbox_site(tmp_path, {A: 10, B: 3}) as (_, clock, path):
        run_on(path, clock)
        config = load_config(path, {}, require_secrets=False)
        target = tmp_path / "index.html"
        write_page(config, read_state(config.run.state_dir), clock.now() + timedelta(minutes=1), target)
    with Browser(width=1280, height=900) as browser:
        browser.open(target.as_uri())
        assert browser.console_errors == []
        # duration, reads of the one project, failing, warning: one dot each, filled with its colour
        assert visible(browser, "#charts svg.chart circle") == 4
        fills = browser.evaluate(
            "[...document.querySelectorAll('#charts circle')].map(dot => getComputedStyle(dot).fill)")
        assert "none" not in fills and len(set(fills)) >= 3  # lines' colours, not one default black
        assert visible(browser, "#timelines svg.strip") == 1  # B alone: A was ok at its every check


def test_console_errors_are_caught(tmp_path):
    """The check above can fail: a page that logs an error is seen to."""
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><title>x</title><script>console.error('it broke')</script>")
    with Browser() as browser:
        browser.open(broken.as_uri())
    assert browser.console_errors == ["it broke"]
