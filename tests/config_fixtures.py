"""Shared by the config tests: a folder with two service-account keys, a full and a minimal config.

Plain helpers, not fixtures: each test module declares its own two-line ``folder`` fixture over
``secrets_folder`` (a plugin module imported by the tests could not have its asserts rewritten).
"""

from __future__ import annotations

import json
import textwrap
from functools import cache
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from monitor.config import ConfigError, load_config

TOKEN = "7357:AAH-test-token-never-shown"
SHEET_A = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgVE2upms"
SHEET_B = "1Cdef0000000000000000000000000000000000000bb"
SHEET_C = "1Cdef0000000000000000000000000000000000000cc"


@cache  # an RSA key takes a while to generate; one serves every test
def pem_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def secrets_folder(tmp_path: Path,
                   projects: tuple[str | None, ...] = ("monitor-proj", "monitor-proj")) -> Path:
    """``tmp_path`` with secrets/sa-1.json, secrets/sa-2.json...: distinct service accounts, one per
    entry of ``projects``, each key naming that project (None: a key naming no project, as some older
    keys are)."""
    pem = pem_key()
    secrets = tmp_path / "secrets"
    secrets.mkdir(parents=True)
    for n, project in enumerate(projects, start=1):
        key = {"type": "service_account", "private_key": pem,
               "token_uri": "https://oauth2.googleapis.com/token"}
        if project is None:
            key["client_email"] = f"sa-{n}@developer.gserviceaccount.com"
        else:
            key.update(project_id=project, client_email=f"sa-{n}@{project}.iam.gserviceaccount.com")
        (secrets / f"sa-{n}.json").write_text(json.dumps(key))
    return tmp_path


FULL = f"""\
[run]
budget = "4m30s"
round_interval = "5m"
state_dir = "state"

[google]
credentials = ["secrets/sa-1.json", "secrets/sa-2.json"]
read_requests_per_minute = 60
project_read_requests_per_minute = 300
request_timeout = "30s"
api_endpoint = "http://127.0.0.1:8931/"

[breaker]
failure_threshold = 4
cooldown = "15m"
max_cooldown = "1h"

[telegram]
chat_id = "-1001234567890"
message_thread_id = 42
api_base = "http://127.0.0.1:8932"

[alerts]
summary = "every_round"
digest_at = "08:30"
timezone = "Europe/Moscow"
reminder_every = "4h"

[watchdog]
max_silence = "20m"
reminder_every = "2h"
heartbeat_url = "https://example.org/ping/abc"

[profiles.stock]
checks = [
  {{ kind = "formula_errors", range = "Stock!A1:H500" }},
  {{ kind = "not_empty", range = "Stock!A2:A", min_rows = 3 }},
  {{ kind = "threshold", range = "Stock!F2:F", aggregate = "min", warn = "< 5", fail = "< 0" }},
  {{ kind = "freshness", range = "Stock!E2:E", warn = "> 2h", fail = "> 1d" }},
]

[profiles.sales]
checks = [
  {{ kind = "row_count", range = "'Sales 2026'!A2:A", min = 1, max = 5000 }},
  {{ kind = "freshness", source = "modified_time", fail = "> 1d", name = "file edited" }},
]

[[sheets]]
id = "{SHEET_A}"
name = "Store 014"
profile = "stock"
tags = ["moscow"]

[[sheets]]
id = "{SHEET_B}"
name = "Sales North"
profile = "sales"
checks = [{{ kind = "threshold", range = "Sales!B2:B", aggregate = "sum", fail = "== 0" }}]
"""


def write(folder: Path, text: str, csv: str | None = None) -> Path:
    path = folder / "monitor.toml"
    path.write_text(textwrap.dedent(text))
    if csv is not None:
        (folder / "sheets.csv").write_text(textwrap.dedent(csv))
    return path


def load(folder: Path, text: str, csv: str | None = None, env: dict | None = None, **kw):
    env = {"TELEGRAM_BOT_TOKEN": TOKEN} if env is None else env
    return load_config(write(folder, text, csv), env, **kw)


def error_of(folder: Path, text: str, csv: str | None = None, env: dict | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load(folder, text, csv, env)
    message = str(info.value)
    assert TOKEN not in message
    return message


MINIMAL = f"""\
[google]
credentials = ["secrets/sa-1.json"]

[[sheets]]
id = "{SHEET_A}"
checks = [{{ kind = "not_empty", range = "Data!A2:A" }}]
"""
