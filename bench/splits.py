"""The one tune/test split of every labelled evaluation set.

Thresholds, weights and learned models may be fitted on the *tune* part only; figures quoted
anywhere (README, issues) are *test* figures. The part of an item is a pure function of its
group key (a story, an event, a pair), so:

- a story or event never straddles the parts (all its reposts and articles go together);
- the split does not depend on which other items a set happens to hold, on their order, or on
  the set's size, so every script that calls ``split`` sees exactly the same parts;
- adding data to a set never moves an existing item from one part to the other.

Keys of the sets (use these helpers rather than spelling keys by hand):

- ecom2022 dev: ``ecom_key(event_id)``, one event's articles together;
- sohu2021 short-short pairs: ``sohu_key(source, target)``, the pair's two texts (A and B files
  agree on a pair both hold);
- synthetic reposts (v1 ``datasets.repost_set`` and v2 ``heldout``): the seed article's id,
  ``story_key(article_id)``; the seeds of one set are drawn from one part before any repost is
  made, so tune and test sets share no real article;
- WSDM Cup 2019 fake-news headline pairs: ``wsdm_key(claim)``, every pair of one claim together (a
  claim: the headlines linked by pairs, ``datasets.wsdm_pairs``);
- cec_news hard negatives: ``cec_key(category, place)``, so two reports of one kind of news in
  one place (the hardest negatives) fall in the same part.
"""

from __future__ import annotations

import hashlib
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")

PARTS = ("tune", "test")
# Share of groups in the test part. Half: the test sets must be large enough for their figures to
# mean something (ecom2022 dev holds only 78 events), and tuning needs the other half.
TEST_SHARE = 0.5
# Changing the salt re-draws every split; never do it once figures have been published.
_SALT = b"newsdedup-eval-split-v1\x00"


def part_of(key: str) -> str:
    """``"tune"`` or ``"test"`` for a group key, the same on every machine and Python run."""
    digest = hashlib.sha256(_SALT + key.encode("utf-8")).digest()
    share = int.from_bytes(digest[:8], "big") / 2**64
    return "test" if share < TEST_SHARE else "tune"


def check_part(part: str) -> str:
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, not {part!r}")
    return part


def split(items: Iterable[T], part: str, key: Callable[[T], str]) -> Iterator[T]:
    """The items whose group key falls in ``part``, in their original order."""
    check_part(part)
    return (item for item in items if part_of(key(item)) == part)


def ecom_key(event_id) -> str:
    return f"ecom2022-event:{event_id}"


def sohu_key(source: str, target: str) -> str:
    return f"sohu2021-pair:{source.strip()}\t{target.strip()}"


def wsdm_key(claim_id: str) -> str:
    """WSDM Cup 2019 fake-news pairs: one claim's pairs together."""
    return f"wsdm2019-claim:{claim_id}"


def story_key(article_id: str) -> str:
    return f"story:{article_id}"


def cec_key(category: str, place: str | None, article_id: str) -> str:
    """Reports of one kind of emergency in one place go together; without a place, the article."""
    return f"cec:{category}:{place}" if place else story_key(article_id)
