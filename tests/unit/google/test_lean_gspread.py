"""gspread imported without google-auth-oauthlib, loaded for a browser login the monitor never uses."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def run_fresh(code: str, path: Path | None = None) -> str:
    """stdout of ``code`` in a fresh interpreter (``path`` first on its import path)."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), str(REPO)])
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_reader_loads_gspread_without_the_browser_login():
    out = run_fresh("""
        import sys
        import monitor.google.reader
        print(sorted(name for name in sys.modules
                     if name.split(".")[0] in ("google_auth_oauthlib", "requests_oauthlib", "oauthlib")
                     or name in ("http.server", "wsgiref")))
        print("gspread" in sys.modules)
    """)
    assert out.split("\n")[:2] == ["[]", "True"]


def test_gspread_s_login_still_gets_the_real_flow_and_so_does_a_later_import():
    out = run_fresh("""
        import monitor.google.client
        import gspread.auth
        config = {"installed": {"client_id": "id", "client_secret": "secret",
                                "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                                "token_uri": "https://oauth2.googleapis.com/token"}}
        flow = gspread.auth.InstalledAppFlow.from_client_config(config, ["scope"])
        print(type(flow).__module__, type(flow).__name__)
        import google_auth_oauthlib.flow
        print(google_auth_oauthlib.flow.InstalledAppFlow.__module__)
    """)
    assert out.split("\n")[:2] == ["google_auth_oauthlib.flow InstalledAppFlow", "google_auth_oauthlib.flow"]


def test_a_gspread_that_asks_for_more_of_the_package_is_imported_with_the_real_one(tmp_path):
    fake = tmp_path / "gspread"
    fake.mkdir()
    (fake / "__init__.py").write_text("from google_auth_oauthlib.flow import Flow, InstalledAppFlow\n")
    out = run_fresh("""
        import monitor.google.lean_gspread
        import gspread
        print(gspread.Flow.__module__, gspread.InstalledAppFlow.__module__)
    """, path=tmp_path)
    assert out.strip() == "google_auth_oauthlib.flow google_auth_oauthlib.flow"
