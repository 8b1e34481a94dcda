"""``dataclass``, processed on first use: a drop-in for ``dataclasses.dataclass`` that builds a class's
methods the first time anything needs them instead of at import.

Building a dataclass (``dataclasses._process_class``: the fields, ``exec`` of the generated methods, the
docstring's ``inspect.signature``) costs about half a millisecond; a ``pi -p`` run defined 135 of them and
never instantiated 85 (issue 19). Here the decorator only puts stand-ins on the class, under the names
dataclasses would set, and those stand-ins process the class the first time one of them is looked up:

- constructing an instance (``__init__``), or its ``repr``, ``==``, ordering, ``hash``, frozen assignment;
- ``__dataclass_fields__`` (``fields``, ``is_dataclass``, ``asdict``, ``replace``, a dataclass subclass);
- the class's ``__doc__`` and ``inspect.signature`` (through ``__init__``);
- a field's class attribute given as ``field(default=...)``;
- ``__setstate__``: an instance unpickled or copied without ``__init__`` (``cls.__new__``) is processed
  before its state is set.

Processing is dataclasses' own, so the result is the eagerly built class (same methods, attributes and
attribute order). It runs once, under a lock: another thread touching a stand-in meanwhile waits for it, and
dataclasses replaces each stand-in in one step, so an instance being built in another thread never falls
through to ``object.__init__``. A subclass processes its bases first (dataclasses reads their
``__dataclass_fields__``).

On 3.11, processing itself is split: dataclasses runs without ``repr`` and ``eq`` (it compiles ``__init__``
only), and ``__repr__``, ``__eq__``, the ``__hash__`` dataclasses would generate and a missing docstring are
each built by dataclasses' own builders on their own first lookup (the class dict holds the builder in the
method's place until then; ``__dataclass_params__`` says ``repr``/``eq`` as given). A class used only to hold
values pays for one compiled method. With ``order`` or ``unsafe_hash``, or on 3.12, processing is whole (its
``__hash__`` stand-in is removed first there: dataclasses must find the class without one).

Eager, exactly as ``dataclasses.dataclass``: ``slots=True``/``weakref_slot`` (a new class is returned),
classes with a metaclass other than ``type`` (ABCs: abstract methods are recomputed by processing), an explicit
``__hash__ = None`` without ``__eq__`` (a stand-in ``__eq__`` would change dataclasses' hash rule), class
definitions dataclasses rejects on its parameters alone (so the error is raised at definition), and Python
versions whose dataclasses this module has not been checked against.

The one difference: a field error dataclasses finds while processing (a mutable default, a field without a
default after one with a default) is raised at first use rather than at import.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import types
from _thread import RLock, get_ident
from collections.abc import Callable
from dataclasses import Field, field, replace
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["dataclass", "field", "is_pending", "replace"]  # field and replace: dataclasses' own

_T = TypeVar("_T")
_ABSENT: Any = object()
_LOCK = RLock()
_DATACLASSES: Any = dataclasses  # its private helpers, which typeshed does not declare

# The names dataclasses may set on a class, in the order it sets them (a processed class's __dict__ order
# is the eager one's). __match_args__ gets no stand-in: matching needs an instance, which needs __init__.
_ORDER = ("__lt__", "__le__", "__gt__", "__ge__")
_FROZEN = ("__setattr__", "__delattr__")


class _Pending:
    """A class waiting to be processed, with dataclasses' parameters for it."""

    __slots__ = ("cls", "done", "error", "explicit_hash", "hash_stand_in", "names", "params", "split", "thread")

    def __init__(self, cls: type, params: tuple[bool, ...], explicit_hash: bool) -> None:
        self.cls = cls
        self.params = params
        self.explicit_hash = explicit_hash  # dataclasses' has_explicit_hash, read before any stand-in
        self.names: list[str] = []
        self.thread: int | None = None
        self.done = False
        self.error: BaseException | None = None
        self.hash_stand_in = False
        # __repr__, __eq__, __hash__ and the docstring built on their own first use (see _split_off)
        self.split = _SPLIT and not params[3] and not params[4]  # not with order or unsafe_hash


