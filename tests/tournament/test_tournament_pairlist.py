"""Pair lists as organisers have them: Excel's CSV (BOM), GBK/GB18030, .xlsx; the whole
file checked before anything is stored."""

from __future__ import annotations

import pytest
from openpyxl import Workbook

from web.tournament import service
from web.tournament.pairlist import PairListError, parse_rows, read_pairs

HEADER = "pair,name,player1,player2,rating"
ROWS = ["P01,江苏淮安队,张伟,李娜,1800", "P02,南京红山队,王芳,刘洋,1750", "P03,苏州园林队,陈静,杨磊,"]


def _csv(tmp_path, lines, encoding="utf-8", name="pairs.csv"):
    path = tmp_path / name
    path.write_bytes("\r\n".join(lines).encode(encoding) + b"\r\n")
    return path


@pytest.mark.parametrize("encoding, detected", [("utf-8", "utf-8"), ("utf-8-sig", "utf-8"),
                                                ("gbk", "gb18030"), ("gb18030", "gb18030")])
def test_excel_csv_in_any_of_its_encodings(tmp_path, encoding, detected):
    entries, used = read_pairs(_csv(tmp_path, [HEADER, *ROWS], encoding))
    assert used == detected
    assert [(e.pair, e.name, e.player1, e.player2, e.rating) for e in entries] == [
        ("P01", "江苏淮安队", "张伟", "李娜", 1800.0), ("P02", "南京红山队", "王芳", "刘洋", 1750.0),
        ("P03", "苏州园林队", "陈静", "杨磊", 0.0)]


def test_a_named_encoding_and_a_wrong_one(tmp_path):
    path = _csv(tmp_path, [HEADER, *ROWS], "gbk")
    assert read_pairs(path, "gbk")[0][0].player1 == "张伟"
    with pytest.raises(PairListError, match=r"pairs.csv: line 2: not utf-8 text \(byte 0x"):
        read_pairs(path, "utf-8")
    with pytest.raises(PairListError, match="unknown encoding 'klingon'"):
        read_pairs(path, "klingon")


def test_bytes_that_are_no_known_encoding_name_the_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(HEADER.encode() + b"\nP01,ok,a,b\nP02,\xff\xff\xff,c,d\n")
    with pytest.raises(PairListError, match=r"bad.csv: line 3: neither UTF-8 nor GBK/GB18030 text .* --encoding"):
        read_pairs(path)


def test_an_excel_workbook(tmp_path):
    book = Workbook()
    sheet = book.active
    sheet.append(["编号", "队名", "选手1", "选手2", "等级分"])  # the organisers' own headings
    sheet.append(["P01", "江苏淮安队", "张伟", "李娜", 1800])
    sheet.append([None, None, None, None, None])  # a blank row Excel keeps
    sheet.append([7, "数字编号队", "王芳", "刘洋", 1650.5])
    book.save(tmp_path / "pairs.xlsx")
    entries, used = read_pairs(tmp_path / "pairs.xlsx")
    assert used == "xlsx"
    assert [(e.pair, e.name, e.player2, e.rating, e.line) for e in entries] == [
        ("P01", "江苏淮安队", "李娜", 1800.0, 2), ("7", "数字编号队", "刘洋", 1650.5, 4)]


def test_a_file_that_is_no_workbook(tmp_path):
    (tmp_path / "pairs.xlsx").write_text("pair,name\n", encoding="utf-8")
    with pytest.raises(PairListError, match=r"pairs.xlsx: not an Excel workbook"):
        read_pairs(tmp_path / "pairs.xlsx")


def test_every_bad_line_is_named_with_its_column(tmp_path):
    lines = [HEADER, ROWS[0], ",无编号队,甲,乙", "P02,,王芳,刘洋", ROWS[0].replace("张伟", "X"),
             "P05,队,  ,乙,strong"]
    with pytest.raises(PairListError) as caught:
        read_pairs(_csv(tmp_path, lines))
    assert caught.value.problems == [
        "line 3, column 'pair': empty",
        "line 4, column 'name': empty",
        "line 5, column 'pair': duplicate id 'P01' (line 2 has it)",
        "line 6, column 'player1': empty",
        "line 6, column 'rating': not a number: 'strong'",
    ]
    assert str(caught.value).startswith("pairs.csv: line 3, column 'pair': empty (and 4 more)")


def test_a_header_without_the_needed_columns(tmp_path):
    with pytest.raises(PairListError, match=r"line 1: no column 'player1', 'player2' in the header"):
        read_pairs(_csv(tmp_path, ["pair,name,players", "P1,a,b"]))


def test_nothing_is_stored_until_the_whole_list_is_right(store):
    service.create(store, "CUP", "Cup")
    service.add_pair(store, "CUP", "P02", "early", "a", "b")
    entries = parse_rows([line.split(",") for line in [HEADER, *ROWS]], "pairs.csv")
    with pytest.raises(service.TournamentError, match=r"line 3: pair 'P02' exists already"):
        service.add_pairs(store, "CUP", entries)
    assert [p["pair"] for p in service.pairs(store, "CUP")] == ["P02"]
    with pytest.raises(service.TournamentError, match="player1 must be 1..120 characters"):
        service.add_pair(store, "CUP", "P09", "team", " ", "b")
    assert service.add_pairs(store, "CUP", [e for e in entries if e.pair != "P02"]) == 2
    assert [p["pair"] for p in service.pairs(store, "CUP")] == ["P01", "P02", "P03"]

