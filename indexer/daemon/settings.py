"""The ``[daemon]`` settings section (``newsdedup serve``), defined with every other section in
``indexer.settings``: ``[daemon]`` in TOML, ``NEWSDEDUP_DAEMON_*`` and ``--set daemon.x=y`` work like
everywhere else. ``auth_token`` is a secret: it is never logged or echoed.
"""

from __future__ import annotations

from ..settings import DaemonSettings, Settings

__all__ = ["DaemonSettings", "daemon_settings"]


def daemon_settings(settings: Settings) -> DaemonSettings:
    return settings.daemon
