"""Loops compiled with numba, their machine code cached on disk.

Two places run per-element loops that numpy can only express as several passes over large arrays
(the default model's token rows, the day-vector scan's selection). Compiled once per machine:
the code is cached next to the module (else in the user's cache directory), so later starts load
it instead of compiling (seconds). Compiled functions run without the GIL.
"""

from __future__ import annotations

from numba import njit


def compiled(fastmath: set[str] | bool = False):
    """A decorator: ``fn`` compiled with numba, nogil, cached on disk where a cache can be written."""

    def wrap(fn):
        try:
            return njit(nogil=True, cache=True, fastmath=fastmath)(fn)
        except RuntimeError:  # no writable cache location: compile at each start instead
            return njit(nogil=True, fastmath=fastmath)(fn)

    return wrap
