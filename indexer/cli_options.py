"""Options every ``newsdedup`` command shares (--store, --config, --set) and the settings they make."""

from __future__ import annotations

from pathlib import Path
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
    if store is not None:  # --store "" is an empty path, refused by the settings, not no flag
        overrides["store.path"] = store
    try:
        return load_settings(config, overrides)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def existing_store(settings: Settings) -> Settings:
    """``settings``, for a command that only reads the store. An embedded store directory that
    does not hold the store's database is a mistyped --store: refused here, before opening it would
    create an empty store there. An Elasticsearch URL is left to the store to answer."""
    from .store import is_remote
    from .store.sqlite import DB_FILE

    location = settings.store.path
    if not is_remote(location) and not (Path(location) / DB_FILE).is_file():
        raise CliError(f"no store at {location}")
    return settings


def config_options(func):
    """--config and --set, for commands that bring their own store (or need none)."""
    func = click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a setting, e.g. decision.time_window_days=3.")(func)
    return click.option("--config", type=click.Path(dir_okay=False), envvar="NEWSDEDUP_CONFIG", help="TOML settings file.")(func)


def common_options(func):
    """--store, --config and --set."""
    return click.option("--store", metavar="DIR_OR_URL", help="Embedded store directory or Elasticsearch URL (store.path).")(config_options(func))
