"""Column checks in the config: loaded as written, mistakes reported at their file:line with a fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_fixtures import MINIMAL, error_of, load, secrets_folder
from paths import REPO

from monitor.checks import DuplicatesCheck, InvalidCheck


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return secrets_folder(tmp_path)


def with_checks(*lines: str) -> str:
    checks = ",\n  ".join(lines)
    written = 'checks = [{ kind = "not_empty", range = "Data!A2:A" }]'
    return MINIMAL.replace(written, f"checks = [\n  {checks},\n]")


def test_column_checks_load_from_toml(folder: Path) -> None:
    config = load(folder, with_checks(
        '{ kind = "duplicates", range = "Stock!A1:Z", header_row = 1, columns = ["SKU", "Site"] }',
        '{ kind = "invalid", range = "Stock!A1:Z", header_row = 1, column = "Email", format = "email", '
        'warn = "> 1%" }'), env={})
    duplicates, invalid = config.sheets[0].checks
    assert isinstance(duplicates, DuplicatesCheck) and duplicates.key_columns == ("SKU", "Site")
    assert isinstance(invalid, InvalidCheck) and str(invalid.warn) == "> 1%"


def test_mistakes_in_column_checks_point_at_their_line_and_key(folder: Path) -> None:
    message = error_of(folder, with_checks(
        '{ kind = "missing", range = "Stock!A1:Z", column = "Qty" }',
        '{ kind = "invalid", range = "Stock!A1:Z", header_row = 1, column = "Email", format = "mail" }',
        '{ kind = "invalid", range = "Stock!A1:Z", header_row = 1, column = "SKU", regex = "A-[" }',
        '{ kind = "missing", range = "Stock!A1:Z", header_row = 1, column = "Qty", fail = "5%" }'))
    assert "monitor.toml:7: sheets[0].checks[0]: column 'Qty' names a header, but the check has no " \
           "header_row" in message
    assert "add header_row = N" in message
    assert "monitor.toml:8: sheets[0].checks[1].format: unknown format 'mail'" in message
    assert "email, phone, date, number, url" in message
    assert "monitor.toml:9: sheets[0].checks[2].regex: regex 'A-[' does not compile" in message
    assert "monitor.toml:10: sheets[0].checks[3].fail: bad condition '5%'" in message


def test_the_configuration_guide_example_of_column_checks_loads(folder: Path) -> None:
    guide = (REPO / "docs/configuration.md").read_text()
    example = guide.split('```toml\n[profiles.stock]\nchecks = [\n  { kind = "headers"')[1].split("```")[0]
    text = MINIMAL.replace('checks = [{ kind = "not_empty", range = "Data!A2:A" }]', 'profile = "stock"')
    config = load(folder, text + '\n[profiles.stock]\nchecks = [\n  { kind = "headers"' + example, env={})
    assert [check.kind for check in config.sheets[0].checks] == [
        "headers", "missing", "duplicates", "duplicates", "invalid", "invalid", "invalid", "invalid"]
    assert config.sheets[0].checks[-1].regex == r"SKU-\d{5}"
