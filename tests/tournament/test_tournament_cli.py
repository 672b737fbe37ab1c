"""The tournament desk from the command line: each row of what used to go wrong."""

from __future__ import annotations

import csv
import json

import pytest

from referee.simulate import play_session
from web.app.cli import main
from web.store import Store
from tests.store.support import TEST_SECRET
from web.tournament import service
from web.tournament.text import width


@pytest.fixture
def run(db_url, tmp_path, capsys):
    """``run(*argv)`` -> (exit code, stdout, stderr) against the test database."""
    loc = ["--data", str(tmp_path / "guandan-data")]
    if not db_url.startswith("sqlite"):
        loc = ["--db", db_url, *loc]

    def call(*argv):
        code = main([*argv, *loc])
        out, err = capsys.readouterr()
        return code, out, err

    return call


def _pairs(tmp_path, rows, encoding="utf-8-sig"):
    path = tmp_path / "pairs.csv"
    text = "pair,name,player1,player2,rating\r\n" + "".join(f"{r}\r\n" for r in rows)
    path.write_bytes(text.encode(encoding))
    return str(path)


ROWS = ["P1,江苏淮安队,张伟,李娜,1800", "P2,南京红山队,王芳,刘洋,1700", "P3,苏州园林队,陈静,杨磊,1600",
        "P4,扬州瘦西湖队,赵敏,黄涛,1500"]


