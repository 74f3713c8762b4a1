"""The repository holds source, not build products: no tracked binary file over 100 KB
(a wheel, an archive, a database dump). Small binaries — an icon, a screenshot — may stay."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 100 * 1024


def is_binary(path: Path) -> bool:
    """Whether the file is not text: a NUL byte in its first 8 KB, or not UTF-8 at all."""
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def test_no_tracked_binary_file_is_over_100_kb():
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    paths = [ROOT / name for name in tracked.decode().split("\0") if name]
    big = [p for p in paths if p.is_file() and p.stat().st_size > LIMIT]
    assert [str(p.relative_to(ROOT)) for p in big if is_binary(p)] == []


def test_a_wheel_counts_as_binary_and_text_does_not(tmp_path):
    wheel = tmp_path / "x.whl"
    wheel.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 10)
    text = tmp_path / "x.md"
    text.write_text("déjà vu\n" * 100, encoding="utf-8")
    assert is_binary(wheel) and not is_binary(text)
