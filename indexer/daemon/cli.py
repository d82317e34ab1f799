"""``newsdedup serve``: run the ingest daemon (HTTP API, durable queue, worker, crawl schedule)."""

from __future__ import annotations

import logging
import sys

import click

from ..cli_options import common_options, settings_from_options
from ..errors import NewsdedupError
from ..settings import DaemonSettings, Settings

log = logging.getLogger(__name__)


def load_all(config: str | None, store: str | None, sets: tuple[str, ...], host: str | None = None,
             port: int | None = None) -> tuple[Settings, DaemonSettings]:
    """Settings plus the daemon section; ``--host``/``--port`` are ``daemon.host``/``daemon.port``."""
    flags = tuple(f"daemon.{k}={v}" for k, v in (("host", host), ("port", port)) if v is not None)
    settings = settings_from_options(config, store, tuple(sets) + flags)
    return settings, settings.daemon


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
