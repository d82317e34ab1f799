"""``newsdedup serve``: run the ingest daemon (HTTP API, durable queue, worker, crawl schedule)."""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import tempfile
import tomllib
from typing import Any

import click

from ..cli import _settings, common_options
from ..errors import ConfigError, NewsdedupError
from ..settings import Settings
from .settings import DaemonSettings, _daemon_layer, build_daemon_settings, daemon_settings

log = logging.getLogger(__name__)


def _has_daemon_section() -> bool:
    return any(f.name == "daemon" for f in dataclasses.fields(Settings))


def load_all(config: str | None, store: str | None, sets: tuple[str, ...], host: str | None = None,
             port: int | None = None) -> tuple[Settings, DaemonSettings]:
    """Settings plus the daemon section. While ``Settings`` has no ``daemon`` field, ``daemon.*``
    keys (TOML ``[daemon]``, ``NEWSDEDUP_DAEMON_*``, ``--set daemon.x=y``) are read here."""
    flags: dict[str, Any] = {}
    if host is not None:
        flags["host"] = host
    if port is not None:
        flags["port"] = port
    if _has_daemon_section():
        extra = tuple(f"daemon.{k}={v}" for k, v in flags.items())
        settings = _settings(config, store, tuple(sets) + extra)
        return settings, daemon_settings(settings)
    daemon_sets: dict[str, Any] = {}
    other: list[str] = []
    for item in sets:
        key, sep, value = item.partition("=")
        if sep and key.strip().startswith("daemon."):
            daemon_sets[key.strip()[len("daemon."):]] = value
        else:
            other.append(item)
    daemon_sets.update(flags)
    config_file = config or os.environ.get("NEWSDEDUP_CONFIG")
    cleanup = None
    try:
        if config_file and os.path.isfile(config_file):
            with open(config_file, "rb") as fh:
                try:
                    data = tomllib.load(fh)
                except tomllib.TOMLDecodeError:
                    data = None
            if data and "daemon" in data:  # load_settings does not know [daemon] yet: hand it the rest
                import json

                rest = {k: v for k, v in data.items() if k != "daemon"}
                fd, cleanup = tempfile.mkstemp(suffix=".toml")
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    for section, body in rest.items():
                        out.write(f"[{section}]\n")
                        for k, v in body.items():
                            out.write(f"{k} = {json.dumps(v, ensure_ascii=False)}\n")
                config = cleanup
        settings = _settings(config, store, tuple(other))
        try:
            dsettings = build_daemon_settings(_daemon_layer(config_file, daemon_sets, os.environ))
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from None
        return settings, dsettings
    finally:
        if cleanup:
            os.unlink(cleanup)


@click.command("serve")
@common_options
@click.option("--host", default=None, help="Bind address (daemon.host; default 127.0.0.1).")
@click.option("--port", default=None, type=click.IntRange(0, 65535), help="Port (daemon.port; default 8080).")
@click.option("--log-level", default="info", show_default=True, type=click.Choice(["debug", "info", "warning", "error"]))
def serve(store: str | None, config: str | None, sets: tuple[str, ...], host: str | None, port: int | None, log_level: str) -> None:
    """Run the ingest daemon: POST /v1/articles, GET /v1/articles/{id}, /v1/clusters, /healthz,
    /readyz, /metrics. SIGTERM drains the queue and exits 0."""
    from .service import run

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger().setLevel(getattr(logging, log_level.upper()))
    settings, dsettings = load_all(config, store, sets, host, port)
    try:
        code = run(settings, dsettings)
    except (NewsdedupError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    sys.exit(code)
