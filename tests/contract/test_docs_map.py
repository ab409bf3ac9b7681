"""docs/architecture.md's package tables name every module of the monitor, and only modules that
exist: the map a newcomer reads first stays true to the code."""

from __future__ import annotations

import re

from paths import DOCS, REPO

PRODUCT = REPO / "monitor"


def mapped_modules() -> set[tuple[str, str]]:
    """(package, module) for each row under a "### `package`" heading of the Packages section."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("\n## Packages\n"):]
    section = section[:section.index("\n## ", 1)]
    mapped, package = set(), None
    for line in section.splitlines():
        if line.startswith("### "):  # a package's table, or a section of prose after them
            heading = re.fullmatch(r"### `(\w+)`", line)
            package = heading.group(1) if heading else None
        row = re.match(r"\| `(\w+)` \|", line)
        if row and package is not None and row.group(1) != "module":
            mapped.add((package, row.group(1)))
    return mapped


def product_modules() -> set[tuple[str, str]]:
    """(package, module) for each module of a package of the monitor; a check kind's module is told
    under "Adding a check kind", not in the tables."""
    return {(path.parent.name, path.stem) for path in PRODUCT.glob("*/*.py") if path.stem != "__init__"}


def test_every_module_of_the_monitor_is_in_the_package_tables():
    missing = product_modules() - mapped_modules()
    assert not missing, f"add a row to docs/architecture.md's package tables for: {sorted(missing)}"


def test_the_package_tables_name_no_module_that_does_not_exist():
    gone = mapped_modules() - product_modules()
    assert not gone, f"docs/architecture.md's package tables name modules that do not exist: {sorted(gone)}"


def test_the_map_is_read_from_the_tables():
    mapped = mapped_modules()
    assert ("engine", "run") in mapped and ("core", "clock") in mapped  # the parse found the rows
    assert {package for package, _ in mapped} == {path.name for path in PRODUCT.iterdir()
                                                  if (path / "__init__.py").exists()}
