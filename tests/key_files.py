"""Service-account key files that Google refuses, made at test time: an account it never issued, and a
working key damaged by a bad copy and paste."""

from __future__ import annotations

import json
from pathlib import Path

from config_fixtures import pem_key


def unknown_account(folder: Path, token_uri: str) -> Path:
    """A well-formed key of a service account the sandbox (as Google) never issued."""
    path = folder / "sa-gone.json"
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "monitor-proj", "private_key_id": "0" * 40,
        "private_key": pem_key(), "client_email": "gone@monitor-proj.iam.gserviceaccount.com",
        "client_id": "1", "token_uri": token_uri}))
    return path


def damaged_key(folder: Path, source: Path) -> Path:
    """A copy of a working key file whose PEM lost part of its middle (a bad copy and paste)."""
    key = json.loads(source.read_text())
    pem = key["private_key"]
    key["private_key"] = pem[:200] + pem[400:]
    path = folder / "sa-damaged.json"
    path.write_text(json.dumps(key))
    return path
