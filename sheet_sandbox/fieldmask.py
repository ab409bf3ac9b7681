"""Google's ``fields`` partial-response parameter: ``a,b.c,files(id,name),sheets/properties``.

Paths use ``.`` or ``/`` between names; ``x(y,z)`` selects y and z inside x; ``*`` selects all.
Selecting into a list selects inside each element. A container named on the way to a field that an
object lacks stays as an empty object, as Google answers ``fields=sheets.properties.tabColorStyle``
for a tab without a colour: ``{"sheets": [{"properties": {}}]}``.
"""

from __future__ import annotations

# A parsed mask: name -> sub-mask, where None means "this whole value".
Mask = dict[str, "Mask | None"]


class FieldMaskError(ValueError):
    """The mask does not parse; str(exc) is the mask."""


def parse_mask(text: str) -> Mask | None:
    """The mask ``text`` as a tree; None for "everything" (empty or ``*``)."""
    text = text.replace(" ", "")
    if text in ("", "*"):
        return None
    mask, pos = _parse_list(text, 0)
    if pos != len(text):
        raise FieldMaskError(text)
    return mask


def _parse_list(text: str, pos: int) -> tuple[Mask, int]:
    mask: Mask = {}
    while True:
        pos = _parse_path(text, pos, mask)
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        return mask, pos


def _parse_path(text: str, pos: int, into: Mask) -> int:
    start = pos
    while pos < len(text) and text[pos] not in ",()./":
        pos += 1
    name = text[start:pos]
    if not name:
        raise FieldMaskError(text)
    if name == "*":
        into.clear()
        into["*"] = None
        return pos
    if pos < len(text) and text[pos] in "./":
        child = into.get(name, {}) if name not in into or into[name] is not None else None
        if child is None:  # already selected whole: a deeper path adds nothing
            return _parse_path(text, pos + 1, {})
        into[name] = child
        return _parse_path(text, pos + 1, child)
    if pos < len(text) and text[pos] == "(":
        sub, pos = _parse_list(text, pos + 1)
        if pos >= len(text) or text[pos] != ")":
            raise FieldMaskError(text)
        existing = into.get(name, {})
        if existing is not None:
            existing.update(sub)
            into[name] = existing
        return pos + 1
    into[name] = None
    return pos


def apply_mask(value: object, mask: Mask | None) -> object:
    """``value`` cut down to ``mask``."""
    if mask is None or "*" in mask:
        return value
    if isinstance(value, list):
        return _cut_each(value, mask)
    if not isinstance(value, dict):
        return value
    return _cut(value, mask)


def _cut(value: dict, mask: Mask) -> dict:
    # A grid answer is a list of thousands of small dicts (cells, rows' metadata) whose fields the
    # mask keeps whole: those are copied as they are, without a call each.
    if "*" in mask:
        return value
    return {name: value[name] if sub is None else apply_mask(value[name], sub)
            for name, sub in mask.items() if name in value}


def _cut_each(items: list, mask: Mask) -> list:
    """Each item cut down to ``mask``. An item that is the one before it again (a grid's row and
    column metadata: one ``{"pixelSize": 21}`` for every row) is cut once: its cut is the same."""
    out: list = []
    last: object = out  # no item is this list
    cut: object = None
    for item in items:
        if item is not last:
            last = item
            cut = _cut(item, mask) if isinstance(item, dict) else apply_mask(item, mask)
        out.append(cut)
    return out
