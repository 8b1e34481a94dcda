"""pi_core.records.lazyclass.dataclass behaves as dataclasses.dataclass (issue 19: a print run stopped
building the dataclasses it never uses).

Differential: every class shape below is built twice, with the lazy decorator and with the standard one,
and the two classes are first touched in the same way (each way a lazy class can be processed: an
instance, ``fields()``, ``inspect.signature``, the docstring, a field's class attribute, ``cls.__new__``,
a subclass, ``==`` on a bare instance...). Then everything observable about the class and its instances
must be equal: fields, parameters, signature, docstring, the class dict's names in order, repr, equality,
hash, ordering, frozen assignment, ``replace``/``asdict``/``astuple``, copies, pattern matching, errors.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import operator
import re
import subprocess
import sys
import threading
import types
import typing
from collections.abc import Callable
from dataclasses import KW_ONLY, Field, InitVar, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pi_core.records import lazyclass
from pi_core.records.lazyclass import is_pending

LAZY = lazyclass.dataclass
EAGER = dataclasses.dataclass
Deco = Callable[..., Any]
Samples = list[tuple[tuple[Any, ...], dict[str, Any]]]


def _text(value: Any) -> str:
    """A description of a value that is equal for equal behaviour (no addresses)."""
    if isinstance(value, types.FunctionType):
        return f"function {value.__qualname__}"
    if isinstance(value, Field):
        return f"Field({value.name})"
    if value is None or isinstance(value, (str, int, float, bool, tuple, frozenset)):
        return repr(value)
    return type(value).__name__


ERRORS = (TypeError, ValueError, AttributeError)  # what dataclasses and the classes here raise


def _try(action: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    try:
        value = action(*args, **kwargs)
    except ERRORS as error:  # the error's type and text are part of the behaviour
        return f"{type(error).__name__}: {error}"
    return _unplaced(value if isinstance(value, str) else _text(value))


def _unplaced(text: str) -> str:
    return re.sub(r" at 0x[0-9a-f]+>", " at 0x...>", text)  # object.__repr__ shows the address


def _match(cls: type, obj: Any) -> str:
    """What class patterns with 2, 1 and 0 positional sub-patterns make of ``obj`` (``__match_args__``)."""
    out = []
    try:
        match obj:
            case cls(a, b):
                out.append(f"two {a!r} {b!r}")
    except TypeError as error:
        out.append(str(error))
    try:
        match obj:
            case cls(a):
                out.append(f"one {a!r}")
    except TypeError as error:
        out.append(str(error))
    match obj:
        case cls():
            out.append("none")
    return " | ".join(out)


def _class_view(cls: type) -> list[str]:
    out = [f"dataclass {dataclasses.is_dataclass(cls)}"]
    for f in dataclasses.fields(cls):
        factory = f.default_factory
        out.append(f"field {f.name} {f.type!r} default={_text(f.default)} "
                   f"factory={getattr(factory, '__qualname__', _text(factory))} init={f.init} repr={f.repr} "
                   f"hash={f.hash} compare={f.compare} kw_only={f.kw_only} metadata={dict(f.metadata)} "
                   f"kind={f._field_type}")  # type: ignore[attr-defined]
    out.append(f"all fields {list(cls.__dataclass_fields__)}")  # type: ignore[attr-defined]
    out.append(f"params {cls.__dataclass_params__!r}")  # type: ignore[attr-defined]
    out.append(f"signature {_try(lambda: str(inspect.signature(cls)))}")
    out.append(f"doc {cls.__doc__!r}")
    out.append(f"match_args {getattr(cls, '__match_args__', None)!r}")
    out.append(f"hash attr {_text(cls.__hash__)}")
    out.append(f"dict {[(name, _text(value)) for name, value in vars(cls).items()]}")
    for f in dataclasses.fields(cls):
        out.append(f"class attr {f.name} {_text(getattr(cls, f.name, '<absent>'))}")
    return out


def _compare(obj: Any, other: Any) -> tuple[bool, bool, bool, bool]:
    return obj < other, obj <= other, obj > other, obj >= other


def _object_view(cls: type, obj: Any, twin: Any, others: list[Any]) -> list[str]:
    out = [f"repr {obj!r}", f"str {obj}", f"eq {obj == twin} ne {obj != twin} self {operator.eq(obj, obj)}",
           f"hash {_try(lambda: hash(obj) == hash(twin))}",
           f"vars {sorted(vars(obj))}",
           f"asdict {_try(lambda: repr(dataclasses.asdict(obj)))}",
           f"astuple {_try(lambda: repr(dataclasses.astuple(obj)))}",
           f"replace {_try(lambda: repr(dataclasses.replace(obj)))}",
           f"copy {copy.copy(obj)!r} {copy.copy(obj) == obj}",
           f"deepcopy {copy.deepcopy(obj)!r} {copy.deepcopy(obj) == obj}",
           f"match {_match(cls, obj)}"]
    for name in [f.name for f in dataclasses.fields(cls)][:2]:
        out.append(f"set {name} {_try(setattr, copy.copy(obj), name, 7)}")
        out.append(f"del {name} {_try(delattr, copy.copy(obj), name)}")
    out.append(f"set new attribute {_try(setattr, copy.copy(obj), 'other', 1)}")
    out += [f"order {_try(_compare, obj, other)}" for other in others]
    return out


def _instance_view(cls: type, samples: Samples) -> list[str]:
    out: list[str] = []
    made = []
    for args, kwargs in samples:
        built = _try(cls, *args, **kwargs)
        out.append(f"new {built}")
        if not built.startswith(tuple(e.__name__ for e in ERRORS)):
            made.append((cls(*args, **kwargs), cls(*args, **kwargs)))
    for obj, twin in made:
        out += _object_view(cls, obj, twin, [other for other, _twin in made])
    return [_unplaced(line) for line in out]


def _touch_bare(cls: type) -> str:
    bare = object.__new__(cls)
    return f"{_try(repr, bare)} {_try(operator.eq, bare, bare)} {_try(lambda: hash(bare) is not None)}"


def _annotations(cls: type) -> dict[str, Any]:
    return inspect.get_annotations(cls)  # read, never created (``cls.__annotations__`` adds it to the class)


def _touch_setstate(cls: type) -> str:
    """As unpickling does: ``cls.__new__``, then the state through ``__setstate__`` when there is one."""
    bare = cls.__new__(cls)
    state = {name: i for i, name in enumerate(_annotations(cls))}
    setstate = getattr(bare, "__setstate__", None)
    if setstate is not None:
        setstate(state)
    else:
        bare.__dict__.update(state)
    return _try(lambda: repr(bare))


def _touch_subclass(cls: type, samples: Samples) -> str:
    sub = type("Plain", (cls,), {"__module__": cls.__module__})
    args, kwargs = samples[0]
    return _try(lambda: repr(sub(*args, **kwargs)))


# Ways a class can be used first, each applied to a fresh lazy class and its eager twin.
FIRST_TOUCH: dict[str, Callable[[type, Samples], str]] = {
    "instance": lambda cls, samples: _try(lambda: repr(cls(*samples[0][0], **samples[0][1]))),
    "fields": lambda cls, samples: repr([f.name for f in dataclasses.fields(cls)]),
    "is_dataclass": lambda cls, samples: repr(dataclasses.is_dataclass(cls)),
    "signature": lambda cls, samples: _try(lambda: str(inspect.signature(cls))),
    "doc": lambda cls, samples: repr(cls.__doc__),
    "init attribute": lambda cls, samples: _text(cls.__init__),
    "class attributes": lambda cls, samples: repr([_text(getattr(cls, n, "<absent>"))
                                                   for n in _annotations(cls)]),
    "new then state": lambda cls, samples: _touch_setstate(cls),
    "bare instance": lambda cls, samples: _touch_bare(cls),
    "plain subclass": _touch_subclass,
    "hash attribute": lambda cls, samples: _text(cls.__hash__),
}


def _noop_base(dc: Deco) -> type:
    @dc
    class Base:
        a: int
        b: str = "b"
    return Base


def shape_plain(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc
    class Point:
        x: int
        y: int = 0
    return Point, [((1,), {}), ((1, 2), {}), ((), {"x": 3, "y": 4})]


def shape_factory(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc
    class Bag:
        """A bag."""
        name: str
        items: list[int] = field(default_factory=list)
        tags: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
        note: str = field(default="n", metadata={"k": 1})
        hidden: int = field(default=5, init=False)
    return Bag, [(("a",), {}), (("b", [1, 2]), {"note": "x"})]


def shape_frozen(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc(frozen=True)
    class Key:
        kind: str
        size: int = 1
        extra: tuple[int, ...] = field(default=(), hash=False)
    return Key, [(("k",), {}), (("k", 2, (1,)), {})]


def shape_order(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc(order=True, frozen=True)
    class Version:
        major: int
        minor: int = 0
    return Version, [((1,), {}), ((1, 2), {}), ((0, 9), {})]


def shape_unsafe_hash(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc(unsafe_hash=True)
    class Tagged:
        tag: str
        weight: float = field(default=1.0, compare=False)
    return Tagged, [(("t",), {}), (("t", 2.0), {})]


def shape_eq_false(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc(eq=False, repr=False, match_args=False)
    class Handle:
        fd: int
    return Handle, [((3,), {})]


def shape_init_false(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc(init=False)
    class Manual:
        value: int = 0
        def __init__(self, raw: str) -> None:
            self.value = int(raw)
    return Manual, [(("4",), {}), ((), {})]


def shape_custom_dunders(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc
    class Custom:
        a: int
        def __repr__(self) -> str:
            return f"<custom {self.a}>"
        def __eq__(self, other: object) -> bool:
            return isinstance(other, Custom) and other.a % 10 == self.a % 10
    return Custom, [((1,), {}), ((11,), {})]


def shape_explicit_hash(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc
    class Hashed:
        a: int
        def __hash__(self) -> int:
            return 7
    return Hashed, [((1,), {})]


def shape_hash_none(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc(frozen=True)
    class NoHash:
        a: int
        __hash__ = None  # type: ignore[assignment]
    return NoHash, [((1,), {})]


def shape_kw_only(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc(kw_only=True)
    class Options:
        path: str
        mode: str = "r"
    return Options, [((), {"path": "p"}), ((), {"path": "q", "mode": "w"}), (("p",), {})]


def shape_kw_only_marker(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc
    class Call:
        name: str
        _: KW_ONLY
        timeout: float = 1.0
        retries: int = field(default=0, kw_only=False)
    return Call, [(("c",), {}), (("c", 3), {"timeout": 2.0})]


def shape_post_init(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc
    class Span:
        start: int
        end: int = 0
        scale: InitVar[int] = 1
        length: int = field(init=False, default=0)
        seen: ClassVar[tuple[int, ...]] = ()
        def __post_init__(self, scale: int) -> None:
            self.length = (self.end - self.start) * scale
            if self.end < self.start:
                raise ValueError(f"end {self.end} is before start {self.start}")
    return Span, [((1, 4), {}), ((1, 4, 2), {}), ((5, 1), {})]


def shape_self_field(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc
    class Odd:
        self: int
        other: str = "o"
    return Odd, [((1,), {})]


def shape_empty(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @dc
    class Empty:
        pass
    return Empty, [((), {}), ((1,), {})]


def shape_descriptor_default(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    class Default:
        def __get__(self, obj: Any, owner: Any = None) -> int:
            return 42
    @dc
    class WithDescriptor:
        value: int = Default()  # type: ignore[assignment]
    return WithDescriptor, [((), {}), ((1,), {})]


def shape_lazy_on_base(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    Base = _noop_base(base_dc)
    @dc
    class Child(Base):  # type: ignore[valid-type, misc]
        c: list[int] = field(default_factory=list)
        b: str = "override"
    return Child, [((1,), {}), ((1, "x", [2]), {})]


def shape_plain_between(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    Base = _noop_base(base_dc)
    class Middle(Base):  # type: ignore[valid-type, misc]
        def total(self) -> int:
            return 1
    @dc
    class Leaf(Middle):
        d: int = 4
    return Leaf, [((1,), {}), ((1, "y", 5), {})]


def shape_frozen_chain(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    @base_dc(frozen=True)
    class Root:
        a: int
    @dc(frozen=True)
    class Branch(Root):
        b: int = 2
    return Branch, [((1,), {}), ((1, 3), {})]


def shape_mixin_super(dc: Deco, base_dc: Deco) -> tuple[type, Samples]:
    Base = _noop_base(base_dc)
    class Mixin:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.mixed = True
            super().__init__(*args, **kwargs)
    @dc
    class Both(Mixin, Base):  # type: ignore[valid-type, misc]
        e: int = 5
    return Both, [((1,), {})]


SHAPES: dict[str, Callable[[Deco, Deco], tuple[type, Samples]]] = {
    name.removeprefix("shape_"): value for name, value in globals().items() if name.startswith("shape_")}
# (decorator of the class, decorator of its base): lazy on lazy, eager on lazy, lazy on eager.
PAIRS = {"lazy/lazy": (LAZY, LAZY), "eager/lazy": (EAGER, LAZY), "lazy/eager": (LAZY, EAGER)}
BUILT_AT_ONCE = ("hash_none",)  # lazyclass keeps an explicit ``__hash__ = None`` eager (see _eager)
BASED = ("lazy_on_base", "plain_between", "frozen_chain", "mixin_super")


def _cases() -> list[tuple[str, str, str]]:
    return [(shape, pair, touch) for shape in SHAPES for pair in (PAIRS if shape in BASED else ["lazy/lazy"])
            for touch in FIRST_TOUCH]


@pytest.mark.parametrize(("shape", "pair", "touch"), _cases())
def test_a_lazy_class_behaves_as_the_eager_one(shape: str, pair: str, touch: str) -> None:
    sub_dc, base_dc = PAIRS[pair]
    lazy, samples = SHAPES[shape](sub_dc, base_dc)
    eager, _ = SHAPES[shape](EAGER, EAGER)
    if sub_dc is LAZY:
        assert is_pending(lazy) is (shape not in BUILT_AT_ONCE), "nothing was processed at definition"
    first = FIRST_TOUCH[touch]
    assert first(lazy, samples) == first(eager, samples)
    assert _instance_view(lazy, samples) == _instance_view(eager, samples)
    assert not is_pending(lazy)
    # After repr, ==, hash and the docstring were used (a method is built on its first use; until then the
    # class dict holds its builder in the method's place).
    assert _class_view(lazy) == _class_view(eager)


def test_the_lazy_decorator_only_puts_stand_ins_and_processes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[type] = []
    process = lazyclass._PROCESS_CLASS
    assert process is not None, "this Python's dataclasses is one lazyclass supports"

    def counted(cls: type, *params: bool) -> Any:
        calls.append(cls)
        return process(cls, *params)

    monkeypatch.setattr(lazyclass, "_PROCESS_CLASS", counted)
    Point, _samples = shape_factory(LAZY, LAZY)
    assert calls == [] and is_pending(Point)
    Point("a")
    Point("b")
    dataclasses.fields(Point)
    assert calls == [Point]
    if lazyclass._SPLIT:  # 3.11: repr, == and the docstring are compiled on their own first use
        assert not isinstance(vars(Point)["__repr__"], types.FunctionType)
        assert repr(Point("a")) == "shape_factory.<locals>.Bag(name='a', items=[], note='n', hidden=5)"
        assert isinstance(vars(Point)["__repr__"], types.FunctionType)
        assert not isinstance(vars(Point)["__eq__"], types.FunctionType)


EAGER_SHAPES = {
    "slots": lambda: LAZY(slots=True)(type("S", (), {"__annotations__": {"a": "int"}})),
    "weakref slot": lambda: LAZY(slots=True, weakref_slot=True)(type("W", (), {"__annotations__": {"a": "int"}})),
    "abc": lambda: LAZY(type("A", (__import__("abc").ABC,), {"__annotations__": {"a": "int"}})),
}


@pytest.mark.parametrize("name", EAGER_SHAPES)
def test_classes_processing_would_replace_or_rework_are_built_at_once(name: str) -> None:
    cls = EAGER_SHAPES[name]()
    assert not is_pending(cls)
    assert "__dataclass_fields__" in vars(cls) and isinstance(vars(cls)["__init__"], types.FunctionType)


def _bad_mutable(dc: Deco) -> type:
    @dc
    class Bad:
        items: list[int] = []  # noqa: RUF012  (the mistake under test)
    return Bad


def _bad_order(dc: Deco) -> type:
    @dc
    class Bad:
        a: int = 0
        b: int  # type: ignore[misc]
    return Bad


def _bad_frozen_inheritance(dc: Deco) -> type:
    @dc(frozen=True)
    class Root:
        a: int
    @dc
    class Bad(Root):
        b: int = 0
    return Bad


def _bad_field_without_annotation(dc: Deco) -> type:
    @dc
    class Bad:
        a = field(default=1)
    return Bad


def _bad_order_without_eq(dc: Deco) -> type:
    @dc(order=True, eq=False)
    class Bad:
        a: int
    return Bad


def _bad_frozen_setattr(dc: Deco) -> type:
    @dc(frozen=True)
    class Bad:
        a: int
        def __setattr__(self, name: str, value: Any) -> None:
            pass
    return Bad


BAD = {name.removeprefix("_bad_"): value for name, value in globals().items() if name.startswith("_bad_")}
AT_DEFINITION = ("order_without_eq", "frozen_setattr")  # rejected on the parameters: at definition, as eagerly


@pytest.mark.parametrize("name", BAD)
def test_a_class_dataclasses_rejects_raises_the_same_error(name: str) -> None:
    with pytest.raises((TypeError, ValueError)) as eager:
        BAD[name](EAGER)
    if name in AT_DEFINITION:
        with pytest.raises(type(eager.value), match="^" + re.escape(str(eager.value)) + "$"):
            BAD[name](LAZY)
        return
    cls = BAD[name](LAZY)  # a field error: raised at first use, and at every use after it
    for _ in range(2):
        with pytest.raises(type(eager.value)) as lazy:
            cls(1)
        assert str(lazy.value) == str(eager.value)


def _names(value: Any) -> Any:
    return [f.name for f in value] if isinstance(value, tuple) else value


def _touch_together(cls: type, touches: list[Callable[[type], Any]]) -> list[Any]:
    """Each touch in its own thread, all released at once."""
    results: dict[int, Any] = {}
    barrier = threading.Barrier(len(touches))

    def run(i: int) -> None:
        barrier.wait()
        results[i] = _names(touches[i](cls))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(touches))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [results.get(i, "<raised>") for i in range(len(touches))]


def test_threads_touching_a_new_class_at_once_all_see_it_processed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[type] = []
    process = lazyclass._PROCESS_CLASS
    assert process is not None

    def counted(cls: type, *params: bool) -> Any:
        calls.append(cls)
        return process(cls, *params)

    monkeypatch.setattr(lazyclass, "_PROCESS_CLASS", counted)
    touches: list[Callable[[type], Any]] = [
        lambda cls: repr(cls("t", [1])), lambda cls: cls("t") == cls("t"), lambda cls: dataclasses.fields(cls),
        lambda cls: str(inspect.signature(cls)), lambda cls: cls.__doc__, lambda cls: cls.note,
        lambda cls: repr(copy.copy(cls("t"))), lambda cls: cls("u", hidden=1),
    ]
    for _round in range(40):
        Bag, _samples = shape_factory(LAZY, LAZY)
        Twin, _ = shape_factory(EAGER, EAGER)
        expected = [_names(_try(touch, Twin)) if i == len(touches) - 1 else _names(touch(Twin))
                    for i, touch in enumerate(touches)]
        assert _touch_together(Bag, touches[:-1]) == expected[:-1]
        assert _try(touches[-1], Bag) == expected[-1]
        assert _class_view(Bag) == _class_view(Twin)
    assert len(calls) == 40 and len(set(calls)) == 40, "each class was processed once"


SHAPES_MODULE = """\
import dataclasses
import os
from dataclasses import field

