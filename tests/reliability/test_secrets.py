"""No secret leaves a trace: the audit's credential corpus through every sink, 0 leaks.

The corpus holds values under secret-looking names (``token``,
``X-Auth-Token``, ``session_id``…) and the credential formats of
`tests.reliability.secret_corpus` inside ordinary text (provider keys, any
``Authorization`` scheme, cookies, DSN passwords, cloud and VCS tokens, JWTs,
private keys, signed URLs, config files). Each is pushed through every place a
value can surface (arguments, ``attributes=``, ``trace.annotate``, reprs,
exception messages and tracebacks, other instrumentations' spans and events)
and every sink (the SDK span attributes a user's exporter sees, ``to_json``,
the HTML page, the OTLP JSON file, the terminal of ``flow-xray run``). A leak
is any distinctive fragment of a secret found in a sink's text.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray import OtlpJsonFileExporter, TraceResult, set_redaction, trace
from flow_xray.render.payload import read_page
from flow_xray.sdk.span_text import exportable_spans
from flow_xray.serialize import REDACTED, get_limits, scrub_text
from flow_xray.tree.foreign import scrub_foreign
from flow_xray.tree.spans import EventRecord, SpanRecord
from tests.reliability.secret_corpus import CREDENTIALS

# --- the corpus ------------------------------------------------------------------
# Values stored under a secret-looking name: only the name says they are secret.
NAMED: dict[str, str] = {
    "token": "nv01Qz8Rt5Pw9k",
    "auth_token": "nv02Lm2Vb7Xc4N",
    "session_id": "nv03Hs1Jd5Fg2C",
    "sessionId": "nv04Kb6Tz3Wq8E",
    "jwt": "nv05Yp4Ru7Io2A",
    "X-Auth-Token": "nv06Gh3Jk6Lz9X",
    "csrf": "nv07Cv1Bn4Mq7W",
    "xsrf-token": "nv08Er5Ty8Ui1O",
    "api_key": "nv09Pa2Sd5Fg8H",
    "OPENAI_API_KEY": "nv10Jk3Lq6Zw9X",
    "password": "nv11Cr4Vt7By0N",
    "passwd": "nv12Mu5Iq8Ow1P",
    "secret": "nv13As6Dx9Fc2V",
    "client_secret": "nv14Gb7Hn0Jm3K",
    "authorization": "nv15Lp8Zo1Xi4C",
    "access_token": "nv16Vu9Bt2Ny5M",
    "refresh_token": "nv17Qr0We3Rt6Y",
    "cookie": "nv18Ui1Op4As7D",
    "private_key": "nv19Fg2Hj5Kl8Z",
    "credentials": "nv20Xc3Vb6Nm9Q",
}
# Credentials inside text: the corpus of formats (tests/reliability/secret_corpus.py).
FORMATS: list[tuple[str, str, tuple[str, ...]]] = [tuple(c) for c in CREDENTIALS]  # type: ignore[misc]
PROMPT = "Context for the agent:\n" + "\n".join(f"- {t} is {s} ok" for t, s, _ in FORMATS)
FRAGMENTS = sorted({f for _, _, fs in FORMATS for f in fs} | set(NAMED.values()))


def leaks(text: str) -> list[str]:
    """The corpus fragments found in ``text``."""
    return [fragment for fragment in FRAGMENTS if fragment in text]


def assert_no_leaks(sinks: dict[str, str]) -> None:
    """No sink's text holds a corpus fragment (the failure lists each sink's leaks)."""
    leaked = {name: found for name, text in sinks.items() if (found := leaks(text))}
    assert leaked == {}


def strings_of(value: Any) -> str:
    """Every key and string inside JSON-like data, joined (iteratively)."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            out += [str(k) for k in item]
            stack += item.values()
        elif isinstance(item, (list, tuple)):
            stack += item
    return "\n".join(out)


def page_strings(page: str) -> str:
    """A viewer page as text a leak could hide in: its markup and every string of the data it
    packs. (The packed blob is base64 of gzip: the corpus's short fragments, such as
    ``Lm2``, turn up in it by chance.)"""
    start = page.index(_DATA_TAG)
    end = page.index("</script>", start)
    return "\n".join((page[:start], page[end:], strings_of(read_page(page))))


_DATA_TAG = '<script type="application/json" id="fx-data">'


