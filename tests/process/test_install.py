"""A real install: the wheel built from this checkout, installed with its dependencies into a fresh
virtual environment, and the commands run from there, outside the checkout, as a user's would be.

The wheel is built and installed once per session (the xdist workers share it, under a lock): pip
fetches the dependencies as a user's pip does, which is most of this module's time. The demo runs
short (`--sheets 20`): the sandbox, its data files, a run, Telegram and a press, from the installed
files alone; the full 750 is the same code at another size.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from config_fixtures import SHEET_A, secrets_folder
from filelock import FileLock
from paths import REPO

VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
# The checkout copied for the build, which writes into the tree it builds (build/, *.egg-info):
# neither the virtual environment, the caches and the history, nor the top folders no package holds.
_NOT_COPIED = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.pyc", "build", "dist", "*.egg-info",
                                     ".pytest_cache", ".ruff_cache")
_NOT_COPIED_AT_THE_TOP = {"state", "tests", "bench"}


def _not_copied(folder: str, names: list[str]) -> set[str]:
    top = _NOT_COPIED_AT_THE_TOP if Path(folder) == REPO else set()
    return set(_NOT_COPIED(folder, names)) | (top & set(names))


@dataclass(frozen=True)
class Installed:
    wheel: Path
    bin: Path


def _outside_env() -> dict[str, str]:
    """This environment without what would point Python at the checkout or at the tests' own venv."""
    return {key: value for key, value in os.environ.items()
            if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not key.startswith("PYTEST")}


def _build_and_install(root: Path) -> Installed:
    source = root / "source"
    shutil.copytree(REPO, source, ignore=_not_copied)
    dist, venv = root / "dist", root / "venv"
    run = lambda *args: subprocess.run(args, cwd=root, env=_outside_env(), capture_output=True, text=True,  # noqa: E731
                                       timeout=400, check=True)
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(source))
    (wheel,) = dist.glob("sheet_monitor-*.whl")
    run(sys.executable, "-m", "venv", str(venv))
    # --no-compile: the dependencies' modules are compiled when first imported rather than all at
    # once here, seconds of a 2-core CI machine for nothing the tests look at.
    run(str(venv / "bin" / "pip"), "install", "-q", "--no-compile", str(wheel))
    return Installed(wheel=wheel, bin=venv / "bin")


@pytest.fixture(scope="session")
def installed(tmp_path_factory, worker_id) -> Installed:
    # Under xdist each worker has its own base folder; their parent is this session's, shared.
    base = tmp_path_factory.getbasetemp()
    root = (base if worker_id == "master" else base.parent) / "installed-wheel"
    with FileLock(str(root) + ".lock"):
        if not root.exists():
            root.mkdir()
            try:
                return _build_and_install(root)
            except subprocess.CalledProcessError as failed:
                shutil.rmtree(root)
                pytest.fail(f"{' '.join(failed.cmd)} failed:\n{failed.stderr}")
    return Installed(wheel=next((root / "dist").glob("sheet_monitor-*.whl")), bin=root / "venv" / "bin")


def outside(installed: Installed, tmp_path: Path, *args: str, timeout: float = 60
            ) -> subprocess.CompletedProcess:
    """One of the installed commands, in a folder outside the checkout."""
    command, *rest = args
    return subprocess.run([str(installed.bin / command), *rest], cwd=tmp_path, env=_outside_env(),
                          capture_output=True, text=True, timeout=timeout)


def test_the_wheel_holds_every_file_of_the_packages_and_nothing_else(installed):
    packages = [folder for folder in REPO.iterdir() if (folder / "__init__.py").is_file()]
    assert "monitor" in {folder.name for folder in packages}
    expected = {path.relative_to(REPO).as_posix() for folder in packages for path in folder.rglob("*")
                if path.is_file() and "__pycache__" not in path.parts}
    with zipfile.ZipFile(installed.wheel) as wheel:
        held = {name for name in wheel.namelist() if ".dist-info/" not in name}
    assert held == expected
    assert any(name.endswith("/data/spreadsheet_defaults.json") for name in held)  # the emulator's data


def test_both_commands_say_the_release_and_run_the_installed_code(installed, tmp_path):
    for command in ("sheet-monitor", "sheet-watchdog"):
        assert outside(installed, tmp_path, command, "--version").stdout == f"{command}, version {VERSION}\n"
    printed = outside(installed, tmp_path, "python", "-c", "import monitor; print(monitor.__file__)").stdout
    where = Path(printed.strip())
    assert where.is_relative_to(installed.bin.parent) and not where.is_relative_to(REPO)


def test_the_demo_runs_from_the_installed_wheel(installed, tmp_path):
    result = outside(installed, tmp_path, "sheet-monitor", "demo", "--sheets", "20", "--budget", "30",
                     timeout=90)
    assert result.returncode == 0, result.stderr
    assert "verdicts matching the dataset's known breakage: 20 of 20" in result.stdout
    assert "A press in the chat: @olga presses" in result.stdout


def test_init_from_the_installed_wheel_writes_a_setup_check_config_takes(installed, tmp_path):
    keys = secrets_folder(tmp_path / "keys")
    site = tmp_path / "site"
    result = outside(installed, tmp_path, "sheet-monitor", "init", "--dir", "site", "--sheet", SHEET_A,
                     "--credentials", str(keys / "secrets" / "sa-1.json"))
    assert result.returncode == 0, result.stderr
    cron = (site / "sheet-monitor.cron").read_text()
    assert f"*/5 * * * * {installed.bin}/sheet-monitor run >> {site}/logs/run.log 2>&1\n" in cron
    watchdog = (site / "systemd" / "sheet-watchdog.service").read_text()
    assert f"ExecStart={installed.bin}/sheet-watchdog\n" in watchdog
    checked = outside(installed, tmp_path, "sheet-monitor", "check-config", "--offline", "--config",
                      str(site / "monitor.toml"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Ready: the config is valid and every check passed." in checked.stdout
    again = outside(installed, tmp_path, "sheet-monitor", "init", "--dir", "site")
    assert again.returncode == 2 and "already exist" in again.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="systemd-analyze is not installed: systemd's own check of the units cannot run")
def test_systemd_analyze_verify_takes_the_units_init_writes(installed, tmp_path):
    written = outside(installed, tmp_path, "sheet-monitor", "init", "--dir", "site",
                      "--chat-id", "-1001234567890")
    assert written.returncode == 0, written.stderr
    units = sorted(str(path) for path in (tmp_path / "site" / "systemd").iterdir())
    assert len(units) == 4
    result = subprocess.run(["systemd-analyze", "verify", *units], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    # It can fail: a unit whose executable is missing is refused.
    broken = tmp_path / "site" / "systemd" / "sheet-watchdog.service"
    broken.write_text(broken.read_text().replace(f"{installed.bin}/sheet-watchdog", "/nowhere/watchdog"))
    result = subprocess.run(["systemd-analyze", "verify", *units], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "/nowhere/watchdog" in result.stderr
