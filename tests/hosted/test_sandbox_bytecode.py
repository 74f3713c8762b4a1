"""The packages a sandbox imports have their bytecode written before it starts
(core/sandbox.py `compile_packages`): the sandbox reads them read-only, so a missing `.pyc`
would be compiled again at every start of every hosted bot."""

from __future__ import annotations

import importlib.util
import os

from core import sandbox


def test_a_sandbox_start_writes_the_bytecode_of_the_runner_it_imports():
    runner = os.path.join(sandbox.package_dirs()["sdk"], "hosted_runner.py")
    cached = importlib.util.cache_from_source(runner)
    if os.path.exists(cached):
        os.unlink(cached)
    sandbox._layout.cache_clear()  # the layout, bytecode included, is found once per process
    box = sandbox.Sandbox(None, None)
    try:
        box.start()
    finally:
        box.kill()
    assert os.path.exists(cached)
