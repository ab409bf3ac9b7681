import pytest

from monitor.core.a1 import (
    A1Error,
    A1Range,
    cell_ref,
    column_index,
    column_letters,
    format_a1,
    is_range_name,
    parse_a1,
    parse_named,
    quote_sheet_name,
)


@pytest.mark.parametrize(
    ("index", "letters"),
    [(1, "A"), (2, "B"), (26, "Z"), (27, "AA"), (52, "AZ"), (53, "BA"), (702, "ZZ"), (703, "AAA"),
     (18278, "ZZZ")],
)
def test_column_letters_and_index_are_inverse(index, letters):
    assert column_letters(index) == letters
    assert column_index(letters) == index
    assert column_index(letters.lower()) == index


def test_column_letters_rejects_zero():
    with pytest.raises(A1Error):
        column_letters(0)


def test_column_index_rejects_non_letters():
    with pytest.raises(A1Error):
        column_index("A1")


def test_cell_ref_puts_column_before_row():
    assert cell_ref(3, 2) == "B3"
    assert cell_ref(1000, 26) == "Z1000"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Stock!A2:A", A1Range("Stock", 2, 1, None, 1)),
        ("'It''s'!B:C", A1Range("It's", None, 2, None, 3)),
        ("A1", A1Range(None, 1, 1, 1, 1)),
        ("a1", A1Range(None, 1, 1, 1, 1)),
        ("2:5", A1Range(None, 2, None, 5, None)),
        ("Sheet1", A1Range("Sheet1")),
        ("'Sheet1'", A1Range("Sheet1")),
        ("'D3'", A1Range("D3")),
        ("'D3'!A1:D4", A1Range("D3", 1, 1, 4, 4)),
        ("Sheet1!D4:A1", A1Range("Sheet1", 1, 1, 4, 4)),
        ("Sheet1!A4:D1", A1Range("Sheet1", 1, 1, 4, 4)),
        ("'Sheet1'!A1:1", A1Range("Sheet1", 1, 1, 1, None)),
        ("🌵 test 1!A:A", A1Range("🌵 test 1", None, 1, None, 1)),
        ("🌵 test 1", A1Range("🌵 test 1")),
        ("'a!b'!C3", A1Range("a!b", 3, 3, 3, 3)),
        ("a!b!C3", A1Range("a!b", 3, 3, 3, 3)),
        ("$A$1:$B2", A1Range(None, 1, 1, 2, 2)),
        ("Data!5:2", A1Range("Data", 2, None, 5, None)),
        ("ABCD1", A1Range("ABCD1")),  # wider than ZZZ: a tab name, not a cell
    ],
)
def test_parse_a1(text, expected):
    assert parse_a1(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "   ", "Sheet1!", "!A1", "Sheet1!NamedRange", "Sheet1!A1:B2:C3", "'unclosed!A1",
     "'x'A1", "''!A1", "Sheet1!A0", "Sheet1!A:5", "Sheet1!1:A", "Sheet1!A"],
)
def test_parse_a1_rejects(text):
    with pytest.raises(A1Error) as info:
        parse_a1(text)
    assert str(info.value) == text


@pytest.mark.parametrize(
    ("title", "quoted"),
    [
        ("Sheet1", "Sheet1"),
        ("Stock_2024", "Stock_2024"),
        ("Лист1", "Лист1"),
        ("D3", "'D3'"),
        ("R1C1", "'R1C1'"),
        ("worksheet 2", "'worksheet 2'"),
        ("It's", "'It''s'"),
        ("2024", "'2024'"),
        ("🌵 x", "'🌵 x'"),
        ("a-b", "'a-b'"),
        ("TRUE", "'TRUE'"),
    ],
)
def test_quote_sheet_name_quotes_only_when_needed(title, quoted):
    assert quote_sheet_name(title) == quoted


@pytest.mark.parametrize(
    ("r", "text"),
    [
        (A1Range("Sheet1", 1, 1, 1000, 26), "Sheet1!A1:Z1000"),
        (A1Range("Sheet1", 1, 1, 1, 1), "Sheet1!A1"),
        (A1Range("D3", 1, 1, 4, 4), "'D3'!A1:D4"),
        (A1Range("Sheet1"), "Sheet1"),
        (A1Range("Stock", 2, 1, None, 1), "Stock!A2:A"),
        (A1Range("Stock", None, 1, None, 3), "Stock!A:C"),
        (A1Range(None, 2, None, 5, None), "2:5"),
        (A1Range("S", 1, 1, 1, None), "S!A1:1"),
        (A1Range(None, 3, 2, 3, 2), "B3"),
    ],
)
def test_format_a1_in_googles_echo_form(r, text):
    assert format_a1(r) == text


def test_round_trip_keeps_meaning():
    for text in ["Stock!A2:A", "'It''s'!B:C", "A1", "2:5", "'worksheet 2'!A2:C3"]:
        assert parse_a1(format_a1(parse_a1(text))) == parse_a1(text)


def test_clamp_closes_open_sides_at_the_grid():
    assert parse_a1("Sheet1!A2:A").clamp(1000, 26) == A1Range("Sheet1", 2, 1, 1000, 1)
    assert parse_a1("Sheet1").clamp(1000, 26) == A1Range("Sheet1", 1, 1, 1000, 26)
    assert parse_a1("Sheet1!A1:1").clamp(1000, 26) == A1Range("Sheet1", 1, 1, 1, 26)
    assert format_a1(parse_a1("2:5").with_sheet("S").clamp(10, 3)) == "S!A2:C5"


def test_format_needs_a_tab_for_a_whole_tab_range():
    with pytest.raises(A1Error):
        format_a1(A1Range(None))


@pytest.mark.parametrize(
    ("text", "sheet", "name"),
    [("Totals", None, "Totals"), ("Stock!Totals", "Stock", "Totals"),
     ("'Sheet1'!NamedRange", "Sheet1", "NamedRange"), ("'It''s'!net_2", "It's", "net_2")],
)
def test_named_ranges_are_read_with_or_without_their_tab(text, sheet, name):
    ref = parse_named(text)
    assert (ref.sheet, ref.name) == (sheet, name)


@pytest.mark.parametrize("text", ["'Totals'", "Stock!A1", "A1:B2", "Stock!", "!Totals", "R1C1", "TRUE",
                                  "2nd", "has space", "Stock!A:A"])
def test_cells_quoted_tabs_and_names_google_refuses_are_no_named_range(text):
    assert parse_named(text) is None


def test_range_names_follow_googles_rules():
    assert is_range_name("Totals") and is_range_name("_x1") and is_range_name("Итог")
    assert not any(is_range_name(text) for text in ("A1", "XFD7", "R1C1", "C", "false", "1x",
                                                    "a-b", "x" * 251))
