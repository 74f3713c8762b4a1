"""docs/api.md, the public contract, is true of the OpenAPI document the server serves.

Every endpoint the page names in §1–§4 (`METHOD /path`) is in the document with that method
(§5 is the web pages, outside the REST API). And no file of the repository points outside it:
a clone explains itself.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENDPOINT = re.compile(r"`(GET|POST|PATCH|PUT|DELETE) (/[^`?\s]*)[^`]*`")


def shape(path: str) -> str:
    """A path with its parameters unnamed and no /api/v1 prefix: /bots/{id} -> /bots/{}."""
    return re.sub(r"\{[^}]*\}|<[^>]*>", "{}", path.removeprefix("/api/v1"))


def documented_endpoints() -> set[tuple[str, str]]:
    page = (ROOT / "docs" / "api.md").read_text()
    settled = page.split("\n## 5.", 1)[0]
    return {(method.lower(), shape(path)) for method, path in ENDPOINT.findall(settled)}


def test_every_endpoint_docs_api_md_names_is_served(app):
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    served = {(method, shape(path)) for path, item in document["paths"].items() for method in item}
    named = documented_endpoints()
    assert len(named) >= 20
    assert sorted(named - served) == []


def test_no_file_points_outside_the_repository():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    # written in pieces, so this file does not name what it looks for
    outside = re.compile(r"\.\./" + "shared" + r"|shared/" + "(design|rules)")
    found = [f for f in files.split() if (ROOT / f).is_file() and f.endswith((".py", ".md", ".html", ".toml", ".yml"))
             and outside.search((ROOT / f).read_text(errors="replace"))]
    assert found == []
