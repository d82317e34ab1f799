"""Where a daemon's durable queue lives, and which store it belongs to.

Accepted articles wait in the queue until the worker has written them to the store, so the queue
goes with that store, not with the working directory a daemon happened to start in:

* embedded store: ``<store directory>/queue``;
* Elasticsearch: ``<daemon.queue_base>/<index>@<host>`` (a directory named after the index, under
  a base that defaults to the user's state directory).

``daemon.queue_dir`` set explicitly wins. Either way the queue records its store
(``store_identity``); a daemon refuses a queue recorded for another store, whose articles would
otherwise be written to the wrong index or wait forever.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import NewsdedupError
from ..settings import Settings
from ..store import is_remote

QUEUE_SUBDIR = "queue"


class QueueOfAnotherStore(NewsdedupError):
    """The queue directory was recorded for a different store."""


def default_queue_base() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "newsdedup" / "queues"


def _es_endpoint(location: str) -> str:
    """host:port of an Elasticsearch URL (the first, for a list), without user info."""
    parts = urlsplit(location.split(",")[0].strip())
    host = parts.hostname or "localhost"
    return f"{host}:{parts.port}" if parts.port else host


def store_identity(settings: Settings) -> str:
    location = settings.store.path
    if is_remote(location):
        target = f"cloud:{settings.es.cloud_id.split(':', 1)[0]}" if settings.es.cloud_id else _es_endpoint(location)
        return f"elasticsearch:{target}/{settings.es.index}"
    return f"embedded:{Path(location).expanduser().resolve()}"


def queue_dir_for(settings: Settings) -> Path:
    """The queue directory of the store ``settings`` name (see the module docstring)."""
    if settings.daemon.queue_dir:
        return Path(settings.daemon.queue_dir).expanduser()
    location = settings.store.path
    if not is_remote(location):
        return Path(location).expanduser().resolve() / QUEUE_SUBDIR
    base = Path(settings.daemon.queue_base).expanduser() if settings.daemon.queue_base else default_queue_base()
    target = settings.es.cloud_id.split(":", 1)[0] if settings.es.cloud_id else _es_endpoint(location)
    name = re.sub(r"[^\w.@-]+", "_", f"{settings.es.index}@{target}")
    return base.resolve() / name
