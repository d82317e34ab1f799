"""Dependencies point one way: crawlers builds on indexer, indexer never imports crawlers. What the
crawlers package adds to the indexer (the `crawl` command, the daemon's scheduled crawls) arrives
by entry point (indexer/plugins.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(source: str) -> set[str]:
    """Every module ``source`` imports: import statements, and import_module/__import__ calls
    with a literal name (an import by string is still an import)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def test_the_scan_sees_every_way_of_importing():
    source = "import crawlers.fetch\nfrom crawlers.sinks import Sink\nimportlib.import_module('crawlers.cli')\nfrom . import x\n"
    assert {"crawlers.fetch", "crawlers.sinks", "crawlers.cli"} <= imported_modules(source)


def test_no_module_of_the_indexer_imports_the_crawlers():
    offenders = []
    for path in sorted((ROOT / "indexer").rglob("*.py")):
        for module in imported_modules(path.read_text(encoding="utf-8")):
            if module == "crawlers" or module.startswith("crawlers."):
                offenders.append(f"{path.relative_to(ROOT)} imports {module}")
    assert offenders == []


def test_the_crawlers_plug_into_the_cli_and_the_daemon_by_entry_point():
    from click.testing import CliRunner

    from crawlers.cli import crawl
    from crawlers.scheduled import CrawlScheduler
    from indexer.cli import main
    from indexer.errors import ConfigError
    from indexer.plugins import DAEMON, load

    assert main.commands["crawl"] is crawl
    assert CliRunner().invoke(main, ["crawl", "--help"]).exit_code == 0
    assert load(DAEMON, "crawl_scheduler", "daemon.crawl_sources") is CrawlScheduler  # what the daemon runs
    with pytest.raises(ConfigError, match="daemon.crawl_sources"):
        load(DAEMON, "no_such_part", "daemon.crawl_sources")


def test_the_daemon_takes_the_crawlers_only_when_it_runs_scheduled_crawls(tmp_path):
    """Importing the daemon loads nothing of the crawlers package; a daemon with crawl sources
    gets the crawlers' scheduler through the entry point."""
    import subprocess
    import sys

    sources = tmp_path / "sources.toml"
    sources.write_text('[[sources]]\nname = "site"\ntype = "feed"\nstart_urls = ["http://127.0.0.1:9/rss.xml"]\n', encoding="utf-8")
    code = (
        "import sys\n"
        "import indexer.daemon.service as service\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'crawlers'))\n"
        "from indexer.settings import load_settings\n"
        f"s = load_settings(environ={{}}, overrides={{'store.path': {str(tmp_path / 'store')!r}, 'embedding.model': 'none',"
        f" 'daemon.port': '0', 'daemon.crawl_sources': {str(sources)!r}}})\n"
        "d = service.Daemon(s, s.daemon)\n"
        "print(type(d.crawler).__module__, type(d.crawler).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "crawlers.scheduled CrawlScheduler"]
