"""Bounded image input: the header is checked before decoding; damage is one clear line."""

import json

import cv2
import numpy as np
import pytest

from recognizer.images import ImageError, load_image
from web.app.cli import main


@pytest.fixture
def photo(tmp_path):
    path = tmp_path / "photo.jpg"
    img = np.zeros((120, 200, 3), np.uint8)
    img[:, :100] = (255, 0, 0)  # blue left half, BGR
    cv2.imwrite(str(path), img)
    return path


def test_loads_bgr_as_opencv_would(photo):
    img = load_image(photo)
    assert img.shape == (120, 200, 3) and img.dtype == np.uint8
    assert img[60, 20, 0] > 200 and img[60, 20, 2] < 50


def test_refuses_images_over_the_pixel_limit_before_decoding(photo):
    with pytest.raises(ImageError, match=r"image too large: .*200x120 px .*limit is 0.02 MP"):
        load_image(photo, max_pixels=20_000)


@pytest.mark.parametrize("cut", [0.5, 0.9])
def test_truncated_files_are_a_clear_error(tmp_path, photo, cut):
    data = photo.read_bytes()
    bad = tmp_path / "cut.jpg"
    bad.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(ImageError, match="damaged or truncated image"):
        load_image(bad)


def test_missing_folder_and_garbage(tmp_path):
    with pytest.raises(ImageError, match="no such file"):
        load_image(tmp_path / "nope.png")
    with pytest.raises(ImageError, match="not a file"):
        load_image(tmp_path)
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    with pytest.raises(ImageError):
        load_image(junk)


def test_recognize_reports_a_too_large_image_in_one_line(tmp_path, photo, capsys):
    assert main(["recognize", str(photo), "--max-pixels", "1000", "--json"]) == 1
    out, err = capsys.readouterr()
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert record["error"].startswith("image too large:") and "\n" not in record["error"]
    assert "Traceback" not in err
    assert main(["recognize", str(photo)]) == 0
