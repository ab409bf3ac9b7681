"""The config's JSON Schema (monitor.config.schema): committed as generated, a valid 2020-12 schema,
accepting every config the loader and the docs hold, refusing what the loader refuses for a wrong key
or form, and read by taplo (the TOML toolkit behind Even Better TOML) as editors read it."""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from config_fixtures import FULL, MINIMAL, SHEET_A, error_of, load, secrets_folder
from paths import DOCS, REPO

from monitor.cli.main import cli
from monitor.config.schema import config_schema, schema_text
from sheet_sandbox import dataset as datasets

COMMITTED = DOCS / "monitor.schema.json"
VALIDATOR = jsonschema.Draft202012Validator(config_schema())
CHECK = jsonschema.Draft202012Validator({"$defs": config_schema()["$defs"], "$ref": "#/$defs/Check"})
TAPLO = Path(sys.executable).parent / "taplo"


@pytest.fixture
def folder(tmp_path):
    return secrets_folder(tmp_path)


def as_editors_see(value):
    """A parsed TOML value as an editor validates it: taplo hands JSON Schema a TOML date or time as
    its RFC 3339 string (a schema's "format": "date")."""
    if isinstance(value, dict):
        return {key: as_editors_see(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_editors_see(item) for item in value]
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return value


def problems(data) -> list[str]:
    return [f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
            for error in VALIDATOR.iter_errors(as_editors_see(data))]


def check_problems(check) -> list:
    return list(CHECK.iter_errors(as_editors_see(check)))


def test_the_committed_schema_is_the_one_the_models_generate():
    assert COMMITTED.read_text(encoding="utf-8") == schema_text(), (
        "docs/monitor.schema.json is out of date: sheet-monitor config-schema > docs/monitor.schema.json")


def test_config_schema_prints_it():
    result = CliRunner().invoke(cli, ["config-schema"])
    assert result.exit_code == 0
    assert result.output == schema_text()


def test_it_is_a_valid_2020_12_schema_that_names_every_section_and_check_kind():
    schema = config_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert {"run", "google", "telegram", "profiles", "sheets", "sheets_file", "maintenance"} <= set(
        schema["properties"])
    kinds = schema["$defs"]["Check"]["properties"]["kind"]["enum"]
    assert {"formula_errors", "threshold", "freshness", "cross_sheet"} <= set(kinds)


def test_the_fields_the_loader_fills_are_not_keys_of_the_file():
    defs = config_schema()["$defs"]
    assert "bot_token" not in defs["TelegramConfig"]["properties"]
    assert "credential_projects" not in defs["GoogleConfig"]["properties"]


# -- what it accepts: everything the loader takes


def test_it_accepts_the_test_configs_the_loader_takes(folder):
    for text, env in ((FULL, None), (MINIMAL, {})):
        load(folder, text, env=env)
        assert problems(tomllib.loads(textwrap.dedent(text))) == []


def test_it_accepts_the_config_the_demo_writes(tmp_path):
    dataset = datasets.generate(40, seed=7)
    path = datasets.write_config(dataset, tmp_path / "monitor.toml", credentials=["secrets/sa-1.json"],
                                 endpoint="http://127.0.0.1:8931", telegram_chat_id="-1001234567890",
                                 sheets_file_over=1000, run={"change_poll": "off"})
    data = tomllib.loads(path.read_text())
    assert len(data["sheets"]) == 40
    assert problems(data) == []


def _docs_toml_blocks() -> list[tuple[str, str]]:
    blocks = []
    for path in [REPO / "README.md", *sorted(DOCS.glob("*.md"))]:
        for found in re.finditer(r"```toml\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
            blocks.append((path.name, found.group(1)))
    return blocks


def test_it_accepts_every_toml_example_of_the_docs():
    """Whole files and sections as they are; `checks = [...]` and lines of checks, check by check."""
    told = checks = 0
    for name, text in _docs_toml_blocks():
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:  # lines of inline tables: each is one check
            for line in text.splitlines():
                if line.startswith("{"):
                    check = tomllib.loads(f"check = {line.rstrip().rstrip(',')}")["check"]
                    assert check_problems(check) == [], (name, line)
                    checks += 1
            continue
        if set(data) == {"rule"}:  # the taplo config shown beside them
            continue
        if set(data) == {"checks"}:
            for check in data["checks"]:
                assert check_problems(check) == [], (name, check)
                checks += 1
            continue
        assert problems(data) == [], (name, text)
        told += 1
    assert told >= 10 and checks >= 10


# -- what it refuses: what the loader refuses too, at the key


REFUSED = {
    "an unknown section": ("[runn]\nbudget = \"4m\"\n", "Additional properties are not allowed ('runn'"),
    "an unknown key": ("[run]\nbuget = \"4m\"\n", "'buget' was unexpected"),
    "a duration as a number": ("[run]\nbudget = 270\n", "270 is not of type 'string'"),
    "a duration without a unit": ("[run]\nbudget = \"4 minutes\"\n", "does not match"),
    "the bot token in the file": ("[telegram]\nbot_token = \"123:abc\"\n", "'bot_token' was unexpected"),
    "a misspelt check kind": ("[profiles.p]\nchecks = [{ kind = \"treshold\", range = \"S!A:A\" }]\n",
                              "'treshold' is not one of"),
    "a check without its kind": ("[profiles.p]\nchecks = [{ range = \"S!A:A\" }]\n", "'kind' is a required"),
    "a key the check kind does not take": (
        "[profiles.p]\nchecks = [{ kind = \"not_empty\", range = \"S!A:A\", colour = \"red\" }]\n",
        "'colour' was unexpected"),
    "a spreadsheet id as a number": ("[[sheets]]\nid = 42\n", "42 is not of type 'string'"),
    "a maintenance window without its reason": (
        "[[maintenance]]\nstart = \"2026-03-08 02:00\"\nfor = \"2h\"\n", "'reason' is a required"),
}


@pytest.mark.parametrize("text, said", REFUSED.values(), ids=REFUSED.keys())
def test_it_refuses_what_the_loader_refuses(folder, text, said):
    found = problems(tomllib.loads(text))
    assert any(said in problem for problem in found), found
    error_of(folder, MINIMAL.replace("[google]", f"{text}\n[google]", 1) if not text.startswith("[[")
             else f"{MINIMAL}\n{text}")


# -- as an editor reads it


def _taplo(folder: Path, text: str) -> subprocess.CompletedProcess:
    (folder / "monitor.schema.json").write_text(schema_text())
    path = folder / "monitor.toml"
    path.write_text(f"#:schema ./monitor.schema.json\n{textwrap.dedent(text)}")
    return subprocess.run([str(TAPLO), "check", "--no-auto-config", str(path)], capture_output=True,
                          text=True, cwd=folder, timeout=30)


def test_taplo_checks_a_config_against_the_schema_its_directive_names(tmp_path):
    result = _taplo(tmp_path, FULL)
    assert result.returncode == 0, result.stderr
    result = _taplo(tmp_path, FULL.replace('round_interval = "5m"', 'round_intervl = "5m"')
                    .replace('aggregate = "min"', 'aggregate = "minimum"'))
    assert result.returncode == 1
    assert "'round_intervl' was unexpected" in result.stderr and "monitor.toml:5:" in result.stderr
    assert '"minimum" is not one of' in result.stderr


def test_the_taplo_config_of_the_docs_applies_the_schema_to_a_config_without_the_directive(tmp_path):
    documented = re.search(r"```toml\n(\[\[rule\]\].*?)```", (DOCS / "configuration.md").read_text(), re.S)
    (tmp_path / ".taplo.toml").write_text(documented.group(1))
    (tmp_path / "monitor.schema.json").write_text(schema_text())
    (tmp_path / "monitor.toml").write_text('[run]\nbudget = 270\n')
    result = subprocess.run([str(TAPLO), "check", "monitor.toml"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=30)
    assert result.returncode == 1
    assert '270 is not of type "string"' in result.stderr


def test_taplo_takes_the_toml_forms_the_loader_takes(tmp_path):
    """TOML's own times and dates (digest_at = 09:00:00, start = 2026-03-08T02:00:00), a chat id as a
    number, a single tag or key file as a string."""
    result = _taplo(tmp_path, f"""\
        [google]
        credentials = "secrets/sa-1.json"
        [telegram]
        chat_id = -1001234567890
        [alerts]
        digest_at = 09:00:00
        escalate_after = "off"
        [[sheets]]
        id = "{SHEET_A}"
        tags = "moscow"
        checks = [{{ kind = "freshness", source = "modified_time", warn = "> 1d" }}]
        [[maintenance]]
        start = 2026-03-08T02:00:00
        for = "2h"
        reason = "moving the servers"
        """)
    assert result.returncode == 0, result.stderr


def test_the_schema_is_plain_json_with_no_machine_in_it():
    text = schema_text()
    assert json.loads(text) == config_schema()
    assert str(Path.home()) not in text and str(REPO) not in text
