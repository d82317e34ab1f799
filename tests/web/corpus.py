"""The browser view's fixture: Chinese stories over three days from several sources, exact
copies that cluster, and hostile markup in titles, bodies and URLs (crawled text is untrusted)."""

from __future__ import annotations

HOSTILE_TITLE = "<script>alert('title')</script>台风“海燕”登陆东南沿海<img src=x onerror=alert(2)>"
HOSTILE_BODY = ("<script>document.title='pwned'</script>台风“海燕”今日凌晨在东南沿海登陆，最大风力达到十四级，"
                "当地已转移群众三万余人。<img src=x onerror=\"alert('body')\"> 气象部门提醒居民注意防范强降雨。")
HOSTILE_URL = "javascript:alert('url')"

SOURCES = ("新华网", "人民网", "澎湃新闻", "财经观察网")


def story(n: int, day: int) -> dict:
    return {
        "id": f"s{n:02d}",
        "title": f"第{n}届城市{n}科技博览会开幕 {n * 7 % 97}国企业参展",
        "content": f"本报讯 第{n}届城市{n}科技博览会于今日开幕，来自{n * 7 % 97}个国家的企业参展，展会重点展示人工智能、"
                   f"新能源与生物医药成果。主办方表示本届展会规模为历届之最，编号{n}，展期{n % 5 + 3}天。",
        "url": f"https://news{n % 3}.example.cn/2024/03/{10 + day}/s{n:02d}.html",
        "source": SOURCES[n % 4],
        "publish_time": f"2024-03-{10 + day:02d}T{8 + n % 10:02d}:00:00+08:00",
    }


def copy_of(original: dict, suffix: str, source: str, hours_later: int) -> dict:
    day, hour = original["publish_time"][8:10], int(original["publish_time"][11:13]) + hours_later
    return {**original, "id": f"{original['id']}-{suffix}", "source": source,
            "url": f"https://repost.example.com/{original['id']}-{suffix}.html",
            "publish_time": f"2024-03-{day}T{min(hour, 23):02d}:30:00+08:00"}


def corpus() -> list[dict]:
    """32 stories on 3 days; s01 copied twice, s02 and s03 once each, s05 nearly; the hostile story copied once."""
    stories = [story(n, n % 3) for n in range(1, 33)]
    out = list(stories)
    out.append(copy_of(stories[0], "a", "人民网", 2))
    out.append(copy_of(stories[0], "b", "澎湃新闻", 5))
    out.append(copy_of(stories[1], "a", "新华网", 1))
    out.append(copy_of(stories[2], "a", "财经观察网", 3))
    s05 = stories[4]  # a near copy: a wire credit and a by-line added
    out.append({**s05, "id": "s05-n", "source": "新华网", "url": "https://repost.example.com/s05-n.html",
                "content": "新华社电 " + s05["content"] + "记者 张明",
                "publish_time": "2024-03-12T18:00:00+08:00"})
    hostile = {"id": "evil", "title": HOSTILE_TITLE, "content": HOSTILE_BODY, "url": HOSTILE_URL, "source": "<b>坏来源</b>",
               "publish_time": "2024-03-12T09:00:00+08:00"}
    out.append(hostile)
    out.append({**hostile, "id": "evil-copy", "url": "https://ok.example.com/evil-copy\" onmouseover=\"alert(4)",
                "publish_time": "2024-03-12T10:00:00+08:00"})
    return out
