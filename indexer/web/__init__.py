"""The browser view of a store: clusters, one cluster, one article, an overview, corrections."""

from __future__ import annotations


def mount_web(ctx):
    from ..daemon.api import create_app

    return create_app(ctx)
