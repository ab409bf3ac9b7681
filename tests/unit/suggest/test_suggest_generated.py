"""The profile suggested from generated healthy stores catches every breakage of the data the dataset
generator knows, raises no finding on the stores it came from, and loads as a config."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from suggest_catching import FAULTS, HARMLESS, catch_breakages

from sheet_sandbox import dataset

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_a_suggested_profile_catches_each_breakage_injected_into_each_healthy_store(tmp_path):
    data = dataset.generate(8, seed=3, now=NOW)
    found = catch_breakages(data, NOW, None, timedelta(hours=1), tmp_path)
    kinds = {b.kind for b in dataset.BREAKAGES} - FAULTS
    assert found.healthy >= 5 and found.false_alarms == []
    assert found.missed_where == {}
    assert set(found.caught) == kinds and set(found.caught.values()) == {found.healthy}
    assert kinds >= HARMLESS  # a moved column is judged too, and raises nothing


def test_a_profile_suggested_from_a_few_stores_still_passes_them_hours_later(tmp_path):
    data = dataset.generate(12, seed=5, now=NOW)
    found = catch_breakages(data, NOW, 2, timedelta(hours=6), tmp_path)
    assert found.suggested_from == 2
    # Every store is judged, not only the two: a healthy one outside them may show a value beyond
    # their bounds, but the stores the profile came from pass, and every breakage is still caught.
    assert not [line for line in found.false_alarms if line.split(":")[0] in found.toml]
    assert found.caught_count == found.breakages
