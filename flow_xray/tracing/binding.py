"""Argument binding: a call's ``(args, kwargs)`` as ``{parameter: value}`` with defaults applied."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

Binder = Callable[[tuple[Any, ...], dict[str, Any]], dict[str, Any]]


def make_binder(func: Callable[..., Any], exclude: Sequence[str]) -> Binder:
    """Return a fast ``(args, kwargs) -> {name: value}`` with defaults applied.

    ``self``/``cls`` and the ``exclude`` names are left out. Plain
    positional-or-keyword signatures (the common case) skip
    ``inspect.Signature.bind``, which costs several microseconds.
    """
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return lambda args, kwargs: {"args": list(args), **kwargs}
    params = list(signature.parameters.values())
    skip = set(exclude)
    if (
        params
        and params[0].name in ("self", "cls")
        and params[0].kind
        in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        )
    ):
        skip.add(params[0].name)

    def bind_general(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            bound = signature.bind_partial(*args, **kwargs)
        except TypeError:
            # The call itself is wrong; the function will raise. Record what was passed.
            return {"args": list(args), **kwargs}
        bound.apply_defaults()
        return {k: v for k, v in bound.arguments.items() if k not in skip}

    if not all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params):
        return bind_general

    names = tuple(p.name for p in params)
    defaults = {p.name: p.default for p in params if p.default is not p.empty}
    keep = tuple((i, n) for i, n in enumerate(names) if n not in skip)

    def bind_simple(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        n_args = len(args)
        if n_args > len(names):
            return bind_general(args, kwargs)
        out: dict[str, Any] = {}
        for i, name in keep:
            if i < n_args:
                out[name] = args[i]
            elif name in kwargs:
                out[name] = kwargs[name]
            elif name in defaults:
                out[name] = defaults[name]
        return out

    return bind_simple
