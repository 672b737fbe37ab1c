"""Bounded JSON decoding: every limit refused with a clear message, never another exception."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.jsontext import JSONTextError, Limits, loads


def test_ordinary_event_decodes():
    line = '{"type": "play", "t": 12.5, "seat": "S", "cards": ["7H", "7D"], "confidence": 0.93}'
    assert loads(line) == json.loads(line)
    assert loads(line.encode()) == json.loads(line)


@pytest.mark.parametrize(("text", "says"), [
    ('{"t": ' + "9" * 5000 + "}", "number of 5000 characters"),
    ('{"t": 1' + "0" * 400 + ".0}", "number of"),
    ('{"t": 1e999}', "out of range"),
    ('{"t": NaN}', "NaN is not a JSON number"),
    ('{"t": -Infinity}', "-Infinity is not a JSON number"),
    ("[" * 30_000 + "]" * 30_000, "nested deeper than 16"),
    ('{"a": ' * 17 + "1" + "}" * 17, "nested deeper than 16"),
    ('{"type": "play", "t": }', "not JSON"),
    ("x" * 70_000, "too long"),
])
def test_each_limit_is_named(text, says):
    with pytest.raises(JSONTextError, match=says):
        loads(text)


def test_brackets_inside_strings_do_not_count_as_depth():
    text = json.dumps({"note": "[" * 100 + '{"' * 50})
    assert loads(text)["note"].startswith("[[")


def test_invalid_utf8_is_named():
    with pytest.raises(JSONTextError, match="not UTF-8"):
        loads(b'{"seat": "\xff"}')


def test_limits_are_settings():
    assert loads("[[[1]]]", Limits(max_depth=3)) == [[[1]]]
    with pytest.raises(JSONTextError, match="deeper than 2"):
        loads("[[[1]]]", Limits(max_depth=2))


@settings(max_examples=300)
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300)))
def test_arbitrary_input_decodes_or_raises_jsontexterror(data):
    try:
        loads(data)
    except JSONTextError:
        pass


@settings(max_examples=200)
@given(st.recursive(st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                    max_leaves=20))
def test_shallow_json_round_trips(value):
    text = json.dumps(value)
    if text.count("[") + text.count("{") <= 16:
        assert loads(text) == value


def test_deep_nesting_beyond_the_length_limit_is_still_refused_cleanly():
    with pytest.raises(JSONTextError, match="nested deeper"):
        loads("[" * 100_000 + "]" * 100_000, Limits(max_bytes=10**6))


@pytest.mark.parametrize("text", ['"\\ud800"', '{"a": ["x\\uDFFFy"]}', '{"\\udbff": 1}', '"\ud800"'])
def test_a_lone_surrogate_is_refused_by_name(text):
    with pytest.raises(JSONTextError, match="lone UTF-16 surrogate"):
        loads(text)


def test_a_surrogate_pair_is_one_character():
    assert loads('"\\ud83d\\ude00"') == "\U0001F600"
