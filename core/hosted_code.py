"""A hosted bot's code: checked as uploaded, stored content-addressed, unpacked for its sandbox.

An upload (`POST /bots` with kind `hosted`, `POST /bots/{id}/versions`) is
base64 of either one Python file, stored as the entrypoint's module
(`mybot:MyBot` -> `mybot.py`), or a zip of a package. Either is made into one
canonical zip (its files sorted, no dates), whose sha256 names it: the same
code uploaded twice is stored once, and a version names its code by that hash
(the bot record's `code`).

    CARDARENA_CODE   where the code is kept (default: `code` beside the archive,
                     under the platform's data directory)

Each code is kept as `<root>/<h[:2]>/<h>.zip` (what its owner downloads) and
unpacked beside it as `<root>/<h[:2]>/<h>/` (what the sandbox binds read-only).

Limits (docs/api.md §3): at most `MAX_BYTES` packed and unpacked, `MAX_FILES`
files; no symlinks, no absolute or `..` paths, nothing but files and folders.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import os
import re
import secrets
import shutil
import stat
import zipfile
from pathlib import Path

CODE_ENV = "CARDARENA_CODE"
#: the most bytes of code, packed (the upload, decoded) and unpacked (its files together)
MAX_BYTES = 1 << 20
#: the most files in a zip
MAX_FILES = 100
#: the longest path inside a zip
MAX_PATH = 200
ENTRYPOINT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")
_PART = re.compile(r"^[A-Za-z0-9_.\-]+$")
#: where code is copied for its sandbox when the store is out of an unprivileged user's reach
RUNNABLE_ROOT = "/tmp/cardarena-code"


class BadCode(ValueError):
    """Code that cannot be taken: `code` is the API's error code ("too_large" or "bad_code")."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def files_of(code_b64: str, entrypoint: str) -> dict[str, bytes]:
    """The files of an upload (base64 of one .py file or a zip), by path; `BadCode` if it is
    not code the platform takes for `entrypoint`."""
    if not isinstance(entrypoint, str) or not ENTRYPOINT.match(entrypoint):
        raise BadCode("bad_code", f"entrypoint must be module:Class (e.g. mybot:MyBot), not {str(entrypoint)[:80]!r}")
    if not isinstance(code_b64, str) or len(code_b64) > (MAX_BYTES * 4) // 3 + 8:
        raise BadCode("too_large", f"code is at most {MAX_BYTES} bytes")
    try:
        raw = base64.b64decode(code_b64, validate=True)
    except (binascii.Error, ValueError):
        raise BadCode("bad_code", "code is not base64") from None
    if len(raw) > MAX_BYTES:
        raise BadCode("too_large", f"code is at most {MAX_BYTES} bytes, this is {len(raw)}")
    files = _zip_files(raw) if raw[:4] == b"PK\x03\x04" else _one_file(raw, entrypoint)
    module = entrypoint.partition(":")[0].replace(".", "/")
    if f"{module}.py" not in files and f"{module}/__init__.py" not in files:
        raise BadCode("bad_code", f"the entrypoint's module {module.replace('/', '.')} is not in the code "
                                  f"(no {module}.py or {module}/__init__.py)")
    return files


def _one_file(raw: bytes, entrypoint: str) -> dict[str, bytes]:
    module = entrypoint.partition(":")[0]
    if "." in module:
        raise BadCode("bad_code", "one file is one module: name it module:Class, or upload a zip of the package")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadCode("bad_code", "code is neither a zip nor a Python file (UTF-8 text)") from None
    return {f"{module}.py": raw}


def _zip_files(raw: bytes) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        raise BadCode("bad_code", f"code is not a readable zip: {exc}") from None
    entries = [i for i in infos if not i.is_dir()]
    if len(entries) > MAX_FILES:
        raise BadCode("too_large", f"a zip holds at most {MAX_FILES} files, this one {len(entries)}")
    files: dict[str, bytes] = {}
    total = 0
    for info in infos:
        _check_path(info.filename)
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise BadCode("bad_code", f"{info.filename!r} is not a file or a folder (a symlink?)")
        if info.is_dir():
            continue
        total += info.file_size
        if total > MAX_BYTES:
            raise BadCode("too_large", f"code is at most {MAX_BYTES} bytes unpacked")
        try:
            with archive.open(info) as f:
                data = f.read(MAX_BYTES + 1 - (total - info.file_size))
        except (zipfile.BadZipFile, NotImplementedError, ValueError, OSError, EOFError) as exc:
            raise BadCode("bad_code", f"cannot read {info.filename!r} from the zip: {exc}") from None
        if len(data) != info.file_size:
            raise BadCode("too_large" if len(data) > info.file_size else "bad_code",
                          f"{info.filename!r} is not the size the zip says")
        name = info.filename.rstrip("/")
        if name in files:
            raise BadCode("bad_code", f"{name!r} is twice in the zip")
        files[name] = data
    for name in files:  # a file and a folder of the same name cannot both be unpacked
        parts = name.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in files:
                raise BadCode("bad_code", f"{'/'.join(parts[:i])!r} is both a file and a folder")
    return files


