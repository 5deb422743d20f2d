"""Property: any nested value a program passes is recorded by every call form and every sink.

Random values (dicts, lists, tuples, sets; text with lone surrogates and bidi
or zero-width characters; bytes; ints far beyond 64 bits; floats with NaN and
infinities; None; objects whose ``__repr__`` or ``__str__`` fails; cycles)
go through every call form of ``@trace`` inside ``trace.capture()``, under a
user's own SDK provider exporting OTLP/JSON lines. Each example must give the
caller back the very objects it passed, log no error, and leave a trace that
``to_html``, ``save`` / ``TraceResult.load`` and the OTLP/JSON file all write.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from flow_xray import OtlpJsonFileExporter, TraceResult, trace

# Hypothesis's failure report imports mypy_extensions.TypedDict, deprecated: under
# filterwarnings=error that warning would hide the falsifying example behind an INTERNALERROR.
pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict:DeprecationWarning")

# Characters the audit found trouble with: lone surrogates (what os.fsdecode gives
# for non-UTF-8 names), bidi overrides and isolates, zero-width ones, NUL, markup.
SPECIAL = ("\udc80", "\ud800", "\udfff", "\u202e", "\u2066", "\u200b", "\ufeff", "\x00")
SPECIAL_TEXT = ("</script>", "<!--", "\r\n", "sk-" + "a" * 40)
HUGE_INTS = (2**63, -(2**63) - 1, 2**64, 10**30, 10**5000, -(10**400))


class BadRepr:
    """An object whose __repr__ and __str__ raise."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("BadRepr()")  # how hypothesis shows it in a failing example


class OddRepr:
    """An object whose __repr__ returns something that is not a str."""

    def __repr__(self) -> Any:
        return 42


class BadStrError(Exception):
    """An exception whose own __str__ raises."""

    def __str__(self) -> str:
        raise RuntimeError("no str")


texts = st.text(st.one_of(st.characters(), st.sampled_from(SPECIAL)), max_size=12) | (
    st.sampled_from(SPECIAL_TEXT)
)
# Picked by index: hypothesis would print the strategy, and 10**5000 has no repr.
ints = st.integers() | st.sampled_from(range(len(HUGE_INTS))).map(HUGE_INTS.__getitem__)
hashables = st.one_of(
    st.none(),
    st.booleans(),
    ints,
    st.floats(),  # NaN and the infinities included
    texts,
    st.binary(max_size=16),
    st.builds(BadRepr),
    st.builds(OddRepr),
)


def _cyclic(value: Any, as_dict: bool) -> Any:
    """A container holding ``value`` and itself."""
    if as_dict:
        holder: dict[str, Any] = {"value": value}
        holder["self"] = holder
        return holder
    items: list[Any] = [value]
    items.append(items)
    return items


values = st.recursive(
    hashables,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(texts | ints, children, max_size=4),
        st.frozensets(hashables, max_size=4),
        st.sets(hashables, max_size=4),
        st.builds(_cyclic, children, st.booleans()),
    ),
    max_leaves=12,
)


class Service:
    """A class with a traced method."""

    @trace
    def method(self, value: Any) -> Any:
        return value


@trace
def plain(value: Any, *rest: Any, **named: Any) -> Any:
    return value


@trace
async def coroutine(value: Any) -> Any:
    return value


@trace
def generator(value: Any) -> Iterator[Any]:
    yield value
    return value


@trace
async def async_generator(value: Any) -> AsyncIterator[Any]:
    yield value


@trace
def annotated(value: Any) -> Any:
    trace.annotate(**{**_str_keyed(value), "the value": value})
    trace.usage(model=value, provider=value, input_tokens=value, output_tokens=value)
    trace.usage(cost_usd=value, prompt_tokens=value, completion_tokens=value)
    return value


@trace
def raises(error: BaseException) -> None:
    raise error


def _str_keyed(value: Any) -> dict[str, Any]:
    return {k: v for k, v in value.items() if isinstance(k, str)} if isinstance(value, dict) else {}


async def _drain(value: Any) -> list[Any]:
    return [item async for item in async_generator(value)]


def _errors(value: Any) -> list[BaseException]:
    return [ValueError(value), KeyError(value), BadStrError(value), OSError(2, "gone", value)]


def shape(value: Any) -> list[tuple[int, int, int]]:
    """What a value's containers hold, by identity: (container id, item count, items' ids hash)."""
    out: list[tuple[int, int, int]] = []
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if id(item) in seen or not isinstance(item, (list, tuple, dict, set, frozenset)):
            continue
        seen.add(id(item))
        members = [*item.keys(), *item.values()] if isinstance(item, dict) else list(item)
        out.append((id(item), len(members), hash(tuple(id(m) for m in members))))
        stack += members
    return out


