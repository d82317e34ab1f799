"""The files a user follows to the Elastic stack, checked here since no Docker runs on the
development machines: docker-compose.yml against .env.example (Compose interpolates every
service's variables before it starts any), the settings both hand to newsdedup, and the daemon
image's build context and wheels."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from indexer.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
# What Compose substitutes (its "Interpolation" reference): ${NAME}, ${NAME:-default}, ${NAME-default},
# ${NAME:?error}, ${NAME?error}, ${NAME:+alt}, ${NAME+alt} and $NAME; $$ is a literal dollar sign.
_EXPRESSION = re.compile(r"\$(?:\{(?P<name>[A-Za-z_]\w*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}|(?P<bare>[A-Za-z_]\w*))")
# Read by `newsdedup kibana import`, not a [section] setting.
CLI_ONLY = {"NEWSDEDUP_KIBANA_URL"}


class MissingVariable(Exception):
    pass


def interpolate(text: str, env: dict[str, str]) -> tuple[str, set[str]]:
    """``text`` with Compose's substitutions applied, and the names it used. A required variable
    that is unset or empty raises ``MissingVariable``, as ``docker compose up`` aborts."""
    used: set[str] = set()

    def substitute(m: re.Match) -> str:
        name = m.group("name") or m.group("bare")
        used.add(name)
        value, op, arg = env.get(name), m.group("op"), m.group("arg")
        if op in (":?", "?") and (value is None or (op == ":?" and value == "")):
            raise MissingVariable(f"{name}: {arg}")
        if op in (":-", "-") and (value is None or (op == ":-" and value == "")):
            return arg
        if op in (":+", "+"):
            return arg if value is not None and (op == "+" or value) else ""
        return value or ""

    parts = text.split("$$")  # literal dollar signs are never substituted
    return "$".join(_EXPRESSION.sub(substitute, part) for part in parts), used


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines; a value may use ${NAME} of a line above (Compose and sh both expand it)."""
    env: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, sep, value = line.partition("=")
            assert sep and key.strip() == key and re.fullmatch(r"[A-Za-z_]\w*", key), f"{path.name}: bad line {line!r}"
            env[key] = interpolate(value, env)[0]
    return env


def compose_text() -> str:
    """docker-compose.yml without its comment lines, which Compose does not interpolate."""
    lines = COMPOSE.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("#"))


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    return read_env_file(ENV_EXAMPLE)


@pytest.fixture(scope="module")
def compose(env) -> dict:
    return yaml.safe_load(interpolate(compose_text(), env)[0])


def _is_setting(name: str) -> bool:
    """``NEWSDEDUP_<SECTION>_<KEY>`` of a settings section (the loader checks the key)."""
    return name.startswith("NEWSDEDUP_") and name.split("_")[1].lower() in {f.name for f in fields(Settings)}


def test_compose_interpolates_every_service_with_the_example_env(env):
    text = compose_text()
    _, used = interpolate(text, env)
    undefined = sorted(name for name in used if not env.get(name))
    assert not undefined, f"docker-compose.yml uses variables .env.example does not set: {undefined}"
    with pytest.raises(MissingVariable, match="NEWSDEDUP_AUTH_TOKEN"):  # what a .env without the daemon's token did
        interpolate(text, {k: v for k, v in env.items() if k != "NEWSDEDUP_AUTH_TOKEN"})


def test_env_example_sets_only_what_compose_or_newsdedup_reads(env):
    _, used = interpolate(compose_text(), env)
    settings = {k for k in env if _is_setting(k)}
    load_settings(environ={k: env[k] for k in settings})  # an unknown key or a bad value raises
    unused = sorted(set(env) - used - settings - CLI_ONLY)
    assert not unused, f".env.example sets variables nothing reads: {unused}"


def test_host_commands_get_the_plain_http_stack_from_the_example_env(env, compose):
    settings = load_settings(environ={k: v for k, v in env.items() if k.startswith("NEWSDEDUP_")})
    assert settings.store.path == f"http://localhost:{env['ES_PORT']}"
    assert (settings.es.username, settings.es.password) == ("elastic", env["ELASTIC_PASSWORD"])
    es_env = dict(item.split("=", 1) for item in compose["services"]["elasticsearch"]["environment"])
    assert es_env["xpack.security.http.ssl.enabled"] == "false" and settings.es.ca_certs == ""
    assert env["NEWSDEDUP_KIBANA_URL"] == f"http://localhost:{env['KIBANA_PORT']}"


def test_plain_up_starts_elasticsearch_and_kibana_and_the_daemon_only_with_its_profile(compose):
    services = compose["services"]
    assert {name for name, s in services.items() if not s.get("profiles")} == {"elasticsearch", "setup", "kibana"}
    assert services["newsdedup"]["profiles"] == ["daemon"]
    assert not any(dep in services and services[dep].get("profiles")
                   for s in services.values() if not s.get("profiles") for dep in s.get("depends_on", {}))


def _bytes(size: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([kmg]?)b?", size.lower()).groups()
    return int(number) * 1024 ** " kmg".index(unit or " ")


def test_long_running_services_have_a_memory_limit_above_the_heap(compose):
    services = compose["services"]
    for name in ("elasticsearch", "kibana", "newsdedup"):
        assert services[name].get("mem_limit"), name
    java = next(e for e in services["elasticsearch"]["environment"] if e.startswith("ES_JAVA_OPTS="))
    heap = _bytes(re.search(r"-Xmx(\w+)", java).group(1))
    assert heap * 2 <= _bytes(str(services["elasticsearch"]["mem_limit"]))


def test_the_daemon_service_hands_valid_settings_to_newsdedup(compose, env):
    daemon_env = dict(item.split("=", 1) for item in compose["services"]["newsdedup"]["environment"])
    settings = load_settings(environ=daemon_env)  # unknown keys and bad values raise
    assert settings.store.path == "http://elasticsearch:9200"
    assert settings.daemon.auth_token == env["NEWSDEDUP_AUTH_TOKEN"] and settings.daemon.host == "0.0.0.0"
    assert settings.es.password == env["ELASTIC_PASSWORD"]


def test_the_build_context_holds_what_the_dockerfile_copies_and_no_venv():
    ignore = [line.strip() for line in DOCKERIGNORE.read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert ignore[0] == "*", "everything is left out unless named"
    included = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    copies = re.findall(r"^COPY\s+(?!--from)(.+?)\s+\S+$", DOCKERFILE.read_text(), re.M)
    sources = {src for line in copies for src in line.split()}
    assert sources and sources <= included, sources - included
    assert ".venv" not in included and ".env" not in included


def test_only_the_build_stage_has_a_compiler():
    stages = re.split(r"^FROM\s", DOCKERFILE.read_text(), flags=re.M)[1:]
    assert len(stages) == 2 and " AS build" in stages[0].splitlines()[0]
    assert "build-essential" in stages[0] and "build-essential" not in stages[1]
    assert "COPY --from=build" in stages[1]


def test_every_dependency_not_built_in_the_build_stage_has_a_wheel_for_the_image():
    """deploy/check_wheels.py: pip resolves ``newsdedup[es]`` for the image's Python and platform
    from wheels only (reads PyPI; a few seconds)."""
    proc = subprocess.run([sys.executable, str(ROOT / "deploy" / "check_wheels.py")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "wheel   numpy" in proc.stdout and "source  hnswlib" in proc.stdout
