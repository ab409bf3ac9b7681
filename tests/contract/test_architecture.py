"""The package layout holds: import contracts (.importlinter), and what cron's processes load.

The contracts are checked statically by import-linter; that they can fail is shown by breaking one
in a copy of the package. What a process really imports is checked in a fresh interpreter.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from paths import REPO


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports())"
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_import_contracts_hold():
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" not in result.stdout.lower().replace("0 broken", "")


def test_an_upward_import_and_a_command_wiring_its_own_state_break_their_contracts(tmp_path):
    """Both broken in one copy: each lint of the package takes seconds."""
    shutil.copytree(REPO / "monitor", tmp_path / "monitor", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    clock = tmp_path / "monitor" / "core" / "clock.py"
    clock.write_text(clock.read_text() + "\nfrom monitor.engine import run  # an upward import\n")
    status = tmp_path / "monitor" / "cli" / "status.py"
    status.write_text(status.read_text() + "\nfrom monitor.storage.configured import state_location\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "monitor.core is not allowed to import monitor.engine" in result.stdout
    assert "monitor.cli.status -> monitor.storage.configured" in result.stdout


# Every import a -> b that a chain of imports leads back from b to a, printed as "a -> b -> ... -> a".
# Type-only imports (under TYPE_CHECKING) and imports inside functions count: each still ties the
# two modules together, and any of them may be what breaks when one of the two changes.
_CYCLES = """
import grimp
graph = grimp.build_graph("monitor", include_external_packages=False, cache_dir=None)
for importer in sorted(graph.modules):
    for imported in sorted(graph.find_modules_directly_imported_by(importer)):
        back = graph.find_shortest_chain(imported, importer)
        if back:
            print(" -> ".join((importer, *back)))
"""


def import_cycles(root: Path) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    result = subprocess.run([sys.executable, "-c", _CYCLES], cwd=root, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_no_module_imports_itself_back_through_others():
    assert import_cycles(REPO) == []


def test_a_type_only_import_back_is_a_cycle(tmp_path):
    shutil.copytree(REPO / "monitor", tmp_path / "monitor", ignore=shutil.ignore_patterns("__pycache__"))
    result = tmp_path / "monitor" / "checks" / "result.py"
    result.write_text(result.read_text() + "\nif TYPE_CHECKING:\n    from .evaluate import evaluate\n")
    cycles = import_cycles(tmp_path)
    assert "monitor.checks.result -> monitor.checks.evaluate -> monitor.checks.result" in cycles


def test_ruff_finds_nothing_to_fix():
    """The lint rules of pyproject.toml (style, imports, bugbear, complexity at most 12) hold in the
    product, the tests and the benchmarks."""
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "monitor", "tests", "bench"], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_function_too_complex_breaks_the_lint(tmp_path):
    branches = "".join(f"    if x == {n}:\n        return {n}\n" for n in range(13))
    (tmp_path / "deep.py").write_text(f"def deep(x):\n{branches}    return -1\n")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "deep.py"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "C901" in result.stdout, result.stdout


def loaded_modules(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``code``."""
    script = textwrap.dedent(code) + "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))\n"
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split())


def test_the_run_command_loads_no_part_of_the_emulator():
    modules = loaded_modules("""
        from monitor.cli.main import cli
        cli.get_command(None, "run")
    """)
    assert "monitor.app.run" in modules  # the command really was loaded
    assert not {name for name in modules if name.startswith("sheet_sandbox")}
    # The Prometheus client loads only for a run whose config has [metrics] (monitor.app.metrics_step).
    assert not {name for name in modules if name.startswith("prometheus_client")}
    # Nor the operators' library (what status, dlq and mute report and change): not a run's start-up.
    assert not {name for name in modules if name.startswith("monitor.admin")}


def test_the_watchdog_loads_neither_gspread_nor_google_auth():
    modules = loaded_modules("import monitor.cli.watchdog")
    assert "monitor.watchdog.watch" in modules
    assert not {name for name in modules if name.split(".")[0] in ("gspread", "google", "requests")}
    assert not {name for name in modules if name.startswith("sheet_sandbox")}
