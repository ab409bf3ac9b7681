"""httpx imported without its command-line client (rich, pygments), which a run never uses."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def run_fresh(code: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.split("\n")


def test_the_notifier_loads_httpx_without_its_command_line_client_and_a_later_import_gets_it():
    out = run_fresh("""
        import sys
        import monitor.app.notify_step
        print(sorted(name for name in sys.modules if name.split(".")[0] in ("rich", "pygments")
                     or name == "httpx._main"))
        import httpx
        print(callable(httpx.Client), callable(httpx.main))
        import httpx._main
        print(httpx._main.__name__)
    """)
    assert out[:3] == ["[]", "True True", "httpx._main"]
