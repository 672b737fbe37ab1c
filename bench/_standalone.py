"""Imported first by every benchmark script.

Run as ``python bench/NAME.py``, the folder bench/ heads ``sys.path``, where
bench/referee.py and bench/recognizer.py would shadow the packages they measure: take
bench/ off the path (the project itself is installed in the virtual environment).
"""

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
