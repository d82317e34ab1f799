"""``newsdedup crawl``: crawl the configured sources and push clean articles to an output.

Outputs (``--store`` and ``--push`` exclusive; ``--output`` alone or as an extra copy):

* ``--store DIR_OR_URL``  index in-process into the store (default: the settings' store.path, which
  ``--config`` and ``--set`` shape as for every ``newsdedup`` command)
* ``--push URL``          POST NDJSON batches to the ingest daemon (``http://host:port/v1/articles``)
* ``--output FILE``       append to a ``.jsonl`` or ``.csv`` file (url,title,content,source,publish_time)

The command joins the main CLI by the entry point ``crawl`` of the group ``newsdedup.commands``
(pyproject.toml, ``indexer.plugins``).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import click

from indexer.cli_options import common_options, settings_from_options
from indexer.settings import Settings
from indexer.store import is_remote

from .errors import CrawlError, SinkError, SourceConfigError
from .runner import RunOptions, run_crawl
from .sinks import HttpPushSink, IndexerSink, Sink, TeeSink, file_sink
from .sources import load_sources
from .state import CrawlState
from .stats import CrawlStats, format_table

log = logging.getLogger(__name__)


def _default_state_dir(indexed_store: str | None, output: str | None) -> Path:
    """Next to what the crawl feeds, so one store keeps one crawl history."""
    if indexed_store and not is_remote(indexed_store):
        return Path(indexed_store) / "crawl-state"
    if output:
        return Path(output).parent / "crawl-state"
    return Path("crawl-state")


def _build_sink(settings: Settings | None, push: str | None, token: str | None, output: str | None, push_timeout: float) -> Sink:
    """``settings`` is None unless the crawl indexes in-process."""
    primary: Sink | None = None
    if push:
        primary = HttpPushSink(push, token=token, timeout=push_timeout)
    elif settings is not None:
        from indexer.errors import NewsdedupError

        try:
            primary = IndexerSink(settings)
        except NewsdedupError as exc:
            raise click.UsageError(str(exc)) from exc
    if output:
        copy = file_sink(output)
        return TeeSink(primary, copy) if primary is not None else copy
    assert primary is not None
    return primary


@click.command("crawl")
@click.option("--sources", "sources_file", required=True, type=click.Path(dir_okay=False), help="TOML file declaring the sources.")
@click.option("--source", "only", multiple=True, help="Crawl only this source (repeatable).")
@common_options
@click.option("--push", default=None, help="POST articles as NDJSON to the ingest daemon at this URL instead.")
@click.option("--token", default=None, envvar="NEWSDEDUP_PUSH_TOKEN", help="Bearer token for --push (or $NEWSDEDUP_PUSH_TOKEN).")
@click.option("--output", default=None, help="Also (or only) append articles to FILE.jsonl or FILE.csv.")
@click.option("--state", "state_dir", default=None, help="Directory of the incremental crawl state (default: crawl-state beside the store or the output file).")
@click.option("--no-state", is_flag=True, help="Keep no state: fetch everything, remember nothing.")
@click.option("--batch-size", default=50, show_default=True, type=click.IntRange(1, 10000), help="Articles per delivery.")
@click.option("--push-timeout", default=60.0, show_default=True, type=float, help="Seconds to wait for the daemon.")
@click.option("--stats-json", default=None, type=click.Path(dir_okay=False), help="Write the per-source stats as JSON here.")
@click.option("-q", "--quiet", is_flag=True, help="No per-article progress lines.")
def crawl(sources_file, only, store, config, sets, push, token, output, state_dir, no_state, batch_size, push_timeout, stats_json, quiet):
    """Crawl news sources and push clean articles to the indexer, the daemon or a file."""
    if push and store:
        raise click.UsageError("--store and --push are exclusive: index here or send to the daemon")
    if push and not is_remote(push):
        raise click.UsageError(f"--push must be an http(s) URL, got {push!r}")
    index_here = not push and (store or not output)
    if sets and not index_here:
        # The daemon, or whoever reads the file, decides with its own settings.
        raise click.UsageError("--set applies to indexing here (--store, or no --push and no --output)")
    settings = settings_from_options(config, store, sets) if index_here else None
    try:
        sources = load_sources(sources_file)
        if only:
            sources = sources.select(list(only))
    except SourceConfigError as exc:
        raise click.UsageError(str(exc)) from exc

    def progress(source: str, event: str, detail: str) -> None:
        if event == "source_start":
            click.echo(f"[{source}] crawling {detail}", err=True)
        elif event == "source_done":
            click.echo(f"[{source}] done", err=True)
        elif not quiet and event == "article":
            click.echo(f"[{source}] {detail}", err=True)
        elif not quiet and event == "dropped":
            click.echo(f"[{source}] dropped {detail}", err=True)

    try:
        sink = _build_sink(settings, push, token, output, push_timeout)
    except SinkError as exc:
        raise click.UsageError(str(exc)) from exc
    indexed_store = settings.store.path if settings is not None else None
    state = CrawlState.memory() if no_state else CrawlState(state_dir or _default_state_dir(indexed_store, output))
    failed: CrawlError | None = None
    stats = CrawlStats()
    try:
        run_crawl(sources, sink, state, options=RunOptions(batch_size=batch_size), progress=progress, stats=stats)
    except CrawlError as exc:  # a sink refused a batch: stop, nothing undelivered is marked seen
        failed = exc
    finally:
        sink.close()
        state.close()
    click.echo(format_table((name, stats.for_source(name)) for name in stats.sources()))
    if stats_json:
        Path(stats_json).write_text(json.dumps(stats.as_dict(), ensure_ascii=False, indent=2), encoding="utf-8")
    if failed is not None:
        raise click.ClickException(f"crawl stopped: {failed}")
