"""``newsdedup es init|check`` and ``newsdedup kibana import``.

Both groups are registered on the main CLI by the core. Settings come from ``--store``, ``--config``
/ ``$NEWSDEDUP_CONFIG``, ``--set`` and the environment, as for every command. Secrets are never echoed.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import requests
import urllib3

from .errors import NewsdedupError
from .cli_options import common_options, settings_from_options
from .settings import Settings
from .store import is_remote
from .store.es_config import redact_url

log = logging.getLogger(__name__)

KIBANA_DIR = Path(__file__).resolve().parents[1] / "es_mappings" / "kibana"
DATA_VIEW_TYPE = "index-pattern"


def _dims(settings: Settings, dims: int | None) -> int | None:
    """Vector dims of the configured model (``--dims`` avoids loading a large model)."""
    if dims is not None:
        return dims or None
    from .features.embedding import create_embedder

    embedder = create_embedder(settings.embedding.model, settings.embedding.device)
    return embedder.dims if embedder is not None else None


@contextmanager
def _connected(what: str, config: str | None, store: str | None, sets: tuple[str, ...], dims: int | None):
    """``(settings, client, schema, target, server info)``, built as the store builds them
    (``client_from_settings``, ``schema_options``), so ``es init`` makes the index the daemon and
    ``ingest`` expect; a server of a version the store refuses is refused first. Store errors in
    the block become the command's error; the client is closed after it."""
    from .store.es_config import check_version, client_from_settings, translate
    from .features.embedding import model_name
    from .store.es_schema import build_schema, schema_options

    settings = settings_from_options(config, store, sets)
    if not is_remote(settings.store.path):
        raise click.UsageError(f"store.path is {settings.store.path!r}; set it to the Elasticsearch URL (http(s)://...)")
    try:
        import elasticsearch  # noqa: F401 - only to give a clear message when the extra is missing
    except ImportError as exc:
        raise click.ClickException("the Elasticsearch store needs: pip install 'newsdedup[es]'") from exc
    vector_dims = _dims(settings, dims)
    client, cfg, target = client_from_settings(settings)
    try:
        schema = build_schema(cfg, vector_dims=vector_dims, embedding_model=model_name(settings.embedding.model), **schema_options(settings))
        with translate(what, target):
            info = client.info()
            check_version(info, target)
            yield settings, client, schema, target, info
    except NewsdedupError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        client.close()


_dims_opt = click.option("--dims", type=int, default=None,
                         help="vector dimensions (default: from embedding.model; 0 for no vectors)")


@click.group("es")
def es() -> None:
    """Elasticsearch index: create it, check it."""


@es.command("init")
@common_options
@_dims_opt
def es_init(config: str | None, store: str | None, sets: tuple[str, ...], dims: int | None) -> None:
    """Create (or update) the index template, the first index, the write alias and the cluster
    change log index. Idempotent; an existing index made with other dims or model is an error and
    is left untouched."""
    from .store.es_schema import init

    with _connected("es init", config, store, sets, dims) as (_, client, schema, _, _):
        result = init(client, schema)
    state = "created" if result["index_created"] else "already there"
    log_state = "created" if result["changes_created"] else "already there"
    click.echo(f"alias {result['alias']} -> {', '.join(result['indices'])} ({state}); "
               f"change log {result['changes_index']} ({log_state}); templates up to date")


@es.command("check")
@common_options
@_dims_opt
def es_check(config: str | None, store: str | None, sets: tuple[str, ...], dims: int | None) -> None:
    """Connectivity, server version, alias, mapping, vector dims and the change log index; exit
    status 1 on a problem."""
    from .store.es_schema import backing_indices, check_mapping

    with _connected("es check", config, store, sets, dims) as (settings, client, schema, target, info):
        click.echo(f"ok   connected to {target}: Elasticsearch {info['version']['number']}")
        indices = backing_indices(client, schema.alias)
        if not indices:
            raise click.ClickException(f"alias {schema.alias!r} does not exist; run `newsdedup es init`")
        click.echo(f"ok   alias {schema.alias} -> {', '.join(sorted(indices))}")
        if len(indices) > 1:
            click.echo("note several backing indices (rolled over): ids are checked across the alias before writes")
        check_mapping(client, schema)
        click.echo(f"ok   mapping: vector dims {schema.vector_dims or 0}, model {settings.embedding.model}, "
                   f"{settings.simhash.bands} SimHash bands")
        if not client.indices.exists(index=schema.changes_index):
            raise click.ClickException(f"cluster change log index {schema.changes_index!r} does not exist: merges and "
                                       "splits are refused without it; run `newsdedup es init`")
        click.echo(f"ok   cluster change log {schema.changes_index}")
        click.echo(f"ok   {client.count(index=schema.alias)['count']} articles")


