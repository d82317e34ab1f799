"""``python -m indexer.daemon [serve options]``: the same as ``newsdedup serve``."""

from .cli import serve

if __name__ == "__main__":
    serve(prog_name="python -m indexer.daemon")
