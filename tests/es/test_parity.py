"""The Elasticsearch store makes the same decisions as the embedded store on the same input."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from indexer.features import Featurizer
from indexer.features.simhash import FINGERPRINT_LAYOUT
from indexer.pipeline import Decision, Indexer
from indexer.settings import Settings
from indexer.store.sqlite import SqliteStore

from .server import make_store

pytestmark = pytest.mark.es

STORIES = [
    "国家统计局今天发布数据显示，今年前三季度国内生产总值同比增长百分之五点二，其中第三季度增长百分之四点九。"
    "消费对经济增长的贡献率持续提升，服务业保持较快增长，高技术制造业投资增长明显，就业形势总体稳定。"
    "专家表示，下一阶段应继续扩大内需，稳定市场预期，推动经济持续回升向好。",
    "受强冷空气影响，北方多地出现大风降温天气，部分地区气温下降超过十摄氏度。气象部门提醒公众注意防寒保暖，"
    "农业生产单位要做好设施农业防风加固工作，交通运输部门需防范道路结冰对出行的不利影响。"
    "预计本轮冷空气过程将持续到周末，随后气温逐步回升。",
    "我国自主研发的新型大飞机今日完成首次商业载客飞行，航班从上海虹桥机场起飞，平稳降落在北京首都国际机场。"
    "这标志着该机型正式进入民航运输市场，航空公司计划在明年逐步增加航线和运力，覆盖更多国内主要城市。",
    "某市教育局发布通知，今年秋季学期起全市中小学将全面推行课后延时服务，每天放学后提供两小时的托管和兴趣课程。"
    "家长可根据需要自愿申请，学校将统筹安排教师和社会资源，确保服务质量和学生安全。",
]


class HashEmbedder:
    """Deterministic character-bigram embedding: similar texts get similar vectors."""

    name = "hash-bigram-64"
    dims = 64

    def encode(self, texts):
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for a, b in zip(text, text[1:]):
                out[row, zlib.crc32((a + b).encode()) % self.dims] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


def fixture_records() -> list[dict]:
    s0, s1, s2, s3 = STORIES
    rec = lambda i, t, body, when="2024-03-0{}T08:00:00+08:00", src="新华网", day=1: {  # noqa: E731
        "id": i, "title": t, "content": body, "source": src, "url": f"https://news.example/{i}",
        "publish_time": when.format(day) if when else None}
    return [
        rec("econ", "前三季度经济数据发布", f"<p>{s0}</p>"),
        rec("econ-copy", "前三季度经济数据发布", f"<div>{s0}</div>", src="人民网", day=2),  # exact after cleaning
        rec("cold", "强冷空气来袭", s1),
        rec("econ-edit", "前三季度经济数据发布", s0.replace("专家表示", "有专家表示"), src="澎湃", day=3),  # near
        rec("plane", "国产大飞机首次商业飞行", s2, day=4),
        rec("cold-trim", "北方大风降温", s1[: len(s1) - 20], src="央视网", day=2),
        rec("school", "中小学推行课后服务", s3, when=None),
        rec("plane-late", "国产大飞机首次商业飞行", s2, day=9, src="环球网"),  # exact: joins regardless of window
        rec("school-copy", "中小学推行课后服务", s3 + "（完）", src="地方台", when=None),
        rec("econ", "前三季度经济数据发布", s0),  # repeated id
        rec("cold-2", "强冷空气来袭 多地降温", s1.replace("周末", "下周一"), src="中新网", day=5),
    ]


def _run(store, settings, embedder):
    ix = Indexer(settings, store, Featurizer(settings, embedder))
    outcomes = ix.index_many(fixture_records())
    clusters = {cid: sorted(a.id for a in store.cluster_members(cid)) for cid, _ in store.top_clusters(50)}
    return [(o.article_id, o.decision, o.cluster_id, o.dup_of, o.reason, round(o.score or 0, 4)) for o in outcomes], clusters


@pytest.mark.parametrize("embedder", [None, HashEmbedder()], ids=["no-embedding", "hash-embedding"])
def test_same_outcomes_and_clusters_as_the_embedded_store(embedder, tmp_path, server):
    settings = Settings().replace(**{"input.batch_size": 3})
    dims, model = (embedder.dims, embedder.name) if embedder else (None, "none")
    sqlite = SqliteStore(tmp_path / "sqlite", vector_dims=dims, embedding_model=model,
                         fingerprint_layout=FINGERPRINT_LAYOUT, bands=settings.simhash.bands)
    expected, expected_clusters = _run(sqlite, settings, embedder)
    sqlite.close()
    reasons = {o[4] for o in expected if o[1] is Decision.DUPLICATE}
    assert {"exact", "near"} <= reasons, expected  # the fixture exercises the store's lookups
    assert any(o[1] is Decision.ALREADY_INDEXED for o in expected)
    from .server import drop_store

    for extra in ({}, {"inflight_max": 0, "write_refresh": "true"}, {"refresh_interval": "-1"}):
        store = make_store(server, dims=dims, model=model, **extra)
        try:
            got, clusters = _run(store, settings, embedder)
            assert got == expected, extra
            assert clusters == expected_clusters, extra
        finally:
            drop_store(store)
            store.close()
