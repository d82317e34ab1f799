"""``newsdedup serve``: run the ingest daemon (HTTP API, durable queue, worker, crawl schedule);
``newsdedup dead-letters``: look at and re-queue the articles it could not index."""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
from datetime import datetime, timezone

import click

from ..cli_options import common_options, existing_store, settings_from_options
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
    """Run the ingest daemon: POST /v1/articles, GET /v1/articles/{id}, /v1/clusters, corrections
    (/v1/clusters/{id}/split, /v1/clusters/merge, /v1/labels), /healthz, /readyz, /metrics, the
    OpenAPI spec at /openapi.json and the browser view at /ui/clusters. The queue lives with the
    store. SIGTERM drains the queue and exits 0."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger().setLevel(getattr(logging, log_level.upper()))
    settings, dsettings = load_all(config, store, sets, host, port)
    daemon = _start_up(settings, dsettings)
    try:
        code = daemon.run()
    except (NewsdedupError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    sys.exit(code)


def _start_up(settings: Settings, dsettings: DaemonSettings):
    """The daemon, built (queue, worker, crawl schedule, bound port); what stops it from starting
    as a message naming the setting or file, not a traceback."""
    from .queue import QUEUE_FILE
    from .queue_home import queue_dir_for
    from .service import Daemon

    try:
        return Daemon(settings, dsettings)
    except (NewsdedupError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    except sqlite3.DatabaseError as exc:  # the store's own errors come as StoreError: this is the queue's
        raise click.ClickException(f"cannot read the daemon queue {queue_dir_for(settings) / QUEUE_FILE}: {exc} "
                                   "(move it aside to start with an empty queue)") from None
    except ValueError as exc:
        if not dsettings.crawl_sources:
            raise
        # The crawl schedule's sources file is invalid (crawlers' SourceConfigError, a ValueError:
        # indexer never imports crawlers, so it is caught by that contract).
        raise click.ClickException(f"setting 'daemon.crawl_sources': {exc}") from None


def _open_queue(config: str | None, store: str | None, sets: tuple[str, ...]):
    from .queue import QUEUE_FILE, DurableQueue
    from .queue_home import queue_dir_for

    settings, dsettings = load_all(config, store, sets)
    directory = queue_dir_for(settings)
    if not (directory / QUEUE_FILE).is_file():
        raise click.ClickException(f"no daemon queue in {directory} (give --store, or daemon.queue_dir, as for `serve`)")
    return DurableQueue(directory, dsettings.queue_max)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat()


@click.group("dead-letters")
def dead_letters() -> None:
    """Articles the daemon accepted but could not index: they wait in its queue's dead-letter
    table (with the store, or daemon.queue_dir) until re-queued."""


@dead_letters.command("list")
@common_options
@click.option("--records/--no-records", default=False, help="Also print each record as it was queued.")
def list_dead_letters(store: str | None, config: str | None, sets: tuple[str, ...], records: bool) -> None:
    """One JSON line per dead letter, oldest failure first: id, origin, when, and the error."""
    queue = _open_queue(config, store, sets)
    try:
        for dead in queue.dead_letters():
            line = {"id": dead.article_id, "origin": dead.origin, "enqueued_at": _iso(dead.enqueued_at),
                    "failed_at": _iso(dead.failed_at), "error": dead.error}
            if records:
                line["record"] = dead.record
            click.echo(json.dumps(line, ensure_ascii=False))
    finally:
        queue.close()


@dead_letters.command("requeue")
@common_options
@click.option("--id", "ids", multiple=True, metavar="ARTICLE_ID", help="Re-queue this article (repeatable).")
@click.option("--all", "everything", is_flag=True, help="Re-queue every dead letter.")
def requeue_dead_letters(store: str | None, config: str | None, sets: tuple[str, ...], ids: tuple[str, ...], everything: bool) -> None:
    """Move dead letters back into the queue, after fixing what made them fail. A running daemon
    picks them up; one that is stopped does on its next start. Those that fail again return."""
    from .queue import QueueFull

    if bool(ids) == everything:
        raise click.UsageError("give --id ARTICLE_ID (one or more) or --all")
    queue = _open_queue(config, store, sets)
    try:
        known = {d.article_id for d in queue.dead_letters()}
        missing = [i for i in ids if i not in known]
        if missing:
            raise click.ClickException(f"not in the dead-letter table: {', '.join(missing)}")
        moved = queue.requeue(None if everything else ids)
    except QueueFull as exc:
        raise click.ClickException(f"nothing re-queued: {exc}") from None
    finally:
        queue.close()
    click.echo(f"re-queued {moved} articles")


@click.command("ui")
@common_options
@click.option("--host", default=None, help="Bind address (daemon.host; default 127.0.0.1).")
@click.option("--port", default=None, type=click.IntRange(0, 65535), help="Port (daemon.port; default 8080).")
def ui(store: str | None, config: str | None, sets: tuple[str, ...], host: str | None, port: int | None) -> None:
    """The browser view of a store, without the ingest parts: clusters, one cluster, one article,
    the overview, and corrections (split, merge). With daemon.auth_token set the browser logs in
    with it once. Ctrl-C stops it."""
    import signal
    import threading

    from ..pipeline import Indexer
    from .api import ServiceContext
    from .http_server import HttpServer
    from .lease import WriterLease
    from .metrics import DaemonMetrics

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    settings, dsettings = load_all(config, store, sets, host, port)
    existing_store(settings)
    try:
        # Corrections take the store's writer lease, one at a time: not while a daemon or an
        # ingest writes into the store (their decisions read clusters the correction changes).
        writer = WriterLease(settings)
        indexer = Indexer.open(settings)
    except (NewsdedupError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    metrics = DaemonMetrics(lambda: 0.0, lambda: 1.0, lambda: 0.0)
    stop = threading.Event()
    try:
        server = HttpServer(ServiceContext(settings, dsettings, metrics, lambda: indexer, writer=writer))
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        server.start()
        h, p = server.address
        click.echo(f"newsdedup ui: http://{h}:{p}/ui/clusters", err=True)
        while not stop.wait(0.5) and server.alive():
            pass
        server.stop()
        if not stop.is_set():  # its thread died: no request reaches it, so fail as `serve` does
            raise click.ClickException("the HTTP server stopped unexpectedly")
    except OSError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        indexer.close()


@click.group("labels")
def labels() -> None:
    """The corrections people made in the browser view or through the API, as labelled pairs."""


@labels.command("export")
@common_options
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default="-", show_default=True,
              help="Pairs file to write (JSON lines); - is standard output.")
def export_labels(store: str | None, config: str | None, sets: tuple[str, ...], output: str) -> None:
    """Write each correction as {"a": article, "b": article, "label": 1 same story / 0 different,
    "kind", "by", "at"}: the pairs file `newsdedup tune` reads. The newest verdict on a pair wins."""
    from ..pipeline import Indexer
    from ..labels import labels_from_changes

    settings, _ = load_all(config, store, sets)
    existing_store(settings)
    try:
        indexer = Indexer.open(settings)
    except (NewsdedupError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    try:
        latest: dict[frozenset, dict] = {}
        for lab in labels_from_changes(indexer.store.cluster_changes()):
            key = frozenset((lab["a"], lab["b"]))
            latest.pop(key, None)
            latest[key] = lab
        found = indexer.store.get_many(sorted({x for lab in latest.values() for x in (lab["a"], lab["b"])}))
        written = 0
        with click.open_file(output, "w", encoding="utf-8") as out:
            for lab in latest.values():
                a, b = found.get(lab["a"]), found.get(lab["b"])
                if a is None or b is None:
                    log.warning("label %s/%s skipped: an article is no longer in the store", lab["a"], lab["b"])
                    continue
                out.write(json.dumps({"a": _pair_side(a), "b": _pair_side(b), "label": lab["label"], "kind": lab["kind"],
                                      "by": lab["by"], "at": lab["at"]}, ensure_ascii=False) + "\n")
                written += 1
    finally:
        indexer.close()
    click.echo(f"{written} labelled pairs", err=True)


def _pair_side(a) -> dict:
    return {"id": a.id, "title": a.title, "content": a.content, "url": a.url, "source": a.source,
            "publish_time": a.publish_time.isoformat() if a.publish_time else None}
