"""Which configured spreadsheets an operator's reference means (``monitor.admin.targets``)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from monitor.admin import AdminError
from monitor.admin.targets import id_in_url, matches_filters, resolve, resolve_all

ID1, ID2, ID3 = "1" + "a" * 43, "1" + "b" * 43, "1" + "c" * 43


@dataclass(frozen=True)
class S:
    id: str
    name: str
    tags: tuple[str, ...] = ()


SHEETS = [S(ID1, "Store 1 Kazan", ("kazan",)), S(ID2, "Store 12 Omsk", ("omsk",)), S(ID3, "Warehouse", ())]


@pytest.mark.parametrize("url", [
    f"https://docs.google.com/spreadsheets/d/{ID2}/edit#gid=0",
    f"https://docs.google.com/spreadsheets/u/1/d/{ID2}/edit?usp=sharing",
    f"docs.google.com/spreadsheets/d/{ID2}",
])
def test_a_url_copied_from_the_browser_gives_its_id(url):
    assert id_in_url(url) == ID2
    assert resolve(SHEETS, url).id == ID2


def test_a_published_copys_address_holds_no_id():
    assert id_in_url("https://docs.google.com/spreadsheets/d/e/2PACX-1vR/pubhtml") is None


def test_an_id_a_whole_name_then_a_part_of_one_name():
    assert resolve(SHEETS, ID3).name == "Warehouse"
    assert resolve(SHEETS, "warehouse").id == ID3
    assert resolve(SHEETS, " omsk ").id == ID2
    # "Store 1" is a whole name of none, part of two: refused, both named.
    with pytest.raises(AdminError) as refused:
        resolve(SHEETS, "Store 1")
    assert refused.value.usage
    assert str(refused.value).startswith(f"'Store 1' fits 2 spreadsheets: Store 1 Kazan ({ID1}); "
                                         f"Store 12 Omsk ({ID2}).")


def test_a_whole_name_wins_over_names_that_hold_it():
    sheets = [*SHEETS, S("1" + "d" * 43, "Store 1")]
    assert resolve(sheets, "store 1").id == "1" + "d" * 43


def test_a_reference_that_fits_nothing_says_so():
    with pytest.raises(AdminError, match="'Tver' is not a configured spreadsheet"):
        resolve(SHEETS, "Tver")
    with pytest.raises(AdminError, match=r"1zzzzzzzzzzzzzzzzzzzzzzzz \(from 'https://"):
        resolve(SHEETS, "https://docs.google.com/spreadsheets/d/1zzzzzzzzzzzzzzzzzzzzzzzz/edit")


def test_references_and_tags_together_each_spreadsheet_once_in_config_order():
    chosen = resolve_all(SHEETS, ["Warehouse", ID1], ["kazan", "omsk"])
    assert [sheet.id for sheet in chosen] == [ID1, ID2, ID3]
    with pytest.raises(AdminError, match="the tags in use: kazan, omsk"):
        resolve_all(SHEETS, [], ["tver"])


def test_the_filters_of_sheets():
    assert [s.id for s in SHEETS if matches_filters(s, tags=("omsk", "kazan"))] == [ID1, ID2]
    assert [s.id for s in SHEETS if matches_filters(s, name="STORE", tags=("kazan",))] == [ID1]
    assert [s.id for s in SHEETS if matches_filters(s)] == [ID1, ID2, ID3]