class _StandIn:
    """Under a name dataclasses sets: processes the class when looked up, then answers as the processed
    class does. While this thread processes the class, it answers as the unprocessed class did (dataclasses
    reads a field's ``field()`` object and the ``__doc__`` through it)."""

    __slots__ = ("name", "original", "pending")

    def __init__(self, pending: _Pending, name: str, original: Any) -> None:
        self.pending = pending
        self.name = name
        self.original = original

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        pending = self.pending
        if owner is None:
            owner = type(obj)
        if not _realize(pending):
            if self.name == "__doc__" and pending.split:
                return _LATER  # dataclasses builds no docstring: _split_off defers it
            if self.original is not _ABSENT:
                return self.original
            return _lookup(owner, pending.cls, self.name, obj, skip=1)
        return _lookup(owner, pending.cls, self.name, obj, skip=0)


class _Later:
    """A method (or the docstring) of a processed class, made by ``make`` on its first lookup."""

    __slots__ = ("cls", "make", "name")

    def __init__(self, cls: type, name: str, make: Callable[[], Any]) -> None:
        self.cls = cls
        self.name = name
        self.make = make

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        cls = self.cls
        with _LOCK:
            if cls.__dict__.get(self.name) is self:
                setattr(cls, self.name, self.make())
        return _lookup(type(obj) if owner is None else owner, cls, self.name, obj, skip=0)


def _lookup(owner: type, cls: type, name: str, obj: Any, skip: int) -> Any:
    """``name`` as attribute lookup finds it from ``cls`` on along ``owner``'s MRO (``skip=1``: past ``cls``)."""
    mro = owner.__mro__
    for klass in mro[mro.index(cls) + skip:]:
        if name in klass.__dict__:
            value = klass.__dict__[name]
            get = getattr(type(value), "__get__", None)
            return value if get is None else get(value, obj, owner)
    if obj is None:
        raise AttributeError(f"type object {owner.__name__!r} has no attribute {name!r}")
    raise AttributeError(f"{owner.__name__!r} object has no attribute {name!r}")


def _realize(pending: _Pending) -> bool:
    """Process ``pending``'s class unless done; False when this thread is processing it right now."""
    if pending.done:
        return True
    with _LOCK:
        if pending.done:
            return True
        if pending.error is not None:
            raise pending.error
        if pending.thread is not None:  # the lock is held, so by this very thread
            return False
        pending.thread = get_ident()
        try:
            _process(pending)
        except BaseException as error:
            pending.error = error
            raise
        finally:
            pending.thread = None
        pending.done = True
        return True


def _process(pending: _Pending) -> None:
    cls = pending.cls
    params = pending.params
    if pending.split:
        # Without repr and eq dataclasses compiles only __init__ and decides no __hash__ (so the __hash__
        # stand-in may stay); _split_off puts the rest in place.
        params = (params[0], False, False, *params[3:])
    elif pending.hash_stand_in:
        # dataclasses decides about __hash__ from the class dict's own entry: it must see none.
        delattr(cls, "__hash__")
    assert _PROCESS_CLASS is not None
    _PROCESS_CLASS(cls, *params)
    if pending.split:
        _split_off(pending)
    for name in pending.names:
        held = cls.__dict__.get(name)
        if type(held) is _StandIn and held.pending is pending:
            if name != "__setstate__":
                raise RuntimeError(f"lazyclass: dataclasses did not set {name} on {cls.__qualname__}")
            delattr(cls, name)


