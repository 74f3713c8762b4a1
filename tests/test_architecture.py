"""The import rules docs/architecture.md states, checked on the source (function-local imports
included): who may import whom, no cycles between modules, and no game named outside the games;
Redis scripts only as files of core/store/lua/, Redis key names built only in core/store/;
the API served one way (`cardarena serve`), in the tests too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import redis

import games

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("games", "sdk", "core", "server", "worker", "example_bots", "cardarena")
#: what each folder may import of the project (the table of docs/architecture.md)
MAY_IMPORT = {
    "games": {"games"},
    "sdk": {"sdk", "games"},
    "example_bots": {"example_bots", "sdk", "games"},
    "core": {"core", "sdk", "games"},
    "server": {"server", "core", "sdk", "games"},
    "worker": {"worker", "core", "sdk", "games"},
    "cardarena": set(PACKAGES),
}


def modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `name` imports anywhere in its file (the longest known prefix of each)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            # `from package import module` names the module; `from module import name`, the module
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def test_each_folder_imports_only_what_the_architecture_allows():
    wrong = sorted(f"{name} imports {target}" for name, targets in graph().items() for target in targets
                   if target.split(".")[0] not in MAY_IMPORT[name.split(".")[0]])
    assert wrong == []


def test_no_import_cycles_between_modules():
    edges = graph()
    # a package's __init__ importing its own submodules (to re-export them, or to register a
    # blueprint's views) is the package being assembled, not a cycle between concepts
    packages = {name for name, path in modules().items() if path.name == "__init__.py"}
    edges = {m: {t for t in ts if not (m in packages and t.startswith(m + "."))} for m, ts in edges.items()}
    cycles = [sorted(component) for component in strongly_connected(edges) if len(component) > 1]
    assert cycles == []


def strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iteratively."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                out.append(component)
    return out


def test_no_game_is_named_outside_the_games_and_their_bots():
    """Adding a game is its package, its registration, its rules page and its tests: the
    platform's Python code names none of them (docstrings' examples included)."""
    names = "|".join(re.escape(n) for n in games.names())
    quoted = re.compile(rf"""["']({names})["']""")
    found = [f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
             for package in ("core", "server", "worker", "sdk", "cardarena")
             for path in (ROOT / package).rglob("*.py")
             for i, line in enumerate(path.read_text().splitlines(), 1) if quoted.search(line)]
    assert found == []


def test_each_redis_key_lives_where_docs_architecture_says():
    """The page's table of keys is true: each key named there is named in that store module's
    docstring (or source, for the secret key), and no key is listed under two modules."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    section = page.split("## Where each Redis key lives", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+\.py)` \| (.+) \|$", section, re.M)
    assert len(rows) >= 12
    seen: dict[str, str] = {}
    for module, cell in rows:
        source = (ROOT / "core" / "store" / module).read_text()
        for key in re.findall(r"`([^`]+)`", cell):
            if key.endswith("…}"):  # a hashed part, shown shortened
                key = key.split("{")[0]
            assert key in source, f"{key} is listed under {module}, which does not name it"
            assert seen.setdefault(key, module) == module, f"{key} is listed under two modules"


def product_files() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_redis_scripts_live_only_in_core_store_lua():
    inline = {str(path.relative_to(ROOT)) for path in product_files() if "redis.call" in path.read_text()}
    assert inline == set()


#: redis-py's command methods (`hget`, `zadd`, ...), less the names lists, dicts, sets and strings
#: also have, so that a call of one on an f-string is a Redis command on a key built there
REDIS_COMMANDS = ({name for name in dir(redis.Redis) if not name.startswith("_")}
                  - {name for kind in (list, dict, set, str) for name in dir(kind)})


def builds_a_key(node: ast.expr) -> bool:
    """An f-string or concatenation with a ':' in its text: a key name like f"match:{mid}"."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.Constant) and ":" in str(part.value) for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return builds_a_key(node.left) or builds_a_key(node.right)
    return False


def test_no_redis_key_name_is_built_outside_the_store():
    store = ROOT / "core" / "store"
    built = sorted(f"{path.relative_to(ROOT)}:{node.lineno}"
                   for path in product_files() if not path.is_relative_to(store)
                   for node in ast.walk(ast.parse(path.read_text(), str(path)))
                   if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                   and node.func.attr in REDIS_COMMANDS and any(builds_a_key(arg) for arg in node.args))
    assert built == []


def imported_names(path: Path) -> set[str]:
    """The dotted name of every module `path` imports (function-local imports included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
    return names


def test_only_the_sdks_webhook_server_imports_waitress():
    """The API runs one way, `cardarena serve` under gevent, and so do the tests' live servers
    (tests/live.py); waitress serves a bot author's webhook bot (`sdk.serve`) and nothing else."""
    files = [*product_files(), *sorted((ROOT / "tests").rglob("*.py")), *sorted((ROOT / "bench").rglob("*.py"))]
    importers = {str(path.relative_to(ROOT)) for path in files
                 if any(name.partition(".")[0] == "waitress" for name in imported_names(path))}
    assert importers == {"sdk/webhook.py"}
