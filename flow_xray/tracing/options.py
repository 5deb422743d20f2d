"""`TraceOptions`: what ``@trace(...)`` was given, built and validated in one place."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flow_xray import attributes as attr

logger = logging.getLogger("flow_xray")


@dataclass(frozen=True, slots=True)
class TraceOptions:
    """The options of one ``@trace`` application; immutable once built.

    ``kind`` is lower-case; ``exclude`` a tuple of argument names; ``attributes``
    the user's static attributes as ``(key, value)`` pairs, keys as strings.
    """

    name: str | None = None
    kind: str = "chain"
    capture_input: bool = True
    capture_output: bool = True
    exclude: tuple[str, ...] = ()
    attributes: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def build(
        cls,
        *,
        name: str | None = None,
        kind: str = "chain",
        capture_input: bool = True,
        capture_output: bool = True,
        exclude: Iterable[str] = (),
        attributes: Mapping[str, Any] | None = None,
    ) -> TraceOptions:
        """Normalise and check the decorator's arguments; misuse is logged, never raised.

        An unknown kind is recorded as given (OpenInference has more kinds than
        flow-xray names); a non-string name falls back to the function's name.
        """
        if isinstance(kind, str) and kind.lower() not in attr.KINDS:
            logger.warning("flow-xray: unknown span kind %r; recorded as given", kind)
        if name is not None and not isinstance(name, str):
            logger.warning("flow-xray: span name %r is not a str; using the function's name", name)
            name = None
        pairs: tuple[tuple[str, Any], ...] = ()
        if attributes:
            try:
                pairs = tuple((str(key), value) for key, value in attributes.items())
            except Exception:
                logger.warning("flow-xray: attributes= is not a mapping; ignored", exc_info=True)
        try:
            excluded = (exclude,) if isinstance(exclude, str) else tuple(str(n) for n in exclude)
        except Exception:
            logger.warning("flow-xray: exclude= is not a sequence of names; ignored")
            excluded = ()
        return cls(
            name=name,
            kind=str(kind).lower(),
            capture_input=bool(capture_input),
            capture_output=bool(capture_output),
            exclude=excluded,
            attributes=pairs,
        )
