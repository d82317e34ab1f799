"""Options every ``newsdedup`` command shares (--store, --config, --set) and the settings they make."""

from __future__ import annotations

from typing import Any

import click

from .errors import ConfigError
from .settings import Settings, load_settings


class CliError(click.ClickException):
    exit_code = 1


def settings_from_options(config: str | None, store: str | None, sets: tuple[str, ...]) -> Settings:
    overrides: dict[str, Any] = {}
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--set")
        overrides[key.strip()] = value
    if store:
        overrides["store.path"] = store
    try:
        return load_settings(config, overrides)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def config_options(func):
    """--config and --set, for commands that bring their own store (or need none)."""
    func = click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a setting, e.g. decision.time_window_days=3.")(func)
    func = click.option("--config", type=click.Path(dir_okay=False), envvar="NEWSDEDUP_CONFIG", help="TOML settings file.")(func)
    return func


def common_options(func):
    """--store, --config and --set."""
    func = config_options(func)
    func = click.option("--store", metavar="DIR_OR_URL", help="Embedded store directory or Elasticsearch URL (store.path).")(func)
    return func
