"""A table runs the recognizer's runtime without any of its training side."""

import subprocess
import sys

RUNTIME = ["recognizer.reader", "recognizer.images", "recognizer.table.watcher", "recognizer.table.frames", "recognizer.table.capture", "recognizer.cli", "recognizer.table.cli"]


def test_runtime_modules_import_nothing_of_training():
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in RUNTIME)
        + "print(','.join(sorted(m for m in sys.modules if m.startswith('recognizer.training') or m.split('.')[0] in ('torch', 'ultralytics'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
