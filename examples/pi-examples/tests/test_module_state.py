"""No example keeps per-session state in its module: an AST scan of every example pack's sources (``examples/*/src``).

A module is imported once per process, so state in it is shared by every session of that process (SDK sessions,
ACP's, the instance before and after ``/new``). Per-session state belongs on a class plugin's instance
(docs/plugins.md, "Class plugins"); constants may stay module globals. The scan reports:

- a ``global`` statement;
- a module-level name that a function changes: an attribute or item assigned or deleted through it
  (``STATE.count = 0``, ``CACHE[key] = v``), or a mutating method called on it (``SEEN.add(x)``, ``LIVE.clear()``);
- a module-level instance of a class the pack defines (not a frozen dataclass, Enum or NamedTuple) that a function
  uses: its methods may change it (``STATE = Checkpoints()``, then ``STATE.reset()``);
- a mutable class attribute (``seen = []`` in a class body) changed through ``self``/``cls``: one object shared by
  every instance, so by every session.

Names a function binds itself (parameters, locals) are not the module's. examples/pi-examples/README.md says how
to fix a finding.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2]
MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "discard", "remove", "pop", "popitem", "clear",
                      "setdefault", "sort", "reverse", "appendleft", "extendleft", "popleft", "rotate",
                      "__setitem__", "__delitem__"})
MUTABLE_CALLS = frozenset({"list", "dict", "set", "bytearray", "defaultdict", "deque", "OrderedDict", "Counter"})
Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _root(node: ast.expr) -> ast.expr:
    """``a`` of ``a.b[c].d``."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


def _is_mutable_value(value: ast.expr) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in MUTABLE_CALLS
    return False


def _is_immutable_class(node: ast.ClassDef) -> bool:
    for base in node.bases:
        name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
        if name in ("Enum", "IntEnum", "StrEnum", "Flag", "NamedTuple", "Exception", "BaseException", "Protocol"):
            return True
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call) and any(k.arg == "frozen" and isinstance(k.value, ast.Constant)
                                                   and k.value.value is True for k in decorator.keywords):
            return True
    return False


def pack_classes(trees: list[ast.Module]) -> set[str]:
    """The names of the (possibly mutable) classes a pack defines."""
    return {node.name for tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef) and not _is_immutable_class(node)}


def _module_names(tree: ast.Module, classes: Collection[str]) -> tuple[set[str], set[str]]:
    """(every name the module body assigns, those bound to an instance of one of ``classes``)."""
    names: set[str] = set()
    instances: set[str] = set()
    for node in tree.body:
        value: ast.expr | None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets, value = [node.target], node.value
        else:
            continue
        bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        names |= bound
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in classes:
            instances |= bound
    return names, instances


def _own_names(fn: Function) -> set[str]:
    """The names ``fn`` binds itself (parameters and assigned locals), unless it declares them global."""
    own = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    declared: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Global):
            declared.update(node.names)
    return own - declared


def _changes(node: ast.AST) -> ast.expr | None:
    """The expression ``node`` changes in place, if it is a mutating call, an item/attribute store or delete."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
        return node.func.value
    if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return node.value
    return None


def scan_source(source: str, classes: Collection[str] = (), filename: str = "<source>") -> list[str]:
    """The findings for one module's source, as ``LINE: what`` (each at its first line only)."""
    tree = ast.parse(source, filename)
    module_names, instances = _module_names(tree, classes)
    found: set[tuple[int, str]] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        own = _own_names(fn)
        where = getattr(fn, "name", "a lambda")
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                found.add((node.lineno, f"global {', '.join(node.names)} in {where}"))
                continue
            changed = _changes(node)
            root = _root(changed) if changed is not None else None
            if isinstance(root, ast.Name) and root.id in module_names and root.id not in own:
                found.add((root.lineno, f"module-level {root.id} changed in {where}"))
            if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in instances
                    and node.id not in own):
                found.add((node.lineno, f"module-level instance {node.id} used in {where}"))
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        shared = {t.id for stmt in cls.body if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None
                  and _is_mutable_value(stmt.value)
                  for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]) if isinstance(t, ast.Name)}
        for node in ast.walk(cls):
            changed = _changes(node)
            while isinstance(changed, ast.Subscript):
                changed = changed.value
            if (isinstance(changed, ast.Attribute) and changed.attr in shared and isinstance(changed.value, ast.Name)
                    and changed.value.id in ("self", "cls", cls.name)):
                what = f"class attribute {cls.name}.{changed.attr} changed (one for all instances)"
                found.add((changed.lineno, what))
    first: dict[str, int] = {}
    for line, what in sorted(found):
        first.setdefault(what, line)
    return [f"{line}: {what}" for what, line in sorted(first.items(), key=lambda item: (item[1], item[0]))]