from pi_core.records.lazyclass import dataclass as lazy

dc = dataclasses.dataclass if os.environ.get("SHAPES_EAGER") else lazy


@dc(frozen=True)
class Key:
    kind: str
    size: int = 1


@dc
class Bag:
    name: str
    items: list = field(default_factory=list)


@dc
class Empty:
    pass


@dc(order=True)
class Child(Bag):
    rank: int = 0


def samples():
    return [Key("k", 2), Bag("b", [Key("x")]), Empty(), Child("c", [], 3)]
"""

PROBE = """\
import json, pickle, sys
import shapes
from pi_core.records.lazyclass import is_pending

mode = sys.argv[1]
if mode == "dump":
    blobs = [pickle.dumps(shapes.samples(), protocol=p).hex() for p in range(pickle.HIGHEST_PROTOCOL + 1)]
    print(json.dumps(blobs))
else:
    classes = (shapes.Key, shapes.Bag, shapes.Empty, shapes.Child)
    out = {"pending before": [is_pending(c) for c in classes]}
    loaded = [pickle.loads(bytes.fromhex(blob)) for blob in json.loads(sys.stdin.read())]
    out["pending after"] = [is_pending(c) for c in classes]
    fresh = shapes.samples()
    out["loaded"] = [[repr(o), o == f, hash(o) == hash(f) if o.__hash__ else None, list(vars(o))]
                     for objects in loaded for o, f in zip(objects, fresh)]
    out["order"] = loaded[0][3] < shapes.Child("c", [], 4)
    print(json.dumps(out))
