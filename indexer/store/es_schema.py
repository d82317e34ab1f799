"""Index template, write alias and schema checks for the Elasticsearch store.

The template lives in JSON files (``es_mappings/``) so operators can read and diff it; strings equal
to ``{{name}}`` are filled in here with typed values (dims, shards, ...).

Layout: component templates ``<index>-settings`` and ``<index>-mappings``, an index template
``<index>`` matching ``<index>-0*``, the first backing index ``<index>-000001`` behind the
write alias ``<index>``, and the cluster change log ``<index>_changes`` (its own concrete index and
mapping, outside the template: see ``es_changes``). There is no rollover by default: ``_id`` (the article id) is unique only
within one backing index, so after a manual rollover the store checks ids across the alias before
writing (see ``ElasticsearchStore.write``).

The vector field is ``dense_vector`` with cosine similarity and ``index_options.type = hnsw``
given explicitly: since 8.14 a new index defaults to ``int8_hnsw`` (and 9.x to BBQ for large dims),
whose quantised scores shift cosines by up to a few hundredths, which would move the semantic
threshold the decision rules were tuned on. Float HNSW keeps the cosine the embedded store sees.
Vectors stay in ``_source`` so a stored article round-trips with its embedding (re-deriving it would
need the model at read time).

Dimensions, embedding model, fingerprint layout and band count are recorded in the mapping's
``_meta``; opening an index made with other values raises ``StoreSchemaError`` and never re-creates.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, StoreError, StoreSchemaError
from ..features.simhash import FINGERPRINT_LAYOUT
from .es_changes import changes_index, create_log_index

log = logging.getLogger(__name__)

SCHEMA_VERSION = "1"
DEFAULT_MAPPINGS_DIR = Path(__file__).resolve().parents[2] / "es_mappings"
COMPONENT_FILES = {"settings": "component_settings.json", "mappings": "component_mappings.json"}
INDEX_TEMPLATE_FILE = "index_template.json"
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class Schema:
    """Everything ``init`` puts on the cluster, rendered for one configuration."""

    alias: str
    components: dict[str, dict]  # component template name -> body
    index_template: dict
    meta: dict[str, str]  # expected mapping _meta
    vector_dims: int | None
    replicas: int = 1  # es.replicas: the change log index follows the article indices' replica rule

    @property
    def first_index(self) -> str:
        return f"{self.alias}-000001"

    @property
    def template_name(self) -> str:
        return self.alias

    @property
    def changes_index(self) -> str:
        return changes_index(self.alias)


def mappings_dir(cfg: Any) -> Path:
    return Path(cfg.mappings_dir) if getattr(cfg, "mappings_dir", "") else DEFAULT_MAPPINGS_DIR


def _render(node: Any, values: dict[str, Any]) -> Any:
    """Fill ``{{name}}`` placeholders; a string that is exactly one placeholder takes the typed value."""
    if isinstance(node, dict):
        return {k: _render(v, values) for k, v in node.items() if k != "_comment"}
    if isinstance(node, list):
        return [_render(v, values) for v in node]
    if isinstance(node, str):
        whole = _PLACEHOLDER.fullmatch(node)
        if whole:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), node)
    return node


def _load(folder: Path, name: str) -> dict:
    path = folder / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError("es.mappings_dir", f"missing template file {path}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError("es.mappings_dir", f"{path} is not valid JSON: {exc}") from None


def schema_options(settings: Any) -> dict[str, Any]:
    """The arguments of ``build_schema`` that come from the settings other than ``[es]``: the store and
    ``newsdedup es init`` take them from here, so both make the same index."""
    return {"fingerprint_layout": FINGERPRINT_LAYOUT, "bands": settings.simhash.bands,
            "hnsw_m": settings.store.ann_m, "hnsw_ef_construction": settings.store.ann_ef_construction}


def build_schema(cfg: Any, *, vector_dims: int | None, embedding_model: str, fingerprint_layout: str, bands: int,
                 hnsw_m: int = 16, hnsw_ef_construction: int = 100) -> Schema:
    """Read the JSON templates and render them for this configuration."""
    folder = mappings_dir(cfg)
    meta = {"newsdedup_schema_version": SCHEMA_VERSION, "vector_dims": str(vector_dims or 0),
            "embedding_model": embedding_model, "fingerprint_layout": fingerprint_layout, "simhash_bands": str(bands)}
    values = {
        "index": cfg.index, "shards": cfg.shards, "replicas": cfg.replicas, "refresh_interval": cfg.refresh_interval,
        "hnsw_m": hnsw_m, "hnsw_ef_construction": hnsw_ef_construction, "vector_dims": vector_dims or 0,
        "schema_version": SCHEMA_VERSION, "embedding_model": embedding_model,
        "fingerprint_layout": fingerprint_layout, "simhash_bands": str(bands),
    }
    components = {f"{cfg.index}-{kind}": _render(_load(folder, file), values) for kind, file in COMPONENT_FILES.items()}
    mapping = components[f"{cfg.index}-mappings"]["template"]["mappings"]
    mapping["_meta"] = dict(meta)  # always strings, whatever the file says
    if not vector_dims:
        mapping["properties"].pop("vector", None)  # no model: strict mapping refuses any vector
    template = _render(_load(folder, INDEX_TEMPLATE_FILE), values)
    return Schema(cfg.index, components, template, meta, vector_dims, cfg.replicas)


def backing_indices(client, alias: str) -> dict[str, bool]:
    """Backing index -> is it the write index; empty when the alias does not exist."""
    if not client.indices.exists_alias(name=alias):
        if client.indices.exists(index=alias):
            raise StoreError(f"{alias!r} is a concrete index, not the alias newsdedup manages; use another es.index")
        return {}
    found = client.indices.get_alias(name=alias)
    return {index: bool(body["aliases"][alias].get("is_write_index", len(found) == 1)) for index, body in found.items()}


def check_mapping(client, schema: Schema) -> list[str]:
    """Compare every backing index's ``_meta`` and vector mapping with ``schema``; the index names."""
    mappings = client.indices.get_mapping(index=schema.alias)
    for index, body in mappings.items():
        mapping = body.get("mappings", {})
        stored = mapping.get("_meta", {})
        for key, want in schema.meta.items():
            if str(stored.get(key)) != want:
                raise StoreSchemaError(
                    f"Elasticsearch index {index} was made with {key}={stored.get(key)!r} but the settings give "
                    f"{want!r}; use another es.index or the settings it was made with (nothing was changed)"
                )
        vector = mapping.get("properties", {}).get("vector")
        have = int(vector.get("dims", 0)) if vector else 0
        if have != (schema.vector_dims or 0):
            raise StoreSchemaError(
                f"Elasticsearch index {index} maps vector with {have} dims; the embedding model gives "
                f"{schema.vector_dims or 0}; use another es.index (nothing was changed)"
            )
        if vector and vector.get("index_options", {}).get("type") != "hnsw":
            log.warning("index %s uses vector index_options %s, not float hnsw: cosines are quantised",
                        index, vector.get("index_options"))
    return list(mappings)


