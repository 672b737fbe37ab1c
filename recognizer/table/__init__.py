"""The table side of the recognizer: a camera looking down on a whole table.

Four ArUco markers at the table corners calibrate the camera (:mod:`.calibration`); the
seats' play areas are rectangles in table millimetres (:mod:`.layout`); report cards and
pass tokens carry markers of their own (:mod:`.markers`); :mod:`.segment` turns a stream
of per-area readings into ``play``/``pass``/``report`` observations, and
:mod:`.watcher` runs the whole per-frame pipeline. The card reader itself is passed in
from outside (:class:`recognizer.reader.CardReader` at a real table).
"""
