"""httpx imported without its command-line client: imported before httpx by the modules that use it.

``import httpx`` tries to import ``httpx._main``, the ``httpx`` command's code, and with rich and
pygments installed (other tools bring them) that loads ~75 modules, ~3.6 MB that a run carried from
its first message to its end, when its memory peaks. A module that is ``None`` in ``sys.modules``
cannot be imported, so for the length of httpx's own import ``httpx._main`` is ``None``: httpx then
defines its ``main`` as it does without those packages (it says how to install them). The entry is
removed afterwards, so a later ``import httpx._main`` gets the real module.
"""

from __future__ import annotations

import sys

_CLI = "httpx._main"


def import_httpx() -> None:
    """Import httpx without its command-line client (nothing when httpx is loaded already)."""
    if "httpx" in sys.modules:
        return
    sys.modules[_CLI] = None  # type: ignore[assignment]
    try:
        import httpx  # noqa: F401
    finally:
        if _CLI in sys.modules and sys.modules[_CLI] is None:
            del sys.modules[_CLI]


import_httpx()
