"""Can the daemon image (deploy/Dockerfile) be built? Every dependency of ``newsdedup[es]``, and
everything they pull in, must have a binary wheel for the image's Python and platform, except the
source-only packages the Dockerfile's build stage builds (``BUILT_FROM_SOURCE``): the build stage
has build-essential and nothing more, so any other source-only package would need system headers
it does not have, and the runtime stage has no compiler at all.

Run from the repository root (needs PyPI; resolves with pip, reading wheel metadata, not wheels):

    python deploy/check_wheels.py [--arch x86_64|aarch64]

Prints one line per package it would install and exits 1 when one has no wheel.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
EXTRAS = ("es",)  # what the Dockerfile installs: .[es]
# No wheel on PyPI: built in the build stage. hnswlib is C++ (needs g++), jieba is pure Python.
BUILT_FROM_SOURCE = {"hnswlib", "jieba"}
# The python:X.Y-slim images are Debian bookworm: glibc 2.36, so manylinux_2_17 ... 2_36 wheels fit.
GLIBC_MINOR = 36


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def requirements(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"])
    for extra in EXTRAS:
        reqs += project["optional-dependencies"][extra]
    return reqs


def image_python(dockerfile: Path = DOCKERFILE) -> str:
    """The X.Y of the image's ``FROM python:X.Y-slim`` (every stage must use the same one)."""
    versions = set(re.findall(r"^FROM\s+python:(\d+\.\d+)", dockerfile.read_text(encoding="utf-8"), re.M))
    if len(versions) != 1:
        raise SystemExit(f"{dockerfile}: expected one python:X.Y base image, found {sorted(versions) or 'none'}")
    return versions.pop()


def platforms(arch: str) -> list[str]:
    return ["manylinux2014_" + arch] + [f"manylinux_2_{minor}_{arch}" for minor in range(17, GLIBC_MINOR + 1)]


def resolve_binary_only(reqs: list[str], python: str, arch: str) -> tuple[int, str, list[dict]]:
    """pip's resolution of ``reqs`` using wheels only: (exit status, pip's messages, what it would install)."""
    abi = "cp" + python.replace(".", "")
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
               "--report", str(report), "--only-binary=:all:", "--python-version", python,
               "--implementation", "cp", "--abi", abi]
        for platform in platforms(arch):
            cmd += ["--platform", platform]
        proc = subprocess.run(cmd + reqs, capture_output=True, text=True)
        installed = json.loads(report.read_text())["install"] if report.exists() else []
    return proc.returncode, (proc.stdout + proc.stderr).strip(), installed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", default="x86_64", choices=("x86_64", "aarch64"))
    args = parser.parse_args(argv)
    python = image_python()
    reqs = [r for r in requirements() if _name(r) not in BUILT_FROM_SOURCE]
    code, messages, installed = resolve_binary_only(reqs, python, args.arch)
    for item in installed:
        print(f"wheel   {item['metadata']['name']} {item['metadata']['version']}: "
              f"{item['download_info']['url'].rsplit('/', 1)[-1]}")
    for name in sorted(BUILT_FROM_SOURCE):
        print(f"source  {name}: built in the Dockerfile's build stage")
    if code != 0:
        print(f"FAIL: not every dependency has a wheel for Python {python} on {args.arch} "
              f"(add its build requirements to the build stage, or to BUILT_FROM_SOURCE):\n{messages}")
        return 1
    print(f"ok: every other dependency of newsdedup[{','.join(EXTRAS)}] has a wheel for Python {python} on {args.arch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
