"""`sheet-monitor demo --report`: the demo round's status page and a screenshot of it, kept in a folder
of the user's for them to open. The week before the round is made up (monitor.app.demo_history), so
that the charts have something to draw; the page's last run and its verdicts are the demo's own."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from monitor.app.demo_history import add_generated_history
from monitor.config import Config
from monitor.core.wording import counted
from monitor.report.browser import Browser, BrowserError, chromium_path
from monitor.report.page_data import project_quotas
from monitor.report.publish import write_page
from monitor.state import changing_state
from monitor.storage.configured import state_location

PAGE, SCREENSHOT = "status.html", "status.png"
SHOT_WIDTH, SHOT_HEIGHT = 1024, 1200  # the top of the page: the counts, the charts, the first problems


def save_demo_report(config: Config, round_started: datetime, run_budget: timedelta, folder: Path, seed: int,
                     say: Callable[[str], None]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    location = state_location(config, {})
    with changing_state(location, actor="demo-report", now=now) as session:
        runs = add_generated_history(session.state, [sheet.id for sheet in config.sheets], round_started,
                                     config.report.keep, config.run.round_interval, run_budget,
                                     project_quotas(config), seed)
        page = folder / PAGE
        size = write_page(config, session.state, now, page)
    say(f"\nStatus page: {page.resolve()} ({size // 1024} KB; open it in a browser). The week before the "
        f"round ({counted(runs, 'run')}) is generated so that its charts have a history to draw.")
    if chromium_path() is None:
        say("  No screenshot: it needs Chromium (apt-get install chromium).")
        return
    shot = folder / SCREENSHOT
    try:
        with Browser(width=SHOT_WIDTH, height=SHOT_HEIGHT) as browser:
            browser.open(page.resolve().as_uri())
            browser.screenshot(shot, full_page=False)
    except BrowserError as exc:
        say(f"  No screenshot: {exc}")
        return
    say(f"Its screenshot: {shot.resolve()}")
