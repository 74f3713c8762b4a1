"""The packages a sandbox imports have their bytecode written before it starts
(core/sandbox.py `compile_packages`): the sandbox reads them read-only, so a missing `.pyc`
would be compiled again at every start of every hosted bot."""

from __future__ import annotations

import importlib.util
import os

from core import sandbox


def test_a_sandbox_start_writes_the_bytecode_of_the_runner_it_imports():
    cached = importlib.util.cache_from_source(os.path.join(sandbox.package_dirs()["sdk"], "hosted_runner.py"))
    if os.path.exists(cached):
        os.unlink(cached)
    sandbox._layout.cache_clear()  # the layout, bytecode included, is found once per process
    box = sandbox.Sandbox(None, None)
    try:
        box.start()
    finally:
        box.kill()
    bound = dict(sandbox._layout()[3])["sdk"]  # the folder it binds: the package's, or its staged copy
    assert os.path.exists(importlib.util.cache_from_source(os.path.join(bound, "hosted_runner.py")))


def test_packages_out_of_others_reach_are_staged_where_a_sandbox_can_read_them(tmp_path):
    """A checkout under a folder closed to others (as `mktemp -d` makes) is copied, without its
    bytecode, to a folder of the process's that others may read."""
    closed = tmp_path / "closed"
    (closed / "pkg" / "__pycache__").mkdir(parents=True)
    (closed / "pkg" / "__init__.py").write_text("X = 1\n")
    (closed / "pkg" / "__pycache__" / "stale.pyc").write_bytes(b"")
    closed.chmod(0o700)
    assert not sandbox._reachable_by_others(str(closed / "pkg"))
    staged = sandbox._staged({"pkg": str(closed / "pkg")})["pkg"]
    assert sandbox._reachable_by_others(staged)
    assert os.listdir(staged) == ["__init__.py"] and open(os.path.join(staged, "__init__.py")).read() == "X = 1\n"
