"""Printable sheets: right sizes in millimetres, detectable markers, committed copies current."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from recognizer.table.layout import TableLayout
from recognizer.table.markers import MarkerDetector
from recognizer.table.sheets import write_sheets

COMMITTED = Path(__file__).parents[3] / "recognizer" / "table" / "sheets"


@pytest.fixture(scope="module")
def sheets(tmp_path_factory):
    return write_sheets(tmp_path_factory.mktemp("sheets"), dpi=300)


def markers_on(path: Path):
    page = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    return page, MarkerDetector(scale=0.5).detect(page)


def side_mm(marker, dpi=300) -> float:
    c = marker.corners
    return float(np.mean([np.linalg.norm(c[i] - c[(i + 1) % 4]) for i in range(4)])) * 25.4 / dpi


def test_pdf_has_two_a4_pages(sheets):
    pdf = sheets[0].read_bytes()
    assert pdf.startswith(b"%PDF")
    assert b"/Count 2 " in pdf
    assert b"/MediaBox [ 0 0 595.2756 841.8898 ]" in pdf


def test_corner_page_prints_the_four_markers_at_the_layout_size(sheets):
    page, markers = markers_on(sheets[1])
    assert page.shape == (3508, 2480)  # A4 at 300 dpi
    assert sorted(m.id for m in markers) == [0, 1, 2, 3]
    for m in markers:
        assert side_mm(m) == pytest.approx(TableLayout().marker_mm, abs=0.5)
        # Printed upright: the marker's first corner is its top-left on the page.
        assert np.argmin(m.corners.sum(axis=1)) == 0


def test_token_page_prints_report_cards_and_pass_tokens(sheets):
    _, markers = markers_on(sheets[2])
    assert sorted(m.id for m in markers) == [10, 11, 12, 20, 21, 22]
    assert all(side_mm(m) == pytest.approx(40, abs=0.5) for m in markers)


def test_marker_size_follows_the_layout(tmp_path):
    paths = write_sheets(tmp_path, TableLayout(marker_mm=50), dpi=200)
    _, markers = markers_on(paths[1])
    assert [round(side_mm(m, dpi=200)) for m in markers] == [50] * 4


def test_committed_sheets_are_what_the_command_writes(sheets):
    for fresh in sheets[1:]:
        committed = cv2.imread(str(COMMITTED / fresh.name))
        assert committed is not None, f"{fresh.name} is missing: run guandan-ref table-sheets --out {COMMITTED}"
        assert np.array_equal(committed, cv2.imread(str(fresh)))
