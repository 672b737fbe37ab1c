"""Tokens painted out of a play-area crop before the card reader sees it.

The report card (报牌) is card-sized with a red frame and the pass token is a framed
square; the card reader, trained on cards, can take either for a card (a report card read
as a big joker makes a phantom play). The watcher finds tokens by their markers; the same
markers, found in the area crop, say where to paint the crop over with the felt's colour
before the cards are read, so a token is only ever a token.
"""

from __future__ import annotations

import cv2
import numpy as np

from .markers import MarkerDetector, token_kind
from .sheets import PASS_TOKEN_MM, REPORT_CARD_MM, TOKEN_MARKER_MM

MARGIN_MM = 2.0
TOKEN_BOX_MM = {
    # (x0, y0, x1, y1) of the token around its marker's centre, in the marker's own axes;
    # the report card's marker sits 6 mm above the card's middle (sheets.token_shapes)
    "report": (-REPORT_CARD_MM[0] / 2, -REPORT_CARD_MM[1] / 2 + 6, REPORT_CARD_MM[0] / 2, REPORT_CARD_MM[1] / 2 + 6),
    "pass": (-PASS_TOKEN_MM[0] / 2, -PASS_TOKEN_MM[1] / 2, PASS_TOKEN_MM[0] / 2, PASS_TOKEN_MM[1] / 2),
}


def mask_tokens(image_bgr: np.ndarray, detector: MarkerDetector) -> np.ndarray:
    """``image_bgr`` with every token found in it covered by the felt's colour (a copy;
    the image itself where there is no token)."""
    tokens = [(kind, m) for m in detector.detect(cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)) if (kind := token_kind(m.id))]
    if not tokens:
        return image_bgr
    border = np.concatenate([image_bgr[0], image_bgr[-1], image_bgr[:, 0], image_bgr[:, -1]])
    felt = tuple(int(v) for v in np.median(border, axis=0))
    masked = image_bgr.copy()
    for kind, marker in tokens:
        c = np.asarray(marker.corners, np.float32).reshape(-1, 2)  # TL, TR, BR, BL in the marker's axes
        centre = c.mean(axis=0)
        ex, ey = (c[1] - c[0]) / TOKEN_MARKER_MM, (c[3] - c[0]) / TOKEN_MARKER_MM  # pixels per mm along each axis
        x0, y0, x1, y1 = TOKEN_BOX_MM[kind]
        x0, y0, x1, y1 = x0 - MARGIN_MM, y0 - MARGIN_MM, x1 + MARGIN_MM, y1 + MARGIN_MM
        quad = np.array([centre + x * ex + y * ey for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))])
        cv2.fillConvexPoly(masked, np.round(quad).astype(np.int32), felt)
    return masked