"""


def test_pickles_load_in_a_fresh_process_as_with_the_eager_decorator(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES_MODULE)
    (tmp_path / "probe.py").write_text(PROBE)
    seen = {}
    for mode in ("lazy", "eager"):
        env = {"PYTHONPATH": str(tmp_path), **({"SHAPES_EAGER": "1"} if mode == "eager" else {})}
        run = [sys.executable, str(tmp_path / "probe.py")]
        dumped = subprocess.run([*run, "dump"], capture_output=True, text=True, env=env, check=True, timeout=60)
        loaded = subprocess.run([*run, "load"], input=dumped.stdout, capture_output=True, text=True, env=env,
                                check=True, timeout=60)
        seen[mode] = json.loads(loaded.stdout)
    assert seen["lazy"]["pending before"] == [True] * 4, "a fresh process has built nothing"
    assert seen["eager"]["pending before"] == [False] * 4
    # Unpickling set the state through __setstate__ and processed the class; Empty() has no state to set, so
    # its class waits for the first use (the == below).
    assert seen["lazy"]["pending after"] == [False, False, True, False]
    assert seen["lazy"]["loaded"] == seen["eager"]["loaded"]
    assert seen["lazy"]["order"] is seen["eager"]["order"] is True


def test_the_decorator_keeps_dataclasses_signature_and_typing() -> None:
    ours = inspect.signature(LAZY)
    theirs = inspect.signature(EAGER)
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()]
    first = typing.get_overloads(LAZY)[0]  # mypy reads dataclass_transform there (see the mypy test below)
    assert first.__dataclass_transform__["field_specifiers"] == (dataclasses.field, Field)
    assert lazyclass.field is dataclasses.field


REPO = Path(__file__).resolve().parents[2]

EVERY_CLASS = """\
import dataclasses, importlib, json, sys
from pi_core.records.lazyclass import is_pending

