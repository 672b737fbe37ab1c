"""The ``classify`` and ``replay`` command-line contracts."""

import argparse
import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.cards import DOUBLE_DECK, FACES, card_name, cards_name
from web.app.cli import main
from web.referee_cli import classify_command

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_classify_prints_the_contract_fields(capsys):
    code, out, _ = run(capsys, "classify", "3S 4S 5H 6S 7S", "--level", "5", "--table", "8D 8C 8H 8S", "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["legal"], data["type"], data["rank"], data["size"], data["beats"]) == (True, "straight_flush", "7", 5, True)
    assert {r["type"] for r in data["readings"]} == {"straight_flush", "straight"}


def test_classify_illegal_and_declared(capsys):
    assert json.loads(run(capsys, "classify", "7S 8D")[1]) | {"readings": []} == {
        "legal": False, "type": None, "rank": None, "size": 2, "reading": None, "readings": []}
    data = json.loads(run(capsys, "classify", "AS AD 2S 2C 2H 2H", "--declared", "plate")[1])
    assert (data["type"], data["rank"]) == ("plate", "2")


def test_classify_refuses_more_copies_than_two_decks_hold(capsys):
    data = json.loads(run(capsys, "classify", "3S 3S 3S 3S")[1])
    assert (data["legal"], data["type"], data["readings"]) == (False, None, [])
    assert "more copies of 3S than two decks hold" in data["reason"]
    assert "reason" not in json.loads(run(capsys, "classify", "3S 3S 3D 3D")[1])


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FACES), st.integers(3, 8), st.lists(st.sampled_from(DOUBLE_DECK), max_size=2),
       st.sampled_from("23456789TJQKA"))
def test_no_play_with_three_copies_of_a_face_is_legal(face, copies, others, level):
    out = io.StringIO()
    args = argparse.Namespace(cards=cards_name([face] * copies + others), level=level, table=None, declared=None)
    with contextlib.redirect_stdout(out):
        classify_command(args)
    data = json.loads(out.getvalue())
    assert not data["legal"] and data["readings"] == [] and card_name(face) in data["reason"]


def test_classify_jokers_rank_names(capsys):
    data = json.loads(run(capsys, "classify", "SJ SJ BJ BJ")[1])
    assert (data["type"], data["rank"]) == ("four_jokers", "BJ")


@pytest.mark.parametrize(
    "argv,words",
    [
        (["classify", "3S 4Q"], "not a card: '4Q'"),
        (["classify", "3S", "--level", "Z"], "not a rank: 'Z'"),
        (["classify", "3S", "--declared", "flush"], "not a combination type"),
        (["classify", "3S", "--table", "3S 4D"], "table play is not a legal combination"),
        (["replay", "/nonexistent/events.jsonl"], "No such file"),
        (["replay", str(EXAMPLE), "--ruleset", "chess"], "unknown ruleset 'chess'"),
    ],
)
def test_bad_input_exits_2_with_one_line_on_stderr(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and words in err and err.count("\n") == 1


def test_replay_of_the_shipped_example(capsys):
    code, out, _ = run(capsys, "replay", str(EXAMPLE), "--json")
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [r["type"] for r in records].count("session_result") == 1
    flags = [r for r in records if r["type"] == "flag"]
    assert flags and all(set(r) >= {"rule", "severity", "seat", "message", "at", "claim_until"} for r in flags)
    ends = [r for r in records if r["type"] == "deal_end"]
    assert all(set(r) >= {"deal", "order", "upgrade", "levels"} for r in ends)


def test_replay_reports_bad_lines_by_number_and_goes_on(capsys, tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"type":"session_start","t":0}\nnot json\n{"type":"deal_start","t":1,"first_leader":"S"}\n'
                    '{"type":"play","t":2,"seat":"N","cards":["3S"]}\n')
    records = [json.loads(x) for x in run(capsys, "replay", str(path))[1].splitlines()]
    assert records[0]["type"] == "error" and records[0]["line"] == 2
    assert records[1]["rule"] == "P4"


def test_replay_with_a_toml_ruleset(capsys, tmp_path):
    rules = tmp_path / "club.toml"
    rules.write_text('base = "competition"\nfollow_seconds = 5\ncountdown_seconds = 0\n')
    path = tmp_path / "events.jsonl"
    path.write_text('{"type":"session_start","t":0}\n{"type":"deal_start","t":1,"first_leader":"S"}\n'
                    '{"type":"play","t":2,"seat":"S","cards":["3S"]}\n{"type":"pass","t":9,"seat":"E"}\n')
    records = [json.loads(x) for x in run(capsys, "replay", str(path), "--ruleset", str(rules))[1].splitlines()]
    assert [(r["rule"], r["seat"]) for r in records] == [("K3", "E")]
    rules.write_text("follow_secs = 5\n")
    code, _, err = run(capsys, "replay", str(path), "--ruleset", str(rules))
    assert code == 2 and "unknown ruleset key 'follow_secs'" in err


def test_console_script_is_installed():
    exe = shutil.which("guandan-ref", path=str(Path(sys.executable).parent))
    assert exe, "guandan-ref is not installed next to the interpreter"
    done = subprocess.run([exe, "classify", "BJ BJ"], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["type"] == "pair"
