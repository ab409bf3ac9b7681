"""docs/operations.md shows every message kind as the real renderers give it today: an example per
event class with a line, the reminder, the round summary, the digest and the watchdog's messages.
Regenerate with ``.venv/bin/python tests/render_examples.py --write``."""

from __future__ import annotations

import render_examples

from monitor.engine import events as ev
from monitor.notify.render import render
from monitor.watchdog import outages
from monitor.watchdog.judge import STATUSES


def test_the_operations_guide_shows_every_message_as_rendered_today():
    document = render_examples.DOC.read_text(encoding="utf-8")
    assert render_examples.BEGIN in document and render_examples.END in document
    current = render_examples.replaced(document, render_examples.section())
    assert current == document, (
        "docs/operations.md's message examples are out of date: run "
        "`.venv/bin/python tests/render_examples.py --write` and commit the result"
    )


def test_every_event_class_people_hear_about_has_an_example():
    shown = {kind for _, kind, _ in render_examples.event_examples()}
    fallback = render.dispatch(ev.Event)
    told = {kind for kind in ev.EVENT_TYPES if render.dispatch(kind) is not fallback}
    missing = sorted(kind.__name__ for kind in told - shown)
    assert not missing, f"no example in tests/render_examples.py for {missing}"


def test_writing_replaces_only_the_generated_section():
    written: list[str] = []
    assert render_examples.main(["--write"], write=written.append) == 0
    [text] = written
    before, _, after = render_examples.DOC.read_text(encoding="utf-8").partition(render_examples.BEGIN)
    assert text.startswith(before) and text.endswith(after.partition(render_examples.END)[2])
    assert text.count(render_examples.BEGIN) == 1 and "#### Watchdog: state file unreadable" in text


def test_every_watchdog_verdict_but_healthy_has_an_example():
    shown = {message.text.split("\n")[0] for _, message in render_examples.watchdog_examples()}
    titles = {title for status, title in outages._TITLES.items() if status in STATUSES}
    assert all(any(title in line for line in shown) for title in titles)
