"""Image files in, with bounds: the header is read before any pixel is decoded.

A photo handed to ``recognize`` may be anything: a 200-megapixel panorama or a crafted
"decompression bomb" would take the process's memory, a truncated upload would decode
to half an image that reads as fewer cards. So the size comes from the header first,
and the decode must consume the whole file; either failing is one clear line.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

MAX_PIXELS = 40_000_000
"""The default largest image (40 megapixels: a phone's main camera is 12-50 MP)."""


class ImageError(ValueError):
    """An image file that cannot be read: says which file and why, in one line."""


def load_image(path: str | Path, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """The image at ``path`` as H x W x 3 uint8 BGR (turned as its EXIF orientation says,
    as OpenCV's ``imread`` would), or :class:`ImageError`."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    path = Path(path)
    if not path.exists():
        raise ImageError(f"no such file: {path}")
    if not path.is_file():
        raise ImageError(f"not a file: {path}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as img:
                w, h = img.size
                if w * h > max_pixels:
                    raise ImageError(f"image too large: {path} is {w}x{h} px ({w * h / 1e6:.1f} MP; the limit is {max_pixels / 1e6:g} MP)")
                img.load()
                rgb = np.asarray(ImageOps.exif_transpose(img).convert("RGB"))
    except ImageError:
        raise
    except UnidentifiedImageError:
        raise ImageError(f"not a readable image: {path}") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise ImageError(f"damaged or truncated image: {path} ({exc})") from None
    return np.ascontiguousarray(rgb[:, :, ::-1])
