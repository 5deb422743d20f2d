"""`TraceOptions`: what ``@trace(...)`` was given, built and validated in one place."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flow_xray import attributes as attr
from flow_xray.serialize.reprs import safe_repr
from flow_xray.serialize.text import writable
from flow_xray.tracing.recording import user_attribute_limit

logger = logging.getLogger("flow_xray")
_MAX_NAMES = 1024  # names read from ``redact=``: an endless iterable costs what a set does


@dataclass(frozen=True, slots=True)
class TraceOptions:
    """The options of one ``@trace`` application; immutable once built.

    ``kind`` is lower-case; ``exclude`` a tuple of argument names; ``attributes``
    the user's static attributes as ``(key, value)`` pairs, at most
    `user_attribute_limit` of them (keys become attribute names in `user_attributes`);
    ``redact`` the names (0.3's ``redact={...}``) redacted at any depth of this
    function's inputs and output, on top of the default redaction.
    """

    name: str | None = None
    kind: str = "chain"
    capture_input: bool = True
    capture_output: bool = True
    exclude: tuple[str, ...] = ()
    attributes: tuple[tuple[Any, Any], ...] = ()
    redact: tuple[str, ...] = ()

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
        redact: Iterable[str] | None = None,
    ) -> TraceOptions:
        """Normalise and check the decorator's arguments; misuse is logged, never raised.

        An unknown kind is recorded as given (OpenInference has more kinds than
        flow-xray names); a non-string name falls back to the function's name;
        ``attributes=`` is read up to 64 pairs (fewer if ``max_items`` is
        lower), so a huge or endless mapping costs what a small one does;
        ``redact=`` is one name or a collection of names, read up to 1024 of them.
        """
        try:
            kind = writable(str(kind).lower())
        except Exception:
            kind = "chain"
        if kind not in attr.KINDS:
            logger.warning("flow-xray: unknown span kind %r; recorded as given", kind)
        if name is not None and not isinstance(name, str):
            shown = safe_repr(name, 80)
            logger.warning("flow-xray: span name %s is not a str; using the function's name", shown)
            name = None
        pairs: tuple[tuple[Any, Any], ...] = ()
        try:
            if attributes:
                pairs = _bounded_pairs(attributes)
        except Exception:
            logger.warning("flow-xray: attributes= is not a mapping; ignored", exc_info=True)
        try:
            excluded = (exclude,) if isinstance(exclude, str) else tuple(str(n) for n in exclude)
        except Exception:
            logger.warning("flow-xray: exclude= is not a sequence of names; ignored")
            excluded = ()
        return cls(
            name=name,
            kind=kind,
            capture_input=bool(capture_input),
            capture_output=bool(capture_output),
            exclude=excluded,
            attributes=pairs,
            redact=_names(redact),
        )


def _names(redact: Iterable[str] | None) -> tuple[str, ...]:
    """The names of ``redact=``, sorted, each once; a bad value is logged and ignored."""
    if redact is None:
        return ()
    try:
        names = (redact,) if isinstance(redact, str) else itertools.islice(redact, _MAX_NAMES)
        return tuple(sorted({writable(str(n)) for n in names}))
    except Exception:
        logger.warning("flow-xray: redact= is not a collection of names; ignored")
        return ()


def _bounded_pairs(attributes: Mapping[Any, Any]) -> tuple[tuple[Any, Any], ...]:
    """The first pairs of ``attributes=`` (see `user_attribute_limit`); one warning if more."""
    limit = user_attribute_limit()
    pairs = tuple(itertools.islice(attributes.items(), limit + 1))
    if len(pairs) > limit:
        logger.warning(
            "flow-xray: attributes= has more than %d items; keeping the first %d", limit, limit
        )
        pairs = pairs[:limit]
    return pairs
