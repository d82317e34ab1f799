"""The ``[daemon]`` settings section (``newsdedup serve``).

Until ``Settings`` carries a ``daemon`` field, ``daemon_settings(settings)`` answers the defaults;
once it does, ``[daemon]`` in TOML, ``NEWSDEDUP_DAEMON_*`` and ``--set daemon.x=y`` work like every
other section. ``auth_token`` is a secret: it is never logged or echoed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..settings import _opt


@dataclass(frozen=True)
class DaemonSettings:
    host: str = _opt("127.0.0.1", doc="address the HTTP API binds to (loopback by default)")
    port: int = _opt(8080, lo=0, hi=65535, doc="HTTP port (0: any free port, printed in the log)")
    queue_dir: str = _opt("./newsdedup-queue", doc="directory of the durable ingest queue (SQLite, WAL, synchronous=FULL)")
    queue_max: int = _opt(100_000, lo=1, doc="most queued articles; beyond it POST answers 429 with Retry-After")
    batch_size: int = _opt(64, lo=1, hi=100_000, doc="articles the worker decides and writes per batch")
    batch_wait_seconds: float = _opt(0.5, lo=0.0, hi=3600.0, doc="longest wait for a batch to fill before it is processed")
    featurize_workers: int = _opt(2, lo=1, hi=256, doc="threads that featurise the next batch while the current one is written")
    max_body_bytes: int = _opt(20 * 1024 * 1024, lo=1024, doc="largest POST body; larger requests answer 413")
    max_items_per_request: int = _opt(10_000, lo=1, doc="most articles in one POST; more answers 413")
    auth_token: str = _opt("", doc="bearer token required by write endpoints; empty: no auth (set via NEWSDEDUP_DAEMON_AUTH_TOKEN)")
    store_retry_initial_seconds: float = _opt(0.5, lo=0.001, hi=3600.0, doc="first wait after a store error; doubles per failure")
    store_retry_max_seconds: float = _opt(30.0, lo=0.001, hi=3600.0, doc="longest wait between store retries")
    retry_after_seconds: int = _opt(5, lo=1, hi=3600, doc="Retry-After sent with 429/503")
    lease: str = _opt("auto", choices=("auto", "none", "file", "elasticsearch"),
                      doc="writer lease: auto = elasticsearch for an ES store, file lock for a directory store")
    lease_name: str = _opt("writer", doc="lease document id; daemons sharing one index must share it")
    lease_ttl_seconds: float = _opt(30.0, lo=0.05, hi=3600.0, doc="a lease not renewed for this long may be taken over")
    lease_retry_seconds: float = _opt(5.0, lo=0.01, hi=3600.0, doc="how often a standby daemon tries to take the lease")
    crawl_sources: str = _opt("", doc="crawler sources TOML; empty: no scheduled crawling")
    crawl_interval_seconds: float = _opt(900.0, lo=0.1, doc="seconds between crawls of a source (a source's extra.interval_seconds wins)")
    crawl_state_dir: str = _opt("", doc="crawl state directory; empty: <queue_dir>/crawl-state")
    crawl_batch_size: int = _opt(50, lo=1, hi=10_000, doc="crawled articles enqueued per batch")
    shutdown_grace_seconds: float = _opt(30.0, lo=0.0, hi=86400.0, doc="on SIGTERM, how long to drain the queue before exiting")


def daemon_settings(settings) -> DaemonSettings:
    """The daemon section of ``settings``, or the defaults while ``Settings`` has none."""
    return getattr(settings, "daemon", None) or DaemonSettings()


def _daemon_layer(config_file, sets: dict, environ) -> dict:
    """``daemon.*`` values from the TOML file, ``NEWSDEDUP_DAEMON_*`` and ``--set``, in that order."""
    import os
    import tomllib

    layer: dict = {}
    config_file = config_file or environ.get("NEWSDEDUP_CONFIG")
    if config_file:
        try:
            with open(config_file, "rb") as fh:
                data = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError):
            data = {}  # load_settings reports these
        table = data.get("daemon") or {}
        if isinstance(table, dict):
            layer.update(table)
    prefix = "NEWSDEDUP_DAEMON_"
    for name, value in (environ or os.environ).items():
        if name.startswith(prefix) and len(name) > len(prefix):
            layer[name[len(prefix):].lower()] = value
    layer.update(sets)
    return layer


def build_daemon_settings(layer: dict, base: DaemonSettings | None = None) -> DaemonSettings:
    """Validate ``{key: raw}`` like ``load_settings`` does (types, ranges, choices)."""
    import dataclasses
    from typing import get_type_hints

    from ..errors import ConfigError
    from ..settings import _check, _coerce

    fields = {f.name: f for f in dataclasses.fields(DaemonSettings)}
    hints = get_type_hints(DaemonSettings)
    values = dataclasses.asdict(base or DaemonSettings())
    for key, raw in layer.items():
        if key not in fields:
            raise ConfigError(f"daemon.{key}", f"unknown key; daemon has {sorted(fields)}")
        value = _coerce(f"daemon.{key}", hints[key], raw)
        _check(f"daemon.{key}", fields[key].metadata, value)
        values[key] = value
    return DaemonSettings(**values)