def span_strings(spans: tuple[ReadableSpan, ...] | list[ReadableSpan]) -> str:
    """Names, status messages, attributes and event attributes of SDK spans, as one text."""
    parts: list[Any] = []
    for span in spans:
        parts += [span.name, span.status.description or "", dict(span.attributes or {})]
        parts += [[e.name, dict(e.attributes or {})] for e in span.events]
    return strings_of(parts)


# --- credential formats in text ---------------------------------------------------
@pytest.mark.parametrize(("what", "secret", "fragments"), FORMATS, ids=[f[0] for f in FORMATS])
def test_every_credential_format_is_scrubbed_from_text(
    what: str, secret: str, fragments: tuple[str, ...]
) -> None:
    """A credential of each corpus shape inside a sentence is replaced by a marker."""
    out = scrub_text(f"Please use {secret} for the call.", get_limits())
    assert not [f for f in fragments if f in out], out
    assert "[REDACTED" in out and out.startswith("Please use ")


@pytest.mark.parametrize(
    "text",
    [
        "from huggingface_hub import hf_hub_download",
        "npm_config_cache=/tmp/npm and npm_package_version",
        "Visit SG.com or SG.Ltd today",
        "the ya29. prefix names a Google token",
        "sig=abc and the sig=hello world, design=1",
        "glpat- tokens are shorter: glpat-short",
        "https://hooks.slack.com/ is Slack's webhook host",
        "X-Amz-Signature=not-hex-at-all",
        "http://localhost:3000/@vite/client",
        "https://example.com:8080/users/@bob",
        "https://medium.com/@author/post-title",
        "git@github.com:org/repo.git and user@example.com",
        "key: value, primary key: id, author: Jane, monkey=1, keyboard: US",
        "max_tokens: 100, prompt_tokens=12, token_count: 5",
    ],
)
def test_lookalikes_are_left_alone(text: str) -> None:
    """Text that only resembles a credential (or a secret name) comes back unchanged."""
    assert scrub_text(text, get_limits()) is text


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("postgres://u:pa/ss@h/db", "postgres://u:[REDACTED:url-password]@h/db"),
        ("redis://:p@ss@h", "redis://:[REDACTED:url-password]@h"),
        ("mysql://root:a#b@db:3306/x", "mysql://root:[REDACTED:url-password]@db:3306/x"),
        ("amqp://guest:gu/e#s@t@mq:5672/", "amqp://guest:[REDACTED:url-password]@mq:5672/"),
    ],
)
def test_a_url_password_runs_to_the_last_at_sign(url: str, kept: str) -> None:
    """A URL password holding ``/``, ``#`` or ``@`` is removed whole; user and host stay."""
    assert scrub_text(f"dsn={url} end", get_limits()) == f"dsn={kept} end"


def test_scrubbing_twice_changes_nothing_more() -> None:
    """Markers are never scrubbed again: scrubbing is idempotent on the whole corpus."""
    once = scrub_text(PROMPT, get_limits())
    assert scrub_text(once, get_limits()) == once


def test_secret_names_inside_text_are_found_whatever_the_other_words() -> None:
    """``name=value`` / ``name: value`` pairs with secret names lose their values, in prose full
    of harmless ``key:`` / ``author:`` pairs, quoted values and JSON alike; a token id under
    ``token`` is not a credential and stays."""
    text = (
        "author: Jane key: k1 api_key=nv09Pa2Sd5Fg8H primary key: id "
        'password: \'hunter 2 x\' {"session_id": "nv03Hs1Jd5Fg2C", "token": 42} '
        "X-Auth-Token: Bearer abc.def sessid=nv21Ab2Cd3 max_tokens: 9"
    )
    out = scrub_text(text, get_limits())
    assert out == (
        "author: Jane key: k1 api_key=[REDACTED] primary key: id "
        'password: \'[REDACTED]\' {"session_id": "[REDACTED]", "token": 42} '
        "X-Auth-Token: [REDACTED] sessid=[REDACTED] max_tokens: 9"
    )


def test_many_harmless_pairs_cost_one_pass() -> None:
    """A 64 KB text of ``author: x key: y`` pairs is scanned once, not word by word."""
    import time

    text = "author: bob key: k " * 3500
    started = time.perf_counter()
    assert scrub_text(text, get_limits()) is text
    assert time.perf_counter() - started < 0.5  # ~2 ms; the word-by-word search took ~7 ms


