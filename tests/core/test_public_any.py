"""``Any`` in pi_core's public signatures only where the data is open, and each such place says so.

Public means: a name without a leading ``_`` (dunder methods such as ``__init__`` and ``__call__`` count: they are
the signature of the class), in a module and package without one, reached from the module through public classes
only. Checked are the annotations of functions and methods (arguments and return), of class-level fields
(dataclasses, pydantic models, TypedDicts, Protocol members), of module-level names, and public type aliases.

An annotation that contains ``Any`` passes when a comment with the marker ``# open:`` and a reason stands on one of
its lines or on the line just above it, e.g. ``payload: dict[str, Any],  # open: the provider's JSON request body``.
Everything else gets a real type: a record, a Protocol, ``object`` (anything, used without looking inside).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "pi_core"
MARKER = re.compile(r"#\s*open:\s*\S")
# Public annotations with Any and no marker, still to be typed or explained (issue 32.7): lower it as they go.
CEILING = 14


def public_modules() -> Iterator[Path]:
    for path in sorted(CORE.rglob("*.py")):
        parts = path.relative_to(CORE).parts
        if any(p.startswith("_") for p in parts[:-1]):
            continue
        if path.name.startswith("_") and path.name != "__init__.py":
            continue
        yield path


def is_public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def names_any(node: ast.expr) -> bool:
    """``Any`` anywhere in an annotation: ``Any``, ``typing.Any``, or inside a quoted (forward) annotation."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == "Any":
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "Any":
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            try:
                quoted = ast.parse(sub.value, mode="eval").body
            except SyntaxError:
                continue
            if names_any(quoted):
                return True
    return False


def annotations(tree: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    """(qualified name, annotation) for every public annotation of a module."""

    def function(prefix: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[str, ast.expr]]:
        a = node.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]:
            if arg.annotation is not None:
                yield f"{prefix}{node.name}({arg.arg})", arg.annotation
        if node.returns is not None:
            yield f"{prefix}{node.name} -> return", node.returns

    def body(prefix: str, statements: list[ast.stmt], in_class: bool) -> Iterator[tuple[str, ast.expr]]:
        for st in statements:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_public(st.name):
                if in_class or not st.name.startswith("__"):
                    yield from function(prefix, st)
            elif isinstance(st, ast.ClassDef) and not st.name.startswith("_"):
                yield from body(f"{prefix}{st.name}.", st.body, True)
            elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) \
                    and not st.target.id.startswith("_"):
                yield f"{prefix}{st.target.id}", st.annotation
                if isinstance(st.annotation, ast.Name) and st.annotation.id == "TypeAlias" and st.value is not None:
                    yield f"{prefix}{st.target.id} (alias)", st.value
            elif isinstance(st, ast.Assign) and not in_class and len(st.targets) == 1 \
                    and isinstance(st.targets[0], ast.Name) and not st.targets[0].id.startswith("_") \
                    and isinstance(st.value, (ast.Subscript, ast.BinOp)):
                yield f"{prefix}{st.targets[0].id} (alias)", st.value
            elif isinstance(st, ast.If):  # ``if TYPE_CHECKING:`` and version switches
                yield from body(prefix, st.body, in_class)
                yield from body(prefix, st.orelse, in_class)

    yield from body("", tree.body, False)


def marked_lines(source: str) -> tuple[set[int], set[int]]:
    """Lines carrying the marker, and those of them that hold nothing but the comment (they explain the next)."""
    marked, alone = set(), set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and MARKER.search(tok.string):
            marked.add(tok.start[0])
            if not tok.line[: tok.start[1]].strip():
                alone.add(tok.start[0])
    return marked, alone


def explained(node: ast.expr, marks: tuple[set[int], set[int]]) -> bool:
    marked, alone = marks
    return node.lineno - 1 in alone or bool(marked.intersection(range(node.lineno, (node.end_lineno or 0) + 1)))


def unexplained_any() -> list[str]:
    found = []
    for path in public_modules():
        source = path.read_text(encoding="utf-8")
        marks = marked_lines(source)
        for name, node in annotations(ast.parse(source)):
            if names_any(node) and not explained(node, marks):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {name}: {ast.unparse(node)}")
    return found


def test_any_in_a_public_signature_says_why_the_data_is_open() -> None:
    found = unexplained_any()
    assert len(found) <= CEILING, (
        f"{len(found)} public annotations use Any without a '# open: <why>' comment on the line or the line above "
        f"(ceiling {CEILING}); type them, or say why the data is open:\n" + "\n".join(found))


def test_the_checker_sees_unmarked_any_and_accepts_marked_any() -> None:
    source = (
        "from typing import Any\n"
        "def f(x: Any) -> None: ...\n"
        "def g(x: dict[str, Any]) -> None: ...  # open: JSON from the wire\n"
        "class C:\n"
        "    # open: a plugin's own data\n"
        "    data: Any\n"
        "    other: Any\n"
        "    field: 'list[Any]'\n"
        "    def _private(self, x: Any) -> Any: ...\n"
        "    def __init__(self, x: Any) -> None: ...\n"
        "class _Hidden:\n"
        "    y: Any\n"
        "Alias = dict[str, Any]\n"
    )
    marks = marked_lines(source)
    hits = [name for name, node in annotations(ast.parse(source)) if names_any(node) and not explained(node, marks)]
    assert hits == ["f(x)", "C.other", "C.field", "C.__init__(x)", "Alias (alias)"]
