"""What other packages of the distribution plug into the indexer, found by name.

The crawlers package builds on the indexer (``crawlers`` imports ``indexer``, never the reverse),
yet ``newsdedup crawl`` and the daemon's scheduled crawls are its own. It declares them as entry
points (pyproject.toml), and the indexer looks them up here by group and name:

* ``newsdedup.commands``: click commands added to the ``newsdedup`` CLI (``crawl``);
* ``newsdedup.daemon``:   parts the daemon runs (``crawl_scheduler``).

Entry points are installed metadata: a checkout is used through ``pip install -e .``. A plugin
that fails to import raises its ImportError, naming the module, instead of vanishing.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from .errors import ConfigError

COMMANDS = "newsdedup.commands"
DAEMON = "newsdedup.daemon"


def commands() -> list[Any]:
    """Every command of the ``newsdedup.commands`` group, loaded, in name order."""
    return [ep.load() for ep in sorted(entry_points(group=COMMANDS), key=lambda ep: ep.name)]


def load(group: str, name: str, setting: str) -> Any:
    """The object the entry point ``name`` of ``group`` names. ``setting``: the setting that asked
    for it, named in the error when no installed package provides it."""
    found = list(entry_points(group=group, name=name))
    if not found:
        raise ConfigError(setting, f"no installed package provides {name!r} in the entry point group {group!r}; "
                                   "install newsdedup with its crawlers (pip install -e . in a checkout)")
    return found[0].load()