# --- our own spans: every sink ------------------------------------------------------
def _record_own_calls(tmp_path: Path) -> tuple[TraceResult, tuple[ReadableSpan, ...]]:
    """Traced calls carrying the corpus everywhere, under a user's SDK provider with an
    in-memory exporter and flow-xray's OTLP JSON file exporter."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(tmp_path / "o.jsonl")))
    trace_api.set_tracer_provider(provider)

    @trace(attributes={**NAMED, "note": PROMPT})
    def call_model(prompt: str, settings: argparse.Namespace, headers: dict[str, Any]) -> str:
        trace.annotate(**NAMED, context=PROMPT)
        return f"echo: {prompt}"

    @trace
    def fail(**credentials: str) -> None:
        api_key = "sk-proj-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr"  # shown in the traceback's source line
        raise RuntimeError(f"login failed for {credentials} with {api_key}: {PROMPT}")

    namespace = argparse.Namespace(api_key=NAMED["api_key"], token=NAMED["token"], model="m")
    headers = {"X-Custom": "Bearer Tk8sLq2Wn5Rv9Xm4Pz7Hb3", "nested": [dict(NAMED)]}
    with trace.capture() as result:
        call_model(PROMPT, namespace, headers)
        with contextlib.suppress(RuntimeError):
            fail(**NAMED)
    provider.shutdown()
    return result, memory.get_finished_spans()


def test_own_spans_hold_no_secret_for_a_users_exporter(
    tmp_path: Path, otel_globals: Callable[[], None]
) -> None:
    """The SDK spans a user's exporter receives (attributes, events, status) leak nothing."""
    _, spans = _record_own_calls(tmp_path)
    text = span_strings(spans)
    assert len(spans) == 2 and REDACTED in text
    assert leaks(text) == []


def test_own_spans_hold_no_secret_in_json_html_or_otlp_json(
    tmp_path: Path, otel_globals: Callable[[], None]
) -> None:
    """``to_json``, the HTML page (data and raw text) and the OTLP JSON file leak nothing."""
    result, _ = _record_own_calls(tmp_path)
    page = result.to_html(tmp_path / "t.html")
    sinks = {
        "to_json": result.to_json(),
        "html": page_strings(page),
        "otlp json": (tmp_path / "o.jsonl").read_text(encoding="utf-8"),
    }
    assert "[REDACTED" in sinks["to_json"] and "[REDACTED" in sinks["html"]
    assert_no_leaks(sinks)


def test_attributes_a_program_sets_on_a_traced_calls_span_are_scrubbed() -> None:
    """An attribute set through the OpenTelemetry API on one of flow-xray's own spans
    (not through flow-xray's value path) is scrubbed in the JSON and the page too."""

    @trace
    def handler() -> None:
        span = trace_api.get_current_span()
        span.set_attribute("http.request.header.authorization", "Bearer abcdefghijklmnop123")
        span.set_attribute("db.statement", "connect postgres://app:hunter2-pw@db/x")

    with trace.capture() as result:
        handler()
    page = result.to_html()
    sinks = {"to_json": result.to_json(), "html data": strings_of(read_page(page))}
    assert all(
        "hunter2-pw" not in text and "abcdefghijklmnop123" not in text for text in sinks.values()
    )
    attributes = result.roots[0].attributes
    assert attributes["http.request.header.authorization"] == REDACTED
    assert attributes["db.statement"] == "connect postgres://app:[REDACTED:url-password]@db/x"


