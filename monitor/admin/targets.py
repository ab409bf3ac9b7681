"""Which configured spreadsheets an operator means: by id, by the URL copied from the browser, by
name, or by tag.

People copy a spreadsheet's address from the browser or remember its name; only the config knows
its id. A reference is matched, in order, as an id, as a URL holding an id, as a whole name (case
does not matter) and as a part of one name. A reference that fits several spreadsheets is refused
with the candidates listed, never guessed (exit 2 at the CLI).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from monitor.admin.errors import AdminError

# https://docs.google.com/spreadsheets/d/<id>/edit#gid=0 (or .../u/1/d/<id>/...). A published copy's
# "/spreadsheets/d/e/<key>" holds the publication's key, not the id: too short a piece never matches.
_URL_ID = re.compile(r"/spreadsheets(?:/u/\d+)?/d/([A-Za-z0-9_-]{20,})")
# An id alone: Google's are 44 characters of base64url; anything this long without a space is one.
_BARE_ID = re.compile(r"[A-Za-z0-9_-]{20,}")
SHOWN_CANDIDATES = 10  # an ambiguous reference lists this many candidates, then "and N more"


class Target(Protocol):
    id: str
    name: str
    tags: tuple[str, ...]


def id_in_url(text: str) -> str | None:
    """The spreadsheet id in a Google Sheets URL, or None when ``text`` holds none."""
    found = _URL_ID.search(text)
    return found.group(1) if found else None


def resolve(sheets: Sequence[Target], reference: str) -> Target:
    """The one configured spreadsheet ``reference`` (an id, a URL, a name, or part of a name) means.

    Raises AdminError (usage) naming the candidates when it fits several, or saying what was tried
    when it fits none.
    """
    text = reference.strip()
    by_id = {sheet.id: sheet for sheet in sheets}
    sheet_id = text if text in by_id else id_in_url(text)
    if sheet_id is not None:
        if sheet_id in by_id:
            return by_id[sheet_id]
        raise AdminError(f"{sheet_id} (from {reference!r}) is not a configured spreadsheet; "
                         "`sheet-monitor sheets` lists the configured ones", usage=True)
    wanted = text.casefold()
    for matches in ([s for s in sheets if s.name.casefold() == wanted],
                    [s for s in sheets if wanted and wanted in s.name.casefold()]):
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise AdminError(ambiguous_message(reference, matches), usage=True)
    raise AdminError(f"{reference!r} is not a configured spreadsheet (no id, URL or name fits it); "
                     "`sheet-monitor sheets --name TEXT` searches the names", usage=True)


def resolve_any(sheets: Sequence[Target], reference: str) -> Target | str:
    """The configured spreadsheet ``reference`` means (as ``resolve``), or the id of a spreadsheet the
    config does not list when ``reference`` is its URL or an id; AdminError (usage) otherwise."""
    try:
        return resolve(sheets, reference)
    except AdminError:
        text = reference.strip()
        sheet_id = id_in_url(text) or (text if _BARE_ID.fullmatch(text) else None)
        if sheet_id is None:
            raise
        return sheet_id


def spreadsheet_ids(sheets: Sequence[Target], references: Iterable[str]) -> list[str]:
    """The id each of ``references`` means: a URL's, an id, or a configured spreadsheet's name;
    AdminError (usage) for one that is none of these."""
    found = [resolve_any(sheets, reference) for reference in references]
    return [item if isinstance(item, str) else item.id for item in found]


def resolve_all(sheets: Sequence[Target], references: Iterable[str], tags: Iterable[str]) -> list[Target]:
    """The spreadsheets ``references`` mean (each as ``resolve``) and those carrying any of ``tags``,
    each once, in config order. Raises AdminError (usage) for a reference that fits none or several,
    or a tag that no spreadsheet carries."""
    chosen = {resolve(sheets, reference).id for reference in references}
    for tag in tags:
        tagged = {sheet.id for sheet in sheets if tag in sheet.tags}
        if not tagged:
            known = sorted({t for sheet in sheets for t in sheet.tags})
            listed = ", ".join(known[:20]) if known else "none: give spreadsheets tags = [...]"
            raise AdminError(f"no configured spreadsheet has the tag {tag!r}; the tags in use: {listed}",
                             usage=True)
        chosen |= tagged
    return [sheet for sheet in sheets if sheet.id in chosen]


def ambiguous_message(reference: str, matches: Sequence[Target]) -> str:
    shown = "; ".join(f"{sheet.name} ({sheet.id})" for sheet in matches[:SHOWN_CANDIDATES])
    more = f"; and {len(matches) - SHOWN_CANDIDATES} more" if len(matches) > SHOWN_CANDIDATES else ""
    return (f"{reference!r} fits {len(matches)} spreadsheets: {shown}{more}. Give the id or the URL "
            "of the one you mean")


def matches_filters(sheet: Target, *, tags: Sequence[str] = (), name: str | None = None) -> bool:
    """``sheets``' filters: any of ``tags``, and ``name`` within its name (case does not matter)."""
    if tags and not set(tags) & set(sheet.tags):
        return False
    return name is None or name.casefold() in sheet.name.casefold()
