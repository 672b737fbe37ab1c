"""Table layouts: the default 90 x 90 cm table, TOML files, and their errors."""

from pathlib import Path

import numpy as np
import pytest

from recognizer.table.layout import LayoutError, TableLayout, load_layout

EXAMPLE = Path(__file__).parents[3] / "recognizer" / "table" / "layout.example.toml"


def test_the_example_file_describes_the_default_table():
    assert load_layout(EXAMPLE) == load_layout(None) == TableLayout()


def test_default_areas_lie_in_front_of_their_seats():
    layout = TableLayout()
    centre = np.array([450.0, 450.0])
    towards = {"S": (0, 1), "N": (0, -1), "E": (1, 0), "W": (-1, 0)}
    for area in layout.areas:
        x0, y0, x1, y1 = area.rect
        offset = np.array([(x0 + x1) / 2, (y0 + y1) / 2]) - centre
        assert np.dot(offset, towards[area.seat]) > 100, area.seat
    assert layout.area_at((450, 650)).seat == "S"
    assert layout.area_at((450, 450)) is None


def test_area_corners_turn_the_area_upright_for_its_seat():
    layout = TableLayout()
    # East sits at the right edge facing West: its top-left is the area's South-West corner.
    assert layout.area("E").corners().tolist() == [[600, 600], [600, 300], [730, 300], [730, 600]]
    assert layout.area("N").corners()[0].tolist() == [600, 300]
    assert layout.area("W").corners()[0].tolist() == [300, 300]
    assert layout.area("S").corners()[0].tolist() == [300, 600]
    assert layout.area("E").size_mm() == layout.area("S").size_mm() == (300, 130)


def test_corner_markers_sit_inset_in_the_table_corners():
    layout = TableLayout(width_mm=1000, height_mm=800)
    assert layout.marker_corners(0)[0].tolist() == [10, 10]
    assert layout.marker_corners(2)[2].tolist() == [990, 790]
    with pytest.raises(ValueError, match="not a corner marker"):
        layout.marker_corners(7)


def test_a_file_may_change_only_some_keys(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text("[table]\nwidth_mm = 1000\nheight_mm = 1000\n[markers]\nsize_mm = 80\n")
    layout = load_layout(path)
    assert (layout.width_mm, layout.marker_mm, layout.areas) == (1000, 80, TableLayout().areas)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[table\n", "not valid TOML"),
        ("[tabel]\n", "unknown sections"),
        ("[table]\nwidth_mm = 'wide'\n", "width_mm must be a number"),
        ("[areas]\nS = [300, 600, 600, 730]\n", "one play area per seat"),
        ("[areas]\nS = [0, 0, 500, 500]\nN = [400, 400, 900, 900]\nE = [0, 600, 10, 700]\nW = [20, 600, 30, 700]\n", "S and N overlap"),
        ("[areas]\nX = [0, 0, 1, 1]\n", "not a seat"),
        ("[areas]\nS = [300, 600]\n", r"S must be \[x0, y0, x1, y1\]"),
        ("[areas]\nS = [300, 600, 1200, 730]\nN = [0,0,1,1]\nE = [2,2,3,3]\nW = [4,4,5,5]\n", "off the table"),
        ("[markers]\nsize_mm = 500\n", "do not fit"),
    ],
)
def test_bad_files_get_errors_naming_file_and_key(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(LayoutError, match=message) as info:
        load_layout(path)
    assert str(path) in str(info.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(LayoutError, match="cannot read table layout .*nope.toml"):
        load_layout(tmp_path / "nope.toml")
