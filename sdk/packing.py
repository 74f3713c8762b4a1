"""A bot's code as the platform takes it: one .py file, or a folder zipped, and its entrypoint.

What `Client.submit` (and so `cardarena submit`) uploads. Which class plays:
`PATH:Class` says; else the one `sdk.Bot` subclass the code defines (read from
its source with `ast`, not run).
"""

from __future__ import annotations

import ast
import io
import os
import zipfile
from pathlib import Path

#: what of a folder is not sent
SKIPPED = ("__pycache__", ".git", ".venv", ".mypy_cache", ".pytest_cache")


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
