"""`cardarena submit PATH --game G [--name N]`: upload a bot's code; the platform hosts it.

The code is one Python file, or a folder (a package and whatever it holds),
sent as a zip. The platform runs it in its sandbox, asks it a probe decision
and puts it on its game's ladder (docs/write-a-bot.md): nothing of yours needs
to keep running. Submitting again under the same name uploads a new version
of that bot.

Which class plays: `PATH:Class` says; else the one `sdk.Bot` subclass the
code defines (read from its source, not run). The platform is
`--server` (or `CARDARENA_SERVER`), the account `--token` (or
`CARDARENA_TOKEN`).
"""

from __future__ import annotations

import argparse
import ast
import base64
import io
import os
import sys
import zipfile
from pathlib import Path

HELP = "upload a bot's code (a .py file or a folder): the platform hosts it on the ladder"
SERVER_ENV = "CARDARENA_SERVER"
#: what of a folder is not sent
SKIPPED = ("__pycache__", ".git", ".venv", ".mypy_cache", ".pytest_cache")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="mybot.py, a package folder, or either with :Class")
    parser.add_argument("--game", required=True, help="the game it plays")
    parser.add_argument("--name", default=None, help="its name on the platform (default: its class's)")
    parser.add_argument("--server", default=os.environ.get(SERVER_ENV),
                        help=f"the platform's URL (default ${SERVER_ENV})")
    parser.add_argument("--token", default=None, help="your account's token (default $CARDARENA_TOKEN)")


def run(args: argparse.Namespace) -> int:
    from sdk.client import CardarenaError, Client

    if not args.server:
        print(f"cardarena submit: name the platform with --server URL or {SERVER_ENV}", file=sys.stderr)
        return 2
    try:
        with Client(args.server, token=args.token) as client:
            bot = client.submit(args.path, game=args.game, name=args.name)
    except (ValueError, OSError) as exc:
        print(f"cardarena submit: {exc}", file=sys.stderr)
        return 2
    except CardarenaError as exc:
        print(f"cardarena submit: {exc}", file=sys.stderr)
        return 1
    print(f"{bot.name} ({bot.id}) version {bot.version}: {bot.status}")
    if bot.status != "online":
        print(bot.probe_error or bot.status_reason or "", file=sys.stderr)
        return 1
    print(f"{args.server.rstrip('/')}/bots/{bot.id}")
    return 0


def package(path: str) -> tuple[bytes, str]:
    """The code at `path` (`file.py`, a folder, either with `:Class`) as the bytes to upload (the
    file's, or a zip of the folder) and its entrypoint `module:Class`; ValueError if no class
    can be named."""
    where, _, named = path.rpartition(":") if ":" in os.path.basename(path) else (path, "", "")
    source = Path(where)
    if source.is_file():
        if source.suffix != ".py":
            raise ValueError(f"{source} is not a .py file")
        data = source.read_bytes()
        module = source.stem
        return data, f"{module}:{named or _one_bot(data, source)}"
    if source.is_dir():
        files = _folder_files(source)
        if named:
            return _zip(files), _entrypoint_named(files, source.name, named)
        found = [(name, cls) for name, data in files.items() if name.endswith(".py")
                 for cls in _bots_in(data)]
        if len(found) != 1:
            raise ValueError(f"{source}: say which class plays, as {source}:Class "
                             f"(found {len(found)} Bot subclasses)")
        name, cls = found[0]
        return _zip(files), f"{_module_of(name)}:{cls}"
    raise ValueError(f"no such file or folder: {where}")


def _one_bot(data: bytes, source: Path) -> str:
    found = _bots_in(data)
    if len(found) != 1:
        raise ValueError(f"{source}: say which class plays, as {source}:Class (found {len(found)} Bot subclasses)")
    return found[0]


def _bots_in(data: bytes) -> list[str]:
    """The classes a module's source defines on `Bot` (or `sdk.Bot`) at its top level."""
    try:
        tree = ast.parse(data)
    except SyntaxError as exc:
        raise ValueError(f"the code does not parse: {exc}") from None
    out = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", None) for b in node.bases]
            if "Bot" in bases:
                out.append(node.name)
    return out


def _folder_files(folder: Path) -> dict[str, bytes]:
    """The folder's files under its own name (it is a package: `mybot/brain.py`), hidden files and
    caches left out."""
    out = {}
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if any(p.startswith(".") or p in SKIPPED for p in parts) or path.is_symlink() or not path.is_file():
            continue
        out["/".join((folder.name, *parts))] = path.read_bytes()
    return out


def _module_of(name: str) -> str:
    module = name[:-3].replace("/", ".")
    return module[: -len(".__init__")] if module.endswith(".__init__") else module


def _entrypoint_named(files: dict[str, bytes], package: str, named: str) -> str:
    for name, data in files.items():
        if name.endswith(".py") and named in _bots_in(data):
            return f"{_module_of(name)}:{named}"
    raise ValueError(f"no class {named} on Bot in {package}")


def _zip(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return out.getvalue()


def encoded(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
