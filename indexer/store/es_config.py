"""Elasticsearch connection settings, client construction and error translation.

The settings live in the ``[es]`` section of ``indexer.settings.Settings`` (``NEWSDEDUP_ES_*``
environment variables fill it like any other section, so secrets never need a command line).

Supported servers: Elasticsearch 8.12 - 8.19 (the official client's major must match the server's:
we pin ``elasticsearch>=8.15,<9``). 9.x servers answer 8.x clients in compatibility mode; that is
allowed with a warning but untested. Older servers lack the kNN ``similarity`` and ``filter``
options this store relies on and are refused.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Any, Iterator, Mapping
from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigError, StoreError, StoreUnavailable
from .es_bulk import is_retryable

log = logging.getLogger(__name__)

MIN_SERVER = (8, 12)
SUPPORTED_MAJOR = 8


def es_config(settings: Any) -> Any:
    """The ``[es]`` section of ``settings``, with the checks the settings loader cannot make
    (ranges and choices it already checked)."""
    cfg = settings.es
    if not cfg.index or cfg.index != cfg.index.lower() or any(c in cfg.index for c in ' "*\\<|,>/?#:'):
        raise ConfigError("es.index", f"not a valid Elasticsearch index name: {cfg.index!r}")
    return cfg


def redact_url(url: str) -> str:
    """``url`` without user info, for messages and logs."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def describe_target(hosts: list[str], cfg: Any) -> str:
    return f"cloud id {cfg.cloud_id.split(':', 1)[0]}" if cfg.cloud_id else ", ".join(redact_url(h) for h in hosts)


def make_client(hosts: list[str], cfg: Any):
    """An ``Elasticsearch`` client with auth, TLS and transport retries from ``cfg``.

    Transport retries (connection errors, timeouts, 429/502/503/504; re-sent at once, to the next
    node when there are several) are the one retry layer of single requests: reads, searches, the
    schema, the writer lease. Bulk writes (new articles, cluster changes) have their own rounds
    with jittered backoff (``es_bulk.bulk_rounds``), which turn the transport's retries off for
    their requests, so no failure is retried by two layers."""
    from elasticsearch import Elasticsearch

    kwargs: dict[str, Any] = {
        "request_timeout": cfg.request_timeout,
        "max_retries": cfg.max_retries,
        "retry_on_timeout": True,
        "retry_on_status": (429, 502, 503, 504),
    }
    if cfg.cloud_id:
        kwargs["cloud_id"] = cfg.cloud_id
    else:
        kwargs["hosts"] = hosts
    if cfg.api_key:
        key = cfg.api_key
        kwargs["api_key"] = tuple(key.split(":", 1)) if ":" in key else key  # base64 never holds ":"
    elif cfg.username:
        kwargs["basic_auth"] = (cfg.username, cfg.password)
    if cfg.ca_certs:
        kwargs["ca_certs"] = cfg.ca_certs
    if any(h.startswith("https://") for h in hosts) or cfg.cloud_id:
        kwargs["verify_certs"] = cfg.verify_certs
        if not cfg.verify_certs:
            log.warning("TLS certificate verification is off for %s", describe_target(hosts, cfg))
    try:
        return Elasticsearch(**kwargs)
    except (ValueError, TypeError) as exc:
        raise ConfigError("store.path", f"cannot configure the Elasticsearch client: {exc}") from exc


def client_from_settings(settings: Any) -> tuple[Any, Any, str]:
    """``(client, es settings, target)`` for ``store.path``: the validated ``[es]`` section, a client
    built from it, and the target as messages name it (no credentials). The store and the ``es``
    commands both connect through here."""
    cfg = es_config(settings)
    hosts = [h.strip() for h in settings.store.path.split(",") if h.strip()]  # store.path may list several nodes
    return make_client(hosts, cfg), cfg, describe_target(hosts, cfg)


@contextmanager
def translate(what: str, target: str) -> Iterator[None]:
    """Turn elasticsearch/elastic_transport exceptions into newsdedup's, naming the operation.
    Messages come from the server or the transport and never contain our credentials."""
    import elastic_transport
    from elasticsearch import (
        ApiError,
        AuthenticationException,
        AuthorizationException,
        NotFoundError,
        UnsupportedProductError,
    )

    try:
        yield
    except AuthenticationException as exc:
        raise StoreError(
            f"{what}: Elasticsearch at {target} refused the credentials (401); check es.api_key or "
            "es.username/es.password"
        ) from exc
    except AuthorizationException as exc:
        raise StoreError(f"{what}: the Elasticsearch user lacks a privilege (403): {exc.message}") from exc
    except NotFoundError as exc:
        raise StoreError(
            f"{what}: not found at {target} ({exc.message}); run `newsdedup es init` to create the index"
        ) from exc
    except UnsupportedProductError as exc:
        raise StoreError(f"{what}: {target} is not an Elasticsearch server: {exc}") from exc
    except ApiError as exc:
        if is_retryable(exc.status_code):
            raise StoreUnavailable(f"{what}: Elasticsearch at {target} is overloaded or failing ({exc.status_code}: {exc.message})") from exc
        raise StoreError(f"{what}: Elasticsearch rejected the request ({exc.status_code}: {exc.message})") from exc
    except elastic_transport.TransportError as exc:
        raise StoreUnavailable(f"{what}: cannot reach Elasticsearch at {target}: {type(exc).__name__}: {exc.message}") from exc


def check_version(info: Mapping[str, Any], target: str) -> tuple[int, int]:
    """Refuse servers this store cannot work with; warn on untested majors."""
    number = str(info.get("version", {}).get("number", "0.0"))
    try:
        major, minor = (int(x) for x in number.split(".")[:2])
    except ValueError:
        raise StoreError(f"Elasticsearch at {target} reports an unreadable version {number!r}") from None
    if (major, minor) < MIN_SERVER:
        raise StoreError(
            f"Elasticsearch at {target} is {number}; newsdedup needs {MIN_SERVER[0]}.{MIN_SERVER[1]} or later "
            "(kNN with filter and similarity)"
        )
    if major > SUPPORTED_MAJOR:
        log.warning("Elasticsearch at %s is %s; tested with %d.x only (compatibility mode)", target, number, SUPPORTED_MAJOR)
    return major, minor