def _split_off(pending: _Pending) -> None:
    """After dataclasses processed the class without repr and eq: what it would have added, each built on
    its own first use, with dataclasses' own builders and in the class dict's places the eager class has."""
    cls = pending.cls
    _init, repr_, eq, _order, _unsafe_hash, frozen = pending.params[:6]
    dc = _DATACLASSES
    own = cls.__dict__
    own["__dataclass_params__"].repr = repr_
    own["__dataclass_params__"].eq = eq
    fields = [f for f in own["__dataclass_fields__"].values() if f._field_type is dc._FIELD]
    module = sys.modules.get(cls.__module__)
    namespace = vars(module) if module is not None else {}

    def later(method: _Later) -> None:  # in the stand-in's place in the class dict
        type.__setattr__(cls, method.name, method)

    def stand_in(name: str) -> bool:
        held = own.get(name)
        return type(held) is _StandIn and held.pending is pending

    if repr_ and stand_in("__repr__"):
        shown = [f for f in fields if f.repr]
        later(_Later(cls, "__repr__", lambda: dc._set_qualname(cls, dc._repr_fn(shown, namespace))))
    if eq and stand_in("__eq__"):
        compared = [f for f in fields if f.compare]

        def make_eq() -> Any:
            mine, theirs = dc._tuple_str("self", compared), dc._tuple_str("other", compared)
            return dc._set_qualname(cls, dc._cmp_fn("__eq__", "==", mine, theirs, globals=namespace))

        later(_Later(cls, "__eq__", make_eq))
    action = dc._hash_action[False, bool(eq), bool(frozen), pending.explicit_hash]
    if action is dc._hash_add:
        later(_Later(cls, "__hash__", lambda: action(cls, fields, namespace)))
    elif action is not None:
        type.__setattr__(cls, "__hash__", action(cls, fields, namespace))  # None (_hash_set_none)
    elif stand_in("__hash__"):
        delattr(cls, "__hash__")
    if stand_in("__doc__"):  # dataclasses saw _LATER there; the check and the text are its own (3.11)
        def make_doc() -> str:
            try:
                text_sig = str(inspect.signature(cls)).replace(" -> None", "")
            except (TypeError, ValueError):
                text_sig = ""
            return cls.__name__ + text_sig

        later(_Later(cls, "__doc__", make_doc))


def _set_new_attribute(cls: type, name: str, value: Any) -> bool:
    """dataclasses' own, except that a stand-in of the class is replaced in place (one step, so no other
    thread sees the name missing in between)."""
    held = cls.__dict__.get(name)
    if type(held) is _StandIn and held.pending.cls is cls:
        _DATACLASSES._set_qualname(cls, value)
        setattr(cls, name, value)
        return False
    result: bool = _DATACLASSES._set_new_attribute(cls, name, value)
    return result


def _processor() -> Callable[..., Any] | None:
    """dataclasses' ``_process_class`` reading our ``_set_new_attribute``: a copy of the function with its
    own globals, so dataclasses itself is not changed for anyone. Checked on 3.11 and 3.12 (3.13 builds the
    methods elsewhere): on other versions the decorator is eager."""
    original = getattr(dataclasses, "_process_class", None)
    if not (3, 11) <= sys.version_info[:2] <= (3, 12) or not isinstance(original, types.FunctionType) \
            or "_set_new_attribute" not in original.__code__.co_names \
            or not all(callable(getattr(dataclasses, name, None)) for name in ("_set_new_attribute", "_set_qualname")):
        return None
    namespace = dict(vars(dataclasses))
    namespace["_set_new_attribute"] = _set_new_attribute
    return types.FunctionType(original.__code__, namespace, original.__name__, original.__defaults__,
                              original.__closure__)


_PROCESS_CLASS = _processor()
# The builders _split_off calls (_repr_fn, _cmp_fn, _tuple_str, _hash_action) have these signatures in 3.11.
_SPLIT = _PROCESS_CLASS is not None and sys.version_info[:2] == (3, 11)
_LATER = "(built on first use)"


