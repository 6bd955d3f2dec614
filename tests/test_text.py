"""Positions: lines split the LSP way, columns converted between UTF-8, UTF-16 and code points."""
from torch_lsp.text import UTF8, UTF16, UTF32, LineIndex, lines_with_ends, split_keeping_breaks, split_lines


def test_lines_split_only_on_lsp_line_breaks():
    source = "a = '\u2028'\r\nb = '\x0c\u2029\x85'\rc\n"
    assert split_lines(source) == ["a = '\u2028'", "b = '\x0c\u2029\x85'", "c", ""]


def test_columns_of_non_ascii_text():
    index = LineIndex("s = 'é😀'; x.cuda()\n")
    byte_col = len("s = 'é😀'; x".encode("utf-8"))  # what ast reports for `.cuda`
    assert index.char_column(1, byte_col) == len("s = 'é😀'; x")  # 11 code points
    assert index.client_column(1, byte_col, UTF16) == 12  # 😀 is two UTF-16 units
    assert index.client_column(1, byte_col, UTF8) == byte_col
    assert index.client_column(1, byte_col, UTF32) == 11


def test_client_columns_round_trip_and_clamp():
    index = LineIndex("x = 'é😀'\n")
    for encoding in (UTF8, UTF16, UTF32):
        col = index.client_column(1, len("x = 'é😀'".encode()), encoding)
        assert index.char_from_client(0, col, encoding) == len("x = 'é😀'")
    assert index.char_from_client(2**31 - 1, 2**31 - 1, UTF16) == 0  # clamped to the last (empty) line
    assert index.char_from_client(0, 2**31 - 1, UTF16) == len("x = 'é😀'")


def test_lines_keep_their_own_breaks():
    source = "a\u2028\r\nb\rc\n\nd"
    assert split_keeping_breaks(source) == ["a\u2028", "\r\n", "b", "\r", "c", "\n", "", "\n", "d"]
    assert lines_with_ends(source) == ["a\u2028\r\n", "b\r", "c\n", "\n", "d"]
    assert lines_with_ends("x\n") == ["x\n"] and lines_with_ends("") == []


def test_offsets_of_client_positions_are_clamped_into_the_text():
    source = "é😀\u2028x\r\nyz\rw"
    index = LineIndex(source)
    assert index.line_starts == [0, len("é😀\u2028x\r\n"), len("é😀\u2028x\r\nyz\r")]
    assert index.offset_from_client(0, 3, UTF16) == 2  # after 😀, two UTF-16 units
    assert index.offset_from_client(0, 6, UTF8) == 2  # after 😀, four UTF-8 bytes
    assert index.offset_from_client(1, 1, UTF32) == source.index("z")
    assert index.offset_from_client(1, 2**31 - 1, UTF16) == source.index("\r", source.index("z"))
    assert index.offset_from_client(-1, 5, UTF16) == 0
    assert index.offset_from_client(2**31 - 1, 0, UTF16) == len(source)