def init(client, schema: Schema) -> dict[str, Any]:
    """Templates, first index and alias, and the change log index; idempotent. An existing index
    with another schema is an error before anything is written. Returns what was created."""
    from elasticsearch import BadRequestError

    existing = backing_indices(client, schema.alias)
    if existing:
        check_mapping(client, schema)
    for name, body in schema.components.items():
        client.cluster.put_component_template(name=name, **body)
    client.indices.put_index_template(name=schema.template_name, **schema.index_template)
    created = False
    if not existing:
        try:
            client.indices.create(index=schema.first_index, aliases={schema.alias: {"is_write_index": True}})
            created = True
            log.info("created index %s behind alias %s", schema.first_index, schema.alias)
        except BadRequestError as exc:
            if exc.error != "resource_already_exists_exception":
                raise
        check_mapping(client, schema)  # a concurrent init may have won with other settings
    changes_created = create_log_index(client, schema.changes_index, replicas=schema.replicas)
    return {"alias": schema.alias, "index_created": created, "indices": sorted(existing) or [schema.first_index],
            "changes_index": schema.changes_index, "changes_created": changes_created}


def drop(client, schema: Schema) -> None:
    """Delete the backing indices, the change log index and the templates (tests and ``es`` tooling only)."""
    for index in backing_indices(client, schema.alias):
        client.indices.delete(index=index, ignore_unavailable=True)
    client.indices.delete(index=schema.changes_index, ignore_unavailable=True)
    if client.indices.exists_index_template(name=schema.template_name):
        client.indices.delete_index_template(name=schema.template_name)
    for name in schema.components:
        if client.cluster.exists_component_template(name=name):
            client.cluster.delete_component_template(name=name)
