"""Advertisements: a seller's page asking the reader to call, order or come by.

News crawls carry them (ccf2019_inews: about 20 of 3,953 articles), and they come in families:
claw-machine dealers, freight lines between two cities, phone-tracking software. Two sellers'
adverts for one kind of product read alike to every embedding, and their headlines share the
product's words (e5 put two claw-machine dealers' headlines at 0.939), as two fires in one city do.
What tells them apart, the seller and its number, is no event specific. So an advert is the same
story as another text only as a copy of it (exact, SimHash-near, contained), never by meaning.
Read on burst tune seed 647: a 盐城 claw-machine dealer's advert and another dealer's (彩悦动漫科技)
were a semantic match (cosine 0.63, event score 0.574, e5 headlines 0.939) and merged two stories.
It takes one side: a teaser of an advert, cut before its phone lines, no longer reads as one
(burst tune seed 709: the 盐城 advert's teaser against the other dealer's, event score 0.629).

A text is an advert when it uses two or more different soliciting phrases. One alone is news
furniture (a hotline under a notice, 联系电话 in a report of a recall): of the 4,586 ccf2019_inews,
cec_news and ecom2022 texts, the 20 with two or more are adverts but two (a roundup whose footer
carries job ads, a post of exam tips whose footer sells tours).
"""

from __future__ import annotations

import re

SOLICITING = re.compile(
    "来电咨询|欢迎来电|欢迎致电|欢迎咨询|免费咨询|咨询电话|咨询热线|订购热线|服务热线|联系电话|"
    "欢迎来厂|厂家直销|欢迎新老客户|欢迎惠顾|欢迎选购|欢迎订购|欢迎洽谈|价格优惠|量大从优|量大价优|诚招"
)
MIN_SOLICITING_PHRASES = 2


def is_advert(text: str) -> bool:
    """Whether ``text`` solicits customers with ``MIN_SOLICITING_PHRASES`` different phrases."""
    return len(set(SOLICITING.findall(text))) >= MIN_SOLICITING_PHRASES
