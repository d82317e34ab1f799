"""The daemon with a store wrapper for tests (started as ``python tests/daemon/flaky_daemon.py``):

* ``NDTEST_FAULT_FILE``: while that file exists every store call raises StoreUnavailable;
* ``NDTEST_WRITE_FAULT_FILE``: while that file exists ``write`` alone raises StoreUnavailable (an
  Elasticsearch cluster past its flood-stage disk watermark still answers reads);
* ``NDTEST_WRITE_DELAY``: seconds each ``write`` sleeps first (so a test can kill mid-processing);
* ``NDTEST_POISON_FILE``: while that file exists, ``write`` raises RuntimeError (not a store error)
  for a batch holding an article whose title contains POISON_MARK (a poison article);
* ``NDTEST_CRASH_FILE``: while that file exists, ``write`` of such a batch ends the process at once
  (``os._exit(137)``, as an out-of-memory kill would: nothing to catch).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.daemon import worker  # noqa: E402
from indexer.errors import StoreUnavailable  # noqa: E402
from indexer.pipeline import Indexer  # noqa: E402


POISON_MARK = "投毒"


class FlakyStore:
    def __init__(self, inner, fault_file: str | None, delay: float, poison_file: str | None = None,
                 crash_file: str | None = None):
        self._inner, self._fault, self._delay, self._poison, self._crash = inner, fault_file, delay, poison_file, crash_file

    def _check(self, name: str = ""):
        if self._fault and os.path.exists(self._fault):
            raise StoreUnavailable("simulated outage (fault file present)")
        write_fault = os.environ.get("NDTEST_WRITE_FAULT_FILE")
        if name == "write" and write_fault and os.path.exists(write_fault):
            raise StoreUnavailable("simulated write outage (write fault file present)")

    def __getattr__(self, name):
        attr = getattr(self._inner, name)
        if not callable(attr) or name == "close":
            return attr

        def call(*args, **kwargs):
            self._check(name)
            if name == "write" and self._delay:
                time.sleep(self._delay)
                self._check()
            if name == "write" and self._poison and os.path.exists(self._poison):
                if any(POISON_MARK in a.title for a in args[0]):
                    raise RuntimeError("simulated poison article")
            if name == "write" and self._crash and os.path.exists(self._crash):
                if any(POISON_MARK in a.title for a in args[0]):
                    os._exit(137)
            return attr(*args, **kwargs)

        return call


def _open(settings):
    fault = os.environ.get("NDTEST_FAULT_FILE")
    if fault and os.path.exists(fault):
        raise StoreUnavailable("simulated outage at open")
    ix = Indexer.open(settings)
    ix.store = FlakyStore(ix.store, fault, float(os.environ.get("NDTEST_WRITE_DELAY", "0") or 0),
                          os.environ.get("NDTEST_POISON_FILE"), os.environ.get("NDTEST_CRASH_FILE"))
    return ix


worker.open_indexer = _open

if __name__ == "__main__":
    from indexer.daemon.cli import serve

    serve(prog_name="flaky_daemon")