def scan_pack(src: Path) -> list[str]:
    """The findings for every module under one pack's ``src``, as ``PATH:LINE: what``."""
    paths = sorted(src.rglob("*.py"))
    trees = [ast.parse(path.read_text(encoding="utf-8"), str(path)) for path in paths]
    classes = pack_classes(trees)
    return [f"{path.relative_to(EXAMPLES)}:{finding}" for path in paths
            for finding in scan_source(path.read_text(encoding="utf-8"), classes, str(path))]


PACKS = sorted(path for path in EXAMPLES.glob("*/src") if path.is_dir())


def test_every_example_pack_is_scanned() -> None:
    assert {path.parent.name for path in PACKS} >= {"pi-examples", "pi-example-with-deps"}


@pytest.mark.parametrize("src", PACKS, ids=[path.parent.name for path in PACKS])
def test_no_example_keeps_state_in_its_module(src: Path) -> None:
    findings = scan_pack(src)
    assert not findings, ("per-session state belongs on a class plugin's instance "
                          "(examples/pi-examples/README.md, \"No module state\"):\n" + "\n".join(findings))


CAUGHT = '''
import collections
from dataclasses import dataclass

@dataclass
class Counter:
    count: int = 0

@dataclass(frozen=True)
class Limits:
    most: int = 3

theme = None
SEEN = set()
BY_ID: dict = {}
QUEUE = collections.deque()
STATE = Counter()
LIMITS = Limits()

def start(ctx):
    global theme
    theme = ctx.ui.theme

def record(event):
    SEEN.add(event)
    BY_ID[event.id] = event
    QUEUE.appendleft(event)
    STATE.count += 1
    return LIMITS.most

class Plugin:
    calls = []

    def hook(self, event):
        self.calls.append(event)
'''

CLEAN = '''
import re
from dataclasses import dataclass, field

PATTERN = re.compile("x")
NAMES = ("a", "b")
DEFAULTS = {"a": 1}

@dataclass(frozen=True)
class Limits:
    most: int = 3

LIMITS = Limits()

@dataclass
class State:
    seen: set = field(default_factory=set)

class Plugin:
    def __init__(self):
        self.state = State()
        self.calls = []

    def hook(self, event, SEEN=None):
        self.calls.append(event)
        self.state.seen.add(event)
        DEFAULTS_COPY = dict(DEFAULTS)
        DEFAULTS_COPY["b"] = 2
        seen = set()
        seen.add(PATTERN.pattern)
        return LIMITS.most, NAMES
'''


def test_the_scan_catches_each_kind_of_module_state() -> None:
    findings = scan_source(CAUGHT, {"Counter"})
    assert [f.split(": ", 1)[1] for f in findings] == [
        "global theme in start",
        "module-level SEEN changed in record",
        "module-level BY_ID changed in record",
        "module-level QUEUE changed in record",
        "module-level STATE changed in record",
        "module-level instance STATE used in record",
        "class attribute Plugin.calls changed (one for all instances)",
    ]
    assert pack_classes([ast.parse(CAUGHT)]) == {"Counter", "Plugin"}  # Limits is frozen


def test_state_on_the_instance_and_constants_pass() -> None:
    assert scan_source(CLEAN, {"State", "Plugin"}) == []
