"""A spreadsheet that cannot be read is told on the status page as its Telegram alert tells it: what
is wrong and what to do first, Google's own words after. Real runs on the sandbox send the alerts;
the page is compared with what the chat received, word for word."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import pytest
from cli_fixtures import A, B, C, state_dir, write_config
from report_fixtures import CHAT, page_of, run_on, sandbox_site

from monitor.config import load_config
from monitor.core.errors import ErrorInfo
from monitor.engine.tasks import Task
from monitor.report.page import render_page
from monitor.report.page_data import build_report
from monitor.state import changing_state, read_state


def visible_text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def page_says(page: str, name: str) -> str:
    """The page's line on why ``name`` cannot be read, in its problems list, as a person reads it."""
    block = re.search(rf'<div class="problem [a-z]+"><b><a [^>]*>{re.escape(name)}</a>.*?</div>', page)
    assert block, f"{name} is not among the problems"
    [line] = [item for item in re.findall(r"<li>(.*?)</li>", block.group(0)) if "read" in item]
    return visible_text(line)


def chat_says(sandbox, name: str) -> str:
    lines = [line for message in sandbox.telegram.messages(CHAT) for line in message.plain_text.splitlines()
             if line.startswith(f"🔴 {name} ")]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture
def told(tmp_path):
    """Store 1 not shared (403), Store 2 deleted (404), Store 3 with its Stock tab renamed; one run."""
    with sandbox_site(tmp_path, {A: 10, B: None, C: 10}) as (sandbox, clock, path):
        sandbox.google.faults.add({"spreadsheet": A, "statuses": [403], "repeat": True})
        sandbox.google.store.put_control(C, {"title": "Store", "tabs": {"Stock (old)": [["SKU"], ["A-1"]]}})
        run_on(path, clock)
        yield sandbox, page_of(path)


@pytest.mark.parametrize("name", ["Store 1", "Store 2", "Store 3"])
def test_the_page_says_what_is_wrong_and_what_to_do_in_the_alerts_words(told, name):
    sandbox, page = told
    said = page_says(page, name)
    alert = chat_says(sandbox, name)
    assert said.startswith("cannot be read: ") and "To fix: " in said and "(Google: " in said
    assert alert.endswith(said), (alert, said)  # the alert's "🔴 Store 1 " before the same words


def test_the_dead_letter_table_says_it_in_the_same_words(told):
    sandbox, page = told
    table = page[page.index("Could not be read (dead-letter queue)"):]
    rows = {visible_text(name): visible_text(cell)
            for name, cell in re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td>", table)}
    for name in ("Store 1", "Store 2", "Store 3"):
        assert chat_says(sandbox, name).endswith(rows[name])


def test_a_refusal_with_no_better_words_than_googles_is_shown_in_them(tmp_path):
    """No lead and no fix to give (an odd 400): Google's words, as the alert has them, and no "To fix"."""
    config = write_config(tmp_path)
    odd = ErrorInfo("permanent", "Request contains an invalid argument.", 400, "INVALID_ARGUMENT")
    now = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)
    with changing_state(state_dir(config), actor="test", now=now) as session:
        session.state.dlq.record(A, "Store 1", Task("t1", A, "r1", now), odd, now)
    loaded = load_config(config, {})
    data = build_report(loaded, read_state(loaded.run.state_dir), now)
    [row] = data["dlq"]
    assert row["unreadable"] == {"problem": None, "fix": None,
                                 "google": "400: Request contains an invalid argument."}
    assert "<td>could not be read: 400: Request contains an invalid argument.</td>" in render_page(data)