# --- other instrumentations' spans -------------------------------------------------
def _record_foreign_spans(tmp_path: Path) -> TraceResult:
    """Spans of a raw OpenTelemetry tracer and an OpenInference-style one carrying the corpus in
    attributes, event attributes, status and JSON ``input.value``, under a provider exporting
    through flow-xray's OTLP JSON file exporter."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(tmp_path / "o.jsonl")))
    trace_api.set_tracer_provider(provider)
    raw = provider.get_tracer("my.http.client")
    openinference = provider.get_tracer("openinference.instrumentation.openai")
    attributes: dict[str, Any] = {
        **NAMED,
        "http.request.header.authorization": ("Bearer Tk8sLq2Wn5Rv9Xm4Pz7Hb3",),
        "url.full": "postgres://app:Hx7pR2vQ9wZt@db.internal:5432/prod",
        "prompt": PROMPT,
        "tags": ("safe", "sk-proj-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr"),
    }
    invocation = json.dumps({"api_key": NAMED["api_key"], "token": 7, "prompt": PROMPT})
    with trace.capture() as result:
        with raw.start_as_current_span("GET", attributes=attributes) as span:
            span.add_event("request", {**NAMED, "body": PROMPT})
            span.record_exception(ValueError(f"bad credentials: {PROMPT}"))
            span.set_status(trace_api.StatusCode.ERROR, f"failed: {PROMPT}")
        with openinference.start_as_current_span(
            "ChatCompletion",
            attributes={
                "openinference.span.kind": "LLM",
                "input.value": invocation,
                "input.mime_type": "application/json",
                "llm.invocation_parameters": invocation,
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": PROMPT,
            },
        ):
            pass
    provider.shutdown()
    return result


def test_foreign_spans_hold_no_secret_in_json_html_or_otlp_json(
    tmp_path: Path, otel_globals: Callable[[], None]
) -> None:
    """Other instrumentations' attributes, events, status and messages are scrubbed in the tree
    (``to_json``, the HTML page) and in flow-xray's OTLP JSON file."""
    result = _record_foreign_spans(tmp_path)
    page = result.to_html(tmp_path / "t.html")
    sinks = {
        "to_json": result.to_json(),
        "html": page_strings(page),
        "otlp json": (tmp_path / "o.jsonl").read_text(encoding="utf-8"),
        "reloaded otlp json": TraceResult.load(tmp_path / "o.jsonl").to_json(),
    }
    assert_no_leaks(sinks)
    llm, get = result.find("ChatCompletion"), result.find("GET")
    assert llm is not None and get is not None
    assert llm.inputs["api_key"] == REDACTED and llm.inputs["token"] == 7  # a token id
    assert "[REDACTED:openai-key]" in llm.inputs["messages"][0]["content"]
    assert get.attributes["http.request.header.authorization"] == REDACTED
    assert get.attributes["otel.scope.name"] == "my.http.client"
    assert "[REDACTED:url-password]" in get.attributes["url.full"]


def _foreign_record(**attributes: Any) -> SpanRecord:
    return SpanRecord(
        "0" * 32,
        "1" * 16,
        None,
        "s",
        0,
        1,
        attributes={"otel.scope.name": "x", **attributes},
        events=(EventRecord("e", 0, {"k": "v"}),),
    )


def test_a_clean_foreign_span_is_not_copied() -> None:
    """A foreign record with nothing secret, and any record of flow-xray's own, comes back as is."""
    clean = _foreign_record(model="gpt-4o", max_tokens=5, prompt="hello world: fine")
    assert scrub_foreign(clean) is clean
    own = SpanRecord("0" * 32, "1" * 16, None, "s", 0, 1, attributes={"api_key": "x"})
    assert scrub_foreign(own) is own