# ---- Kibana -------------------------------------------------------------------------------------------
def load_saved_objects(folder: Path, index: str) -> list[dict[str, Any]]:
    """The saved objects of ``folder/*.ndjson``; data views are pointed at the alias ``index``."""
    objects = []
    for path in sorted(folder.glob("*.ndjson")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                obj = json.loads(line)
                if obj.get("type") == DATA_VIEW_TYPE:
                    obj["attributes"]["title"] = index
                objects.append(obj)
    return objects


def _auth_header(cfg) -> dict[str, str]:
    if cfg.api_key:
        key = cfg.api_key
        encoded = base64.b64encode(key.encode()).decode() if ":" in key else key
        return {"Authorization": f"ApiKey {encoded}"}
    if cfg.username:
        token = base64.b64encode(f"{cfg.username}:{cfg.password}".encode()).decode()
        return {"Authorization": f"Basic {token}"}
    return {}


def tls_verify(url: str, cfg) -> bool | str:
    """How an https Kibana is verified: against ``es.ca_certs`` (the system CAs when empty), or not
    at all with ``es.verify_certs = false``, as for Elasticsearch."""
    if cfg.verify_certs:
        return cfg.ca_certs or True
    if url.lower().startswith("https://"):
        log.warning("TLS certificate verification is off for Kibana at %s", redact_url(url))
    return False


def import_saved_objects(kibana_url: str, objects: list[dict[str, Any]], headers: dict[str, str],
                         space: str | None = None, timeout: float = 60.0, verify: bool | str = True) -> dict[str, Any]:
    """``POST /api/saved_objects/_import?overwrite=true`` (the objects as one NDJSON file, with
    ``kbn-xsrf``); Kibana's answer."""
    payload = "\n".join(json.dumps(o, ensure_ascii=False) for o in objects).encode("utf-8") + b"\n"
    prefix = f"/s/{space}" if space else ""
    try:
        with warnings.catch_warnings():  # verification off is said once, by tls_verify
            warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
            resp = requests.post(kibana_url.rstrip("/") + prefix + "/api/saved_objects/_import?overwrite=true",
                                 files={"file": ("newsdedup.ndjson", payload, "application/ndjson")},
                                 headers={"kbn-xsrf": "true", **headers}, timeout=timeout, verify=verify)
    except requests.RequestException as exc:
        raise click.ClickException(f"cannot reach Kibana at {redact_url(kibana_url)}: {exc}") from exc
    if resp.status_code >= 400:
        detail = resp.text[:500]
        if resp.status_code == 401:
            sent = "the credentials sent were refused" if "Authorization" in headers else "no credentials were sent"
            detail = (f"{sent}; set es.username/es.password or es.api_key (NEWSDEDUP_ES_USERNAME, "
                      f"NEWSDEDUP_ES_PASSWORD, NEWSDEDUP_ES_API_KEY): {detail}")
        raise click.ClickException(f"Kibana answered {resp.status_code}: {detail}")
    return resp.json()


@click.group("kibana")
def kibana() -> None:
    """Kibana saved objects: data view, saved search, dashboard."""


@kibana.command("import")
@common_options
@click.option("--kibana-url", default=lambda: os.environ.get("NEWSDEDUP_KIBANA_URL", "http://localhost:5601"),
              show_default="$NEWSDEDUP_KIBANA_URL or http://localhost:5601")
@click.option("--space", default=None, help="Kibana space id (default space when omitted)")
@click.option("--dir", "folder", type=click.Path(file_okay=False, exists=True, path_type=Path), default=KIBANA_DIR,
              show_default=True, help="folder of *.ndjson saved objects")
def kibana_import(config: str | None, store: str | None, sets: tuple[str, ...], kibana_url: str,
                  space: str | None, folder: Path) -> None:
    """Import the newsdedup data view, saved search and dashboard (overwriting older copies).
    Authenticates with the es.api_key or es.username/es.password settings; an https Kibana is
    verified with es.ca_certs and es.verify_certs."""
    from .store.es_config import es_config

    cfg = es_config(settings_from_options(config, store, sets))
    objects = load_saved_objects(folder, cfg.index)
    result = import_saved_objects(kibana_url, objects, _auth_header(cfg), space, verify=tls_verify(kibana_url, cfg))
    if not result.get("success"):
        errors = "; ".join(f"{e.get('type')}/{e.get('id')}: {e.get('error', {}).get('type')}" for e in result.get("errors", []))
        raise click.ClickException(f"Kibana imported {result.get('successCount', 0)} of {len(objects)} objects: {errors}")
    click.echo(f"imported {result.get('successCount', len(objects))} saved objects into {redact_url(kibana_url)}; "
               "open Dashboards > 'newsdedup: duplicates overview'")
