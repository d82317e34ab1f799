"""Template, mapping, alias and dims: what ``es init`` creates and what opening an index checks."""

from __future__ import annotations

import pytest

from indexer.errors import StoreError, StoreSchemaError
from indexer.store.es_schema import init

from ..store.test_contract import art

pytestmark = pytest.mark.es


def test_mapping_has_explicit_float_hnsw_cosine_and_cjk(es_store):
    store = es_store(dims=8)
    [(index, body)] = store.client.indices.get_mapping(index=store.alias).items()
    assert index == f"{store.alias}-000001"
    props = body["mappings"]["properties"]
    vector = props["vector"]
    assert (vector["type"], int(vector["dims"]), vector["similarity"]) == ("dense_vector", 8, "cosine")
    assert vector["index_options"]["type"] == "hnsw"  # never the int8/BBQ default
    for name in ("title", "clean_title", "clean_body"):
        assert props[name]["analyzer"] == "cjk"
    for name in ("title_md5", "body_md5", "content_key", "bands", "cluster_id", "dup_reason", "source"):
        assert props[name]["type"] == "keyword"
    assert props["simhash"]["type"] == "long" and props["publish_time"]["type"] == "date"
    assert body["mappings"]["_meta"]["vector_dims"] == "8"
    aliases = store.client.indices.get_alias(name=store.alias)
    assert aliases[index]["aliases"][store.alias]["is_write_index"] is True


def test_chinese_full_text_search_uses_cjk_bigrams(es_store):
    store = es_store(write_refresh="true", inflight_max=0)
    a = art("zh")
    a.clean_body = "北京天安门广场今日举行升旗仪式"
    store.write([a, art("other")])
    hits = store.client.search(index=store.alias, query={"match_phrase": {"clean_body": "天安门"}})["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["zh"]


def test_other_dims_or_model_are_refused_and_the_index_is_kept(es_store, server):
    store = es_store(dims=8)
    store.write([art("keep")])
    store.refresh()
    with pytest.raises(StoreSchemaError, match="vector_dims"):
        es_store(dims=16, index=store.alias)
    with pytest.raises(StoreSchemaError, match="embedding_model"):
        es_store(dims=8, model="another-model", index=store.alias)
    # nothing was re-created: same index, same dims, the article still there
    mapping = store.client.indices.get_mapping(index=store.alias)
    assert int(mapping[f"{store.alias}-000001"]["mappings"]["properties"]["vector"]["dims"]) == 8
    assert store.stats().articles == 1


def test_no_model_means_no_vector_field(es_store):
    store = es_store(dims=None)
    props = next(iter(store.client.indices.get_mapping(index=store.alias).values()))["mappings"]["properties"]
    assert "vector" not in props
    assert store.knn([]) == []


def test_init_is_idempotent(es_store):
    store = es_store()
    store.write([art("a1")])
    again = init(store.client, store.schema)
    assert again["index_created"] is False and again["indices"] == [f"{store.alias}-000001"]
    assert store.get_many(["a1"]).keys() == {"a1"}


def test_missing_alias_without_auto_create_is_a_clear_error(server, es_store):
    with pytest.raises(StoreError, match="es init"):
        es_store(auto_create=False)


def test_drop_deletes_the_change_log_index_too(es_store, server):
    """``drop`` (the tests' cleanup and ``es`` tooling) leaves nothing of the store on the cluster:
    backing indices, templates and ``<index>_changes``."""
    from indexer.store.es_changes import changes_index

    from .server import drop_store

    store = es_store()
    log_index = changes_index(store.alias)
    assert store.client.indices.exists(index=log_index)  # made when the store opened (auto_create)
    drop_store(store)
    client = store.client
    assert not client.indices.exists(index=log_index)
    assert not client.indices.exists(index=f"{store.alias}-000001")
    assert not client.indices.exists_alias(name=store.alias)
    assert not client.indices.exists_index_template(name=store.schema.template_name)
    drop_store(store)  # dropping what is gone is no error