def test_a_clean_export_batch_is_not_copied(otel_globals: Callable[[], None]) -> None:
    """flow-xray's exporters get the very batch back when no foreign span needs scrubbing,
    and a copy of only the span that does otherwise."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("other")
    with tracer.start_as_current_span("a", attributes={"k": "v", "max_tokens": 3}):
        pass
    with tracer.start_as_current_span("b", attributes={"token": NAMED["token"]}):
        pass
    clean, dirty = memory.get_finished_spans()
    batch = [clean, clean]
    assert exportable_spans(batch) is batch
    out = exportable_spans([clean, dirty])
    assert out[0] is clean and out[1] is not dirty
    assert dict(out[1].attributes or {}) == {"token": REDACTED}


def test_the_off_switch_and_allow_list_reach_foreign_spans(restore_limits: None) -> None:
    """``set_redaction(enabled=False)`` keeps foreign values; an allowed name or kind is kept."""
    record = _foreign_record(
        session_id="s-1", token=NAMED["token"], note="glpat-Xy7Zq2Wm9Lp4Rt8Vn3Kb"
    )
    set_redaction(allow=("session_id", "gitlab-token"))
    scrubbed = scrub_foreign(record).attributes
    assert (scrubbed["session_id"], scrubbed["token"]) == ("s-1", REDACTED)
    assert scrubbed["note"] == "glpat-Xy7Zq2Wm9Lp4Rt8Vn3Kb"
    set_redaction(enabled=False)
    assert scrub_foreign(record) is record


def test_deeply_nested_foreign_values_are_scrubbed_without_recursion() -> None:
    """A foreign attribute nested 10,000 deep (as an OTLP JSON file may hold) is scrubbed."""
    deep: Any = {"password": "nv11Cr4Vt7By0N"}
    for _ in range(10_000):
        deep = [deep]
    scrubbed = scrub_foreign(_foreign_record(data=deep)).attributes["data"]
    for _ in range(10_000):
        scrubbed = scrubbed[0]
    assert scrubbed == {"password": REDACTED}


# --- the terminal --------------------------------------------------------------------
@pytest.fixture
def clean_env() -> Iterator[dict[str, str]]:
    """The environment without OTEL_* variables."""
    yield {**{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}, "NO_COLOR": "1"}


OUTPUTS = ("--json", "t.json", "--html", "t.html", "--otlp-json", "o.jsonl")


def test_flow_xray_run_prints_and_writes_no_secret(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    """A script whose traced call raises an exception full of credentials: the traceback on
    stderr, stdout, the HTML, the JSON and the OTLP JSON file written by `flow-xray run` hold
    none of them."""
    script = tmp_path / "leaky.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from flow_xray import trace

            NAMED = {NAMED!r}
            PROMPT = {PROMPT!r}

            @trace
            def connect(dsn, **named):
                token = "glpat-Xy7Zq2Wm9Lp4Rt8Vn3Kb"  # in the traceback's source lines
                raise ConnectionError(f"cannot connect to {{dsn}} with {{named}}: {{PROMPT}}")

            connect("postgres://app:Hx7pR2vQ9wZt@db.internal:5432/prod", **NAMED)
            """
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "flow_xray", "run", *OUTPUTS, str(script)],
        cwd=tmp_path,
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "ConnectionError" in done.stderr and "[REDACTED" in done.stderr
    sinks = {
        "stdout": done.stdout,
        "stderr": done.stderr,
        **{n: (tmp_path / n).read_text(encoding="utf-8") for n in ("t.json", "o.jsonl")},
        "t.html": page_strings((tmp_path / "t.html").read_text(encoding="utf-8")),
    }
    assert_no_leaks(sinks)


@pytest.mark.slow
def test_cli_errors_name_a_bad_header_or_endpoint_without_its_secret(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    """A lone ``--otlp-header TOKEN``, a header without ``=`` in the environment and endpoints
    whose passwords hold ``/``, ``#`` or ``@`` (or have no scheme) are named, never echoed."""
    script = tmp_path / "ok.py"
    script.write_text("print('ran')\n", encoding="utf-8")
    cases: list[tuple[list[str], dict[str, str], str]] = [
        (["--otlp-header", "nv01Qz8Rt5Pw9k"], {}, "without '='"),
        (["--otlp-header", "Authorization: Bearer nv15Lp8Zo1Xi4C"], {}, "'Authorization'"),
        (
            ["--otlp-endpoint", "http://localhost:4318"],
            {"OTEL_EXPORTER_OTLP_HEADERS": "nv06Gh3Jk6Lz9X"},
            "OTEL_EXPORTER_OTLP_HEADERS",
        ),
        (["--otlp-endpoint", "http://alice:nv11C/r4#Vt7@collector:bad"], {}, "bad port"),
        (["--otlp-endpoint", "alice:nv12Mu5Iq8@collector:99999"], {}, "bad port"),
        (["--otlp-endpoint", "ftp://nv13As6Dx9Fc2V@collector"], {}, "http(s)://"),
        (["--otlp-endpoint", "http://u:nv14G@b7Hn@h:4317/path"], {}, "no path"),
    ]
    for options, extra, named in cases:
        done = subprocess.run(
            [sys.executable, "-m", "flow_xray", "run", *options, str(script)],
            cwd=tmp_path,
            env={**clean_env, **extra},
            capture_output=True,
            text=True,
            timeout=120,
        )
        said = done.stdout + done.stderr
        assert done.returncode == 2 and named in said, (options, said)
        secret = next(o for o in [*options, *extra.values()] if "nv" in o)
        core = secret.split("nv", 1)[1][:6]
        assert core not in said, (options, said)
