"""The product uses other people's code through its public names only.

An AST scan of every product module for a `_`-prefixed name (not a `__dunder__`) of code that
is not ours — a third-party package or the standard library: imported (`from x import _y`,
`import x._y`), read, assigned or called on a module or object that came from such code
(`module._y`, `Limiter(...)._y`, a parameter annotated with its class, a name assigned from
one), reached through `super()` in a class that derives from its class, or overridden there (a
method `_y` its base class already has). Tests may use private names; the product may not.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("core", "server", "worker", "sdk", "games", "cardarena", "example_bots")
FIRST_PARTY = set(PRODUCT) | {"tests", "bench", "docs"}
#: (file, name) pairs the product may use anyway, each with its reason: none
ALLOWED: set[tuple[str, str]] = set()
#: `_`-names their owners document as public (owner: a module or class path prefix)
DOCUMENTED = {
    "_exit": "os",  # os._exit: the Python docs' exit without cleanup (a forked child, a dead parent)
    "_deserialize": "marshmallow.",  # marshmallow's "Implementing custom fields": override these
    "_serialize": "marshmallow.",
}


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def foreign(module: str | None) -> bool:
    """Whether `module` (absolute) is not the product's own."""
    return bool(module) and module.split(".")[0] not in FIRST_PARTY and module != "__future__"


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of names and attributes, or the chain a call's result hangs from."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    if isinstance(node, ast.Call):
        return dotted(node.func)
    if isinstance(node, ast.Subscript):
        return dotted(node.value)
    return None


class Scan(ast.NodeVisitor):
    """One module's uses of foreign private names: `found` holds (line, name)."""

    def __init__(self, tree: ast.Module) -> None:
        self.found: list[tuple[int, str]] = []
        self.foreign_names: dict[str, str] = {}  # a local name -> the foreign dotted path it stands for
        self.bases: list[list[tuple[str, object]]] = []  # the foreign base classes of the classes we are in
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if foreign(alias.name):
                        self.foreign_names[(alias.asname or alias.name).split(".")[0]] = (
                            alias.name if alias.asname else alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and foreign(node.module):
                for alias in node.names:
                    self.foreign_names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        self._spread(tree)

    def _spread(self, tree: ast.Module) -> None:
        """Names (and `self.x` attributes) assigned from foreign objects, and parameters annotated
        with foreign classes, stand for foreign objects too (to a fixed point)."""
        changed = True
        while changed:
            changed = False
            for node in ast.walk(tree):
                pairs: list[tuple[ast.AST, ast.AST | None]] = []
                if isinstance(node, ast.Assign):
                    pairs = [(target, node.value) for target in node.targets]
                elif isinstance(node, ast.AnnAssign):
                    pairs = [(node.target, node.value), (node.target, node.annotation)]
                elif isinstance(node, ast.arg) and node.annotation is not None:
                    pairs = [(ast.Name(node.arg), node.annotation)]
                elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                    pairs = [(node.optional_vars, node.context_expr)]
                for target, value in pairs:
                    source = self._foreign(value) if value is not None else None
                    name = dotted(target) if isinstance(target, (ast.Name, ast.Attribute)) else None
                    if source and name and name not in self.foreign_names:
                        self.foreign_names[name] = source
                        changed = True

    def _foreign(self, node: ast.AST | None) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string annotation
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        path = dotted(node) if node is not None else None
        head, rest = path, ""
        while head:
            if head in self.foreign_names:
                return self.foreign_names[head] + rest
            head, dot, last = head.rpartition(".")
            rest = f"{dot}{last}{rest}"
        return None

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and foreign(node.module):
            parts = [*node.module.split("."), *(a.name for a in node.names)]
            self.found += [(node.lineno, part) for part in parts if private(part)]

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if foreign(alias.name):
                self.found += [(node.lineno, part) for part in alias.name.split(".") if private(part)]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        paths = [path for path in map(self._foreign, node.bases) if path]
        bases = [(path, base) for path, base in zip(paths, map(self._resolve, paths), strict=True) if base is not None]
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and private(item.name):
                for path, base in bases:
                    if hasattr(base, item.name):  # overrides a foreign private method
                        self._note(item.lineno, item.name, path)
        self.bases.append(bases)
        self.generic_visit(node)
        self.bases.pop()

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if private(node.attr):
            value, bases = node.value, self.bases[-1] if self.bases else []
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super":
                owners = [path for path, _ in bases]
            elif isinstance(value, ast.Name) and value.id == "self":
                owners = [path for path, base in bases if hasattr(base, node.attr)]
            else:
                owners = [self._foreign(value)]
            for owner in owners[:1]:
                if owner:
                    self._note(node.lineno, node.attr, owner)
        self.generic_visit(node)

    def _note(self, line: int, name: str, owner: str) -> None:
        if not owner.startswith(DOCUMENTED.get(name, "\0")):
            self.found.append((line, name))

    @staticmethod
    def _resolve(path: str | None) -> object | None:
        """The foreign class `path` names, imported (None if it cannot be)."""
        if not path:
            return None
        module, _, name = path.rpartition(".")
        if not module:
            return None
        try:
            return getattr(importlib.import_module(module), name, None)
        except ImportError:
            return None


def scan(root: Path) -> list[str]:
    """Every foreign private name the product under `root` uses: "file:line name"."""
    found = []
    for package in PRODUCT:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
            checker = Scan(tree)
            checker.visit(tree)
            found += [f"{relative}:{line} {name}" for line, name in checker.found
                      if (relative, name) not in ALLOWED]
    return found


def test_the_product_uses_no_private_name_of_code_not_its_own():
    assert scan(ROOT) == []


@pytest.mark.parametrize("source, name", [
    ("import http.client\nhttp.client._read_headers(fp)", "_read_headers"),
    ("from http.client import _read_headers", "_read_headers"),
    ("from flask_limiter import Limiter\ndef f(limiter: Limiter):\n    limiter._check_request_limit()",
     "_check_request_limit"),
    ("import redis\nr = redis.Redis()\nr._x = 1", "_x"),
    ("import redis\nclass S:\n    def __init__(self):\n        self.r = redis.Redis()\n"
     "    def f(self):\n        return self.r.connection_pool._available_connections", "_available_connections"),
    ("from gevent.pywsgi import WSGIHandler\nclass H(WSGIHandler):\n    def _sendall(self, data):\n"
     "        super()._sendall(data)", "_sendall"),
    ("import gevent.hub as hub\nhub._private = 1", "_private"),
])
def test_the_scan_finds_a_private_name_however_it_is_reached(source, name):
    tree = ast.parse(source)
    checker = Scan(tree)
    checker.visit(tree)
    assert name in [found for _, found in checker.found]


@pytest.mark.parametrize("source", [
    "from __future__ import annotations\nimport redis\nredis.__version__",
    "class Mine:\n    def _helper(self):\n        return self._state",
    "from core.store import keys\nkeys._second",
    "import redis\ndef f(r: redis.Redis):\n    return r.connection_pool",
])
def test_the_scan_leaves_our_own_private_names_and_foreign_public_ones_alone(source):
    tree = ast.parse(source)
    checker = Scan(tree)
    checker.visit(tree)
    assert checker.found == []