@pytest.fixture
def drawn(run, tmp_path):
    """A cup of four pairs from an Excel CSV (with BOM), round 1 drawn by rating and played."""
    assert run("event", "create", "CUP", "--name", "六摩尔杯", "--rounds", "3", "--deals", "2")[0] == 0
    assert run("event", "pairs", "CUP", _pairs(tmp_path, ROWS))[1] == "added 4 pairs to CUP from pairs.csv (utf-8)\n"
    run("official", "Chief Wang", "--role", "chief")
    code, out, _ = run("event", "draw", "CUP", "--by-rating")
    tables = [json.loads(line) for line in out.splitlines()]
    lines = [json.dumps(e, ensure_ascii=False) for i, d in enumerate(tables)
             for e in play_session(40 + i, {"NS": d["NS"], "EW": d["EW"]}, table=d["table"])]
    (tmp_path / "r1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run("import", str(tmp_path / "r1.jsonl"))  # lines after the round's deal limit are refused
    return tables


def test_a_second_signature_for_a_side_is_refused(run, drawn):
    t = drawn[0]["table"]
    assert run("sign", t, "--side", "NS", "--by", "张伟")[0] == 0
    code, _, err = run("sign", t, "--side", "NS", "--by", "李娜")
    assert code == 1 and "refused: sign: NS already signed this result: 张伟 at " in err
    assert run("sign", t, "--side", "EW", "--by", "陈静")[1] == f"{t} session 1: final (EW: 陈静, NS: 张伟)\n"


def test_draw_waits_for_final_results_unless_the_chief_overrides(run, drawn):
    t1, t2 = (d["table"] for d in drawn)
    run("sign", t1, "--side", "NS", "--by", "张伟")
    run("sign", t1, "--side", "EW", "--by", "陈静")
    run("dispute", t2, "--side", "EW", "--by", "赵敏", "--note", "deal 2")
    code, _, err = run("event", "draw", "CUP")
    assert code == 2 and f"round 2 waits for every result to be final (S3): {t2} disputed" in err
    code, _, err = run("event", "draw", "CUP", "--reason", "late")
    assert code == 2 and "--reason goes with --override-by" in err
    code, out, _ = run("event", "draw", "CUP", "--override-by", "Chief Wang", "--reason", "appeal heard after")
    assert code == 0 and {json.loads(line)["round"] for line in out.splitlines()} == {2}
    (ruling,) = [json.loads(line) for line in run("event", "rulings", "CUP")[1].splitlines()]
    assert (ruling["kind"], ruling["round"], ruling["by"]) == ("draw", 2, "Chief Wang")
    assert ruling["reason"] == f"appeal heard after (not final: {t2} disputed)"
    assert ruling["at"].endswith(" Asia/Shanghai")


def test_forfeits_over_signed_results_and_second_forfeits(run, drawn):
    t = drawn[0]
    run("sign", t["table"], "--side", "NS", "--by", "张伟")
    run("sign", t["table"], "--side", "EW", "--by", "陈静")
    code, _, err = run("event", "forfeit", "CUP", "--round", "1", "--pair", t["EW"], "--by", "Chief Wang")
    assert code == 2 and "has a recorded result (final, signed EW by 陈静, NS by 张伟)" in err
    assert run("event", "forfeit", "CUP", "--round", "1", "--pair", t["EW"], "--by", "Chief Wang",
               "--reason", "left the hall")[0] == 0
    code, _, err = run("event", "forfeit", "CUP", "--round", "1", "--pair", t["EW"], "--by", "Chief Wang",
                       "--reason", "again")
    assert code == 2 and f"{t['EW']} already forfeited" in err and "event forfeit --withdraw" in err
    assert run("event", "forfeit", "CUP", "--round", "1", "--pair", t["NS"], "--by", "Chief Wang",
               "--reason", "it was NS who left")[0] == 0
    code, _, err = run("event", "forfeit", "CUP", "--round", "1", "--pair", t["NS"], "--by", "Chief Wang",
                       "--withdraw")
    assert code == 2 and f"withdrawing the forfeit of {t['NS']} needs the chief referee's reason" in err
    assert run("event", "forfeit", "CUP", "--round", "1", "--pair", t["NS"], "--by", "Chief Wang",
               "--withdraw", "--reason", "nobody left")[0] == 0
    kinds = [(r["kind"], r["pair"]) for r in map(json.loads, run("event", "rulings", "CUP")[1].splitlines())]
    assert kinds == [("forfeit", t["EW"]), ("forfeit_withdrawn", t["EW"]), ("forfeit", t["NS"]),
                     ("forfeit_withdrawn", t["NS"])]


def test_exports_by_the_file_name(run, drawn, tmp_path):
    out_pdf, out_csv = tmp_path / "standings.pdf", tmp_path / "standings.csv"
    assert run("export", "standings", "--out", str(out_pdf))[0] == 0
    assert out_pdf.read_bytes().startswith(b"%PDF")
    assert run("export", "standings", "--out", str(out_csv))[0] == 0
    rows = list(csv.DictReader(out_csv.open(encoding="utf-8-sig")))
    assert {r["name"] for r in rows} == {"江苏淮安队", "南京红山队", "苏州园林队", "扬州瘦西湖队"}
    code, _, err = run("export", "standings", "--out", str(tmp_path / "standings.txt"))
    assert code == 2 and "name a .pdf, .csv or .xlsx file" in err
    assert run("export", "sheet", "--round", "1", "--out", str(tmp_path / "r1.pdf"))[0] == 0
    assert (tmp_path / "r1.pdf").read_bytes().startswith(b"%PDF")
    code, _, err = run("export", "sheet", "--round", "2", "--out", str(tmp_path / "r2.pdf"))
    assert code == 2 and "round 2: no table has been drawn" in err and not (tmp_path / "r2.pdf").exists()


def test_plain_text_standings_line_up(run, drawn):
    code, out, _ = run("standings")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 5 and lines[0].startswith("名次 Rank")
    lot = width(lines[0][:lines[0].index("抽签 Lot") + len("抽签 Lot")])
    assert all(width(line) >= lot and line[_cut(line, lot) - 1].isalnum() for line in lines)  # the lot right-aligned
    assert lines[0].endswith("备注 Notes")


def _cut(line: str, columns: int) -> int:
    return next(i for i in range(len(line) + 1) if width(line[:i]) == columns)


def test_a_bad_pair_list_names_every_line_and_stores_nothing(run, db_url, tmp_path):
    run("event", "create", "CUP")
    rows = [ROWS[0], ROWS[1], ROWS[0].replace("张伟", "甲"), ",无编号,乙,丙", "P5,队,,丁"]
    code, _, err = run("event", "pairs", "CUP", _pairs(tmp_path, rows, "gbk"))
    assert code == 2
    assert err.splitlines() == [
        "guandan-ref event pairs: error: pairs.csv: line 4, column 'pair': duplicate id 'P1' (line 2 has it)",
        "guandan-ref event pairs: error: pairs.csv: line 5, column 'pair': empty",
        "guandan-ref event pairs: error: pairs.csv: line 6, column 'player1': empty",
        "guandan-ref event pairs: nothing added (3 problem(s))",
    ]
    code, out, _ = run("event", "pairs", "CUP", _pairs(tmp_path, ROWS, "gbk"))
    assert code == 0 and out == "added 4 pairs to CUP from pairs.csv (gb18030)\n"
    with Store(db_url, secret_key=TEST_SECRET) as store:
        assert [p["name"] for p in service.pairs(store, "CUP")] == ["江苏淮安队", "南京红山队", "苏州园林队", "扬州瘦西湖队"]


def test_a_game_file_comes_onto_a_drawn_table_with_import_table(run, tmp_path):
    """The shipped example (table T1, teams by name) onto round 1's table of a two-pair cup."""
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"
    lines = [line for line in example.read_text().splitlines() if line.strip()]
    run("event", "create", "CUP", "--rounds", "1", "--deals", "50", "--minutes", "600")
    run("event", "pairs", "CUP", _pairs(tmp_path, ROWS[:2]))
    (table,) = [json.loads(line) for line in run("event", "draw", "CUP")[1].splitlines()]
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text("".join(json.dumps({**json.loads(line), "table": table["table"]}) + "\n" for line in lines))
    code, out, err = run("import", str(renamed))
    assert code == 1 and f"line 1: table {table['table']}: session_start teams" in err
    assert f"to bring a game file onto this drawn table: guandan-ref import FILE --table {table['table']}" in err
    code, out, err = run("import", str(example), "--table", table["table"])
    assert code == 0, err
    assert out == f"imported {len(lines)} events into 1 table(s); 0 already stored; 0 rejected\n"
    result = [json.loads(line) for line in run("results", "--json", "--table", table["table"])[1].splitlines()]
    assert {r["table"] for r in result} == {table["table"]} and any(r["type"] == "deal_end" for r in result)
    # 0 rejected: the session_start the draw would refuse with the file's teams took the draw's pairs
    two = tmp_path / "two.jsonl"
    two.write_text(lines[0] + "\n" + json.dumps({**json.loads(lines[1]), "table": "T9"}) + "\n")
    code, _, err = run("import", str(two), "--table", "CUP-R1-T9")
    assert code == 2 and "the file holds events of tables T1, T9; --table takes a file of one table" in err


def test_a_dispute_from_the_command_line_within_its_window(run, drawn):
    t = drawn[0]["table"]
    run("sign", t, "--side", "NS", "--by", "张伟")
    run("sign", t, "--side", "EW", "--by", "陈静")
    code, _, err = run("dispute", t, "--side", "EW", "--by", "杨磊", "--note", "deal 2", "--reason", "late")
    assert code == 2 and "--reason goes with --override-by" in err
    code, _, err = run("dispute", t, "--side", "EW", "--by", "杨磊", "--note", "deal 2",
                       "--override-by", "Chief Wang", "--reason", "asked")
    assert code == 1 and "still within the S4 entry error (within 10 min after the round) window" in err
    code, out, _ = run("dispute", t, "--side", "EW", "--by", "杨磊", "--note", "deal 2")
    assert code == 0 and out == f"{t} session 1: disputed (EW (杨磊): deal 2)\n"