def run_every_form(value: Any, loop: asyncio.AbstractEventLoop) -> None:
    """Pass ``value`` through each call form; the caller gets its own objects back."""
    assert plain(value, value, key=value) is value
    assert Service().method(value) is value
    assert loop.run_until_complete(coroutine(value)) is value
    gen_items = list(generator(value))
    assert len(gen_items) == 1 and gen_items[0] is value
    async_items = loop.run_until_complete(_drain(value))
    assert len(async_items) == 1 and async_items[0] is value
    static = value if isinstance(value, dict) else {"value": value, "more": [value]}
    assert trace(attributes=static)(plain)(value) is value
    assert annotated(value) is value
    for error in _errors(value):
        try:
            raises(error)
        except BaseException as caught:
            assert caught is error
        else:
            raise AssertionError("the traced call swallowed the exception")


@dataclass
class Sinks:
    """The user's OTLP/JSON file and an error-log collector, shared by one test's examples."""

    folder: Path
    otlp: Path
    logged: list[logging.LogRecord] = field(default_factory=list)
    read_to: int = 0  # bytes of the OTLP file already read

    def new_otlp_lines(self) -> list[str]:
        """The OTLP/JSON lines written since the last call (strict UTF-8)."""
        with self.otlp.open("rb") as file:
            file.seek(self.read_to)
            data = file.read()
        self.read_to += len(data)
        return data.decode("utf-8").splitlines()


class _Collect(logging.Handler):
    """Keeps the records that show a failure: errors, contained recording failures, and
    records that cannot even be formatted (a handler would print a traceback for those)."""

    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
        except Exception:
            self.into.append(record)
            return
        if record.levelno >= logging.ERROR or text.startswith("flow-xray could not record"):
            self.into.append(record)


@pytest.fixture
def sinks(tmp_path: Path, otel_globals: Callable[[], None]) -> Iterator[Sinks]:
    """A user's SDK provider exporting OTLP/JSON lines, and every ERROR log record collected."""
    found = Sinks(tmp_path, tmp_path / "spans.jsonl")
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(found.otlp)))
    trace_api.set_tracer_provider(provider)
    handler = _Collect(found.logged)
    root, ours = logging.getLogger(), logging.getLogger("flow_xray")
    level = ours.level
    ours.setLevel(logging.DEBUG)  # contained recording failures are logged at debug level
    root.addHandler(handler)
    try:
        yield found
    finally:
        root.removeHandler(handler)
        ours.setLevel(level)
        provider.shutdown()


def check_every_sink(value: Any, sinks: Sinks, loop: asyncio.AbstractEventLoop) -> None:
    """One example: every form runs, then HTML, JSON (and its load) and OTLP/JSON are written."""
    sinks.new_otlp_lines()  # what an earlier, failed run of this example left
    sinks.logged.clear()
    before = shape(value)
    with trace.capture() as result:
        run_every_form(value, loop)
    assert shape(value) == before  # nothing was added to, removed from or replaced in it
    assert len(result) >= 12
    page = result.to_html(sinks.folder / "trace.html")
    assert "fx-data" in page
    (sinks.folder / "trace.html").read_text(encoding="utf-8")  # strict UTF-8
    result.save(sinks.folder / "trace.json")
    loaded = TraceResult.load(sinks.folder / "trace.json")
    assert loaded.to_json() == result.to_json()  # as text: NaN attributes compare equal
    lines = sinks.new_otlp_lines()
    spans = 0
    for line in lines:
        for resource in json.loads(line)["resourceSpans"]:
            spans += sum(len(scope["spans"]) for scope in resource["scopeSpans"])
    assert spans == len(result)
    (sinks.folder / "example.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert len(TraceResult.load(sinks.folder / "example.jsonl")) == spans
    assert not sinks.logged, [(r.msg, r.exc_info) for r in sinks.logged]


SUPPRESS = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


# 25 examples in the inner loop; the slow variant below runs 5,000.
@settings(max_examples=25, deadline=None, suppress_health_check=SUPPRESS)
@given(value=values)
def test_any_value_through_every_call_form_is_written_to_every_sink(
    value: Any, sinks: Sinks
) -> None:
    """Random nested values: 0 failures in any form or sink, return values and errors unchanged."""
    loop = asyncio.new_event_loop()
    try:
        check_every_sink(value, sinks, loop)
    finally:
        loop.close()


def test_the_otlp_json_file_of_all_examples_loads(sinks: Sinks) -> None:
    """The OTLP/JSON lines written for hostile values load back as a trace."""
    loop = asyncio.new_event_loop()
    try:
        for value in ("\udc80", 10**5000, float("nan"), BadRepr(), _cyclic("\u202e", True)):
            check_every_sink(value, sinks, loop)
    finally:
        loop.close()
    loaded = TraceResult.load(sinks.otlp)
    assert len(loaded) == len(sinks.otlp.read_text(encoding="utf-8").splitlines())


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=SUPPRESS)
@given(value=values)
def test_many_more_values_through_every_call_form(value: Any, sinks: Sinks) -> None:
    """The same property over 5,000 random values (the inner loop runs 25)."""
    loop = asyncio.new_event_loop()
    try:
        check_every_sink(value, sinks, loop)
    finally:
        loop.close()
