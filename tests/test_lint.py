"""Names that are used but never defined, imports that are never used, syntax errors: the
mistakes a rarely run path (an error handler, a CLI branch) would otherwise carry until it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_tree_has_no_undefined_names_unused_imports_or_syntax_errors():
    found = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F,E9", "indexer", "crawlers", "tests", "bench", "scripts"],
        cwd=ROOT, capture_output=True, text=True)
    assert found.returncode == 0, found.stdout + found.stderr