def _check_path(name: str) -> None:
    plain = name.rstrip("/")
    parts = plain.split("/")
    if (not plain or len(name) > MAX_PATH or name.startswith("/") or "\\" in name
            or any(p in ("", ".", "..") or not _PART.match(p) for p in parts)):
        raise BadCode("bad_code", f"{name[:80]!r} is not a plain relative path (letters, digits, _ . -; "
                                  "no absolute or .. paths)")


def canonical_zip(files: dict[str, bytes]) -> bytes:
    """The files as one zip that is the same bytes for the same files."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    return out.getvalue()


def root() -> Path:
    configured = os.environ.get(CODE_ENV, "").strip()
    if configured:
        return Path(configured)
    from core.redis_server import state_dir

    return state_dir() / "code"


def _paths(digest: str) -> tuple[Path, Path]:
    if not re.fullmatch(r"[0-9a-f]{64}", digest or ""):
        raise ValueError(f"not a code hash: {digest!r}")
    folder = root() / digest[:2]
    return folder / f"{digest}.zip", folder / digest


def store(files: dict[str, bytes]) -> str:
    """Keep the files (their zip and their unpacked tree); their sha256."""
    data = canonical_zip(files)
    digest = hashlib.sha256(data).hexdigest()
    packed, unpacked = _paths(digest)
    packed.parent.mkdir(parents=True, exist_ok=True)
    if not packed.exists():
        tmp = packed.with_name(f".{digest}.{secrets.token_hex(4)}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, packed)
    if not unpacked.is_dir():
        _unpack(files, unpacked)
    return digest


def _unpack(files: dict[str, bytes], target: Path) -> None:
    """Write the files as a tree at `target` (all at once: made aside, then renamed), readable by
    anyone who reaches it (the sandbox's own uid), writable by nobody."""
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    tmp.mkdir(mode=0o755)
    for name, data in files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        path.write_bytes(data)
        path.chmod(0o444)
    for folder, _, _ in os.walk(tmp):
        os.chmod(folder, 0o555)
    try:
        os.rename(tmp, target)
    except OSError:  # made by another process meanwhile
        _remove(tmp)


def _remove(path: Path) -> None:
    for folder, _, _ in os.walk(path):
        os.chmod(folder, 0o755)
    shutil.rmtree(path, ignore_errors=True)


def packed(digest: str) -> bytes | None:
    """The code's zip (None if it is not kept here)."""
    path = _paths(digest)[0]
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def runnable_dir(digest: str) -> str:
    """The folder of the code's unpacked tree, where a sandbox's unprivileged user can reach it:
    the store's own, or a copy under `RUNNABLE_ROOT` when the store is out of its reach (a
    data directory under root's home). `FileNotFoundError` if the code is not kept here."""
    unpacked = _paths(digest)[1]
    if not unpacked.is_dir():
        data = packed(digest)
        if data is None:
            raise FileNotFoundError(f"no code {digest} in {root()}")
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            _unpack({i.filename: archive.read(i) for i in archive.infolist()}, unpacked)
    if os.getuid() != 0 or _reachable(unpacked):
        return str(unpacked)
    copy = Path(RUNNABLE_ROOT) / digest
    if not copy.is_dir():
        Path(RUNNABLE_ROOT).mkdir(mode=0o711, exist_ok=True)
        made = os.lstat(RUNNABLE_ROOT)
        if not stat.S_ISDIR(made.st_mode) or made.st_uid != os.getuid():  # planted by someone else
            raise FileNotFoundError(f"{RUNNABLE_ROOT} is not this user's folder")
        os.chmod(RUNNABLE_ROOT, 0o711)
        files = {str(p.relative_to(unpacked)): p.read_bytes() for p in unpacked.rglob("*") if p.is_file()}
        _unpack(files, copy)
    return str(copy)


def _reachable(path: Path) -> bool:
    try:
        return all(q.stat().st_mode & 0o001 for q in [path, *path.parents])
    except OSError:
        return False
