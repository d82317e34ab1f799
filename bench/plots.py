"""Saving benchmark plots the same way everywhere: a caption under each figure names the command
that remakes it, the date (UTC) and the machine, as the README promises for every figure."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path


def pyplot():
    """matplotlib.pyplot on the file-only backend (benchmarks run headless)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def machine() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()}-core {cpu}, {memory:.0f} GiB, {platform.system()}"


def save(fig, path: str | Path, command: str) -> None:
    fig.text(0.01, 0.01, f"{command}   ({time.strftime('%Y-%m-%d', time.gmtime())}, {machine()})", fontsize=7)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")
