"""`from sdk import Bot` imports the bot's class alone: a hosted bot's sandbox starts without the
HTTP client, the web server or local play (core/sandbox.py), and every other name of `sdk` is
still there at first use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_bot_imports_no_http_client_and_every_name_is_still_there():
    script = ("import sys\nfrom sdk import Bot\n"
              "heavy = sorted(m for m in ('requests', 'urllib3', 'waitress', 'sdk.client', 'sdk.local')"
              " if m in sys.modules)\n"
              "assert heavy == [], heavy\n"
              "import sdk\n"
              "assert all(getattr(sdk, name) is not None for name in sdk.__all__)\n"
              "from sdk import Client, load_replay, serve\n"
              "assert Client.__module__ == 'sdk.client' and load_replay.__name__ == 'load'\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_hosted_runner_imports_no_module_only_other_hosts_use():
    """What signing (OpenSSL's hashing), the clock's summaries (`statistics`) and local play's
    file loading (`importlib.util`) need is imported where they are used: a hosted bot's every
    start (`python -I -S`, as here) would pay for it."""
    script = (f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nimport sdk.hosted_runner\n"
              "needless = sorted(m for m in ('_hashlib', 'hmac', 'statistics', 'importlib.util') if m in sys.modules)\n"
              "assert needless == [], needless\n"
              "from sdk.protocol import sign\n"
              "assert sign(b'x', 'k').startswith('sha256=')\n")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