seen = {"pending": 0, "failed": []}
for name in json.loads(sys.argv[1]):
    module = importlib.import_module(name)
    for value in list(vars(module).values()):
        if isinstance(value, type) and value.__module__ == name and is_pending(value):
            seen["pending"] += 1
            try:
                dataclasses.fields(value)
                value.__init__
            except Exception as error:
                seen["failed"].append(f"{name}.{value.__qualname__}: {type(error).__name__}: {error}")
            if is_pending(value) or "__setstate__" in vars(value):
                seen["failed"].append(f"{name}.{value.__qualname__}: stand-ins left")
print(json.dumps(seen))
"""


def _lazy_modules() -> list[str]:
    names = []
    packages = {"pi_core": "pi_core", "plugins": "pi_plugins", "builtin_tools": "pi_builtin_tools"}
    for folder, package in packages.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            if "from pi_core.records.lazyclass import" in path.read_text(encoding="utf-8"):
                parts = [package, *path.relative_to(REPO / folder).with_suffix("").parts]
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_lazy_dataclass_of_pi_processes() -> None:
    """dataclasses raises a field error at first use, not at import: process every one of pi's here."""
    modules = _lazy_modules()
    assert len(modules) > 50
    done = subprocess.run([sys.executable, "-c", EVERY_CLASS, json.dumps(modules)], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["failed"] == []
    assert seen["pending"] > 100


TYPED = """\
from dataclasses import replace

from pi_core.records.lazyclass import dataclass, field


@dataclass(frozen=True)
class Key:
    kind: str
    tags: list[int] = field(default_factory=list)


@dataclass
class Point:
    x: int


key = Key("k", [1])
replace(key, kind="j")
Key(1)
key.kind = "j"
Point(1, 2)
"""


def test_mypy_checks_the_fields_and_calls_of_a_lazy_class(tmp_path: Path) -> None:
    (tmp_path / "typed.py").write_text(TYPED)
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--cache-dir",
                           str(tmp_path / "cache"), "typed.py"], capture_output=True, text=True, cwd=tmp_path,
                          env={"MYPYPATH": str(REPO), "PATH": "/usr/bin:/bin"}, check=False, timeout=120)
    errors = [line.split(": error: ")[1] for line in done.stdout.splitlines() if ": error: " in line]
    assert errors == [
        'Argument 1 to "Key" has incompatible type "int"; expected "str"  [arg-type]',
        'Property "kind" defined in "Key" is read-only  [misc]',
        'Too many arguments for "Point"  [call-arg]',
    ], done.stdout