def _eager(cls: type, params: tuple[bool, ...]) -> bool:
    """Whether ``cls`` is built at once: what processing would change beyond the stand-ins' names, or
    reject on the parameters alone."""
    _init, _repr, eq, order, unsafe_hash, frozen, _match_args, _kw_only, slots, weakref_slot = params
    own = cls.__dict__
    if _PROCESS_CLASS is None or slots or weakref_slot or type(cls) is not type or "__dataclass_fields__" in own:
        return True
    if order and (not eq or any(name in own for name in _ORDER)):
        return True
    if frozen and any(name in own for name in _FROZEN):
        return True
    class_hash = own.get("__hash__", _ABSENT)
    explicit_hash = not (class_hash is _ABSENT or (class_hash is None and "__eq__" in own))
    if unsafe_hash and explicit_hash:
        return True
    # A stand-in __eq__ would turn an explicit ``__hash__ = None`` into the implicit one for dataclasses.
    return eq and class_hash is None and "__eq__" not in own


def _defer(cls: type, params: tuple[bool, ...]) -> type:
    if _eager(cls, params):
        init, repr_, eq, order, unsafe_hash, frozen, match_args, kw_only, slots, weakref_slot = params
        return dataclasses.dataclass(cls, init=init, repr=repr_, eq=eq, order=order, unsafe_hash=unsafe_hash,
                                     frozen=frozen, match_args=match_args, kw_only=kw_only, slots=slots,
                                     weakref_slot=weakref_slot)
    init, repr_, eq, order, _unsafe_hash, frozen = params[:6]
    own = cls.__dict__
    class_hash = own.get("__hash__", _ABSENT)
    pending = _Pending(cls, params, not (class_hash is _ABSENT or (class_hash is None and "__eq__" in own)))
    names = ["__dataclass_params__", "__dataclass_fields__"]
    if init and "__init__" not in own:
        names.append("__init__")
    if repr_ and "__repr__" not in own:
        names.append("__repr__")
    if eq and "__eq__" not in own:
        names.append("__eq__")
    if order:
        names.extend(_ORDER)
    if frozen:
        names.extend(_FROZEN)
    if "__hash__" not in own:
        names.append("__hash__")
        pending.hash_stand_in = True
    if "__setstate__" not in own:
        names.append("__setstate__")
    for name in names:
        setattr(cls, name, _StandIn(pending, name, _ABSENT))
    doc = own.get("__doc__")
    if not doc:
        names.append("__doc__")
        cls.__doc__ = _StandIn(pending, "__doc__", doc)  # type: ignore[assignment]
    annotations = own.get("__annotations__", {})
    for name, value in list(own.items()):
        if isinstance(value, Field) and name in annotations:
            names.append(name)
            setattr(cls, name, _StandIn(pending, name, value))
    pending.names = names
    return cls


def is_pending(cls: type) -> bool:
    """Whether ``cls`` was decorated here and not processed yet (looks without processing it)."""
    held = cls.__dict__.get("__dataclass_fields__")
    return type(held) is _StandIn and not held.pending.done


@overload
@dataclass_transform(field_specifiers=(field, Field))
def dataclass(cls: type[_T], /) -> type[_T]: ...


@overload
def dataclass(cls: None = None, /, *, init: bool = True, repr: bool = True, eq: bool = True, order: bool = False,
              unsafe_hash: bool = False, frozen: bool = False, match_args: bool = True, kw_only: bool = False,
              slots: bool = False, weakref_slot: bool = False) -> Callable[[type[_T]], type[_T]]: ...


def dataclass(cls: type[_T] | None = None, /, *, init: bool = True, repr: bool = True, eq: bool = True,
              order: bool = False, unsafe_hash: bool = False, frozen: bool = False, match_args: bool = True,
              kw_only: bool = False, slots: bool = False, weakref_slot: bool = False
              ) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """``dataclasses.dataclass``, processed on first use (see the module's docstring)."""
    params = (init, repr, eq, order, unsafe_hash, frozen, match_args, kw_only, slots, weakref_slot)

    def wrap(cls: type[_T]) -> type[_T]:
        return _defer(cls, params)

    return wrap if cls is None else wrap(cls)
