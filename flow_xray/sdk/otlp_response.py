"""What an OTLP/HTTP answer means: spans accepted, some rejected, or no OTLP answer at all.

The SDK's HTTP exporter counts any status below 400 as delivered. Many things
answer 200 that are not OTLP receivers (a web page, a login proxy, a health
endpoint, a path typo served by a catch-all), and a redirect is not followed,
so the spans never arrive; a partial success rejects some of them. The OTLP
specification is exact about a real answer: 2xx with an
``ExportTraceServiceResponse`` body (protobuf, or JSON for JSON requests),
its ``partial_success.rejected_spans`` the spans it refused.

`judge` reads an answer that way. `CheckingSession` is the ``requests``
session `flow_xray.sdk.otlp.build_exporter` gives the HTTP exporter: it sends
as the SDK asks (never following redirects), judges each 2xx/3xx answer, tells
the exporter running on this thread (`flow_xray.runtime.sdk_state.LOG_SCOPE`)
what it found, and turns an answer that is not OTLP into a failed request
(one the SDK does not retry), so those spans are counted as lost. Failing
statuses (4xx, 5xx) stay the SDK's to handle and retry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import requests

# protobuf ships no type stubs (types-protobuf is a separate package we do not require).
from google.protobuf.message import DecodeError  # type: ignore[import-untyped,unused-ignore]
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from flow_xray.runtime.sdk_state import LOG_SCOPE
from flow_xray.sdk.otlp_target import shown_endpoint
from flow_xray.terminal import one_line

#: How much of a server's own words (a partial success's error message) a warning quotes.
MESSAGE_LIMIT: Final = 200


@dataclass(frozen=True)
class Verdict:
    """What one answer says: whether the request's spans arrived, how many were refused, why.

    ``message`` says why nothing arrived, or (with ``rejected``) what the
    server said about the spans it refused, made terminal-safe and short.
    """

    accepted: bool
    rejected: int = 0
    message: str | None = None

    def loss(self, sent: int) -> str | None:
        """The warning's reason when ``sent`` spans were sent and this came back."""
        if not self.accepted:
            return self.message
        if self.rejected:
            said = f": {self.message}" if self.message else ""
            return f"the server rejected {min(self.rejected, sent)} of {sent} spans{said}"
        return None


class NotOtlpAnswer(Exception):
    """The server's answer is not an OTLP one: the request's spans did not arrive."""


def judge(
    status: int, content_type: str | None, body: bytes, location: str | None
) -> Verdict | None:
    """Read an OTLP/HTTP answer; None for a failing status (4xx, 5xx: the SDK's to handle).

    Example:
        >>> judge(200, "text/html; charset=utf-8", b"<html>...", None).accepted
        False
    """
    if not 200 <= status < 400:
        return None
    if status >= 300:
        where = f" to {_shown_location(location)}" if location else ""
        return Verdict(
            False,
            message=f"the server answered {_status(status)}{where}; OTLP export does not "
            "follow redirects: use the address it names as the endpoint",
        )
    if not body:
        return Verdict(True)  # an empty ExportTraceServiceResponse (a 204 too)
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    if kind.endswith("json"):
        return _judge_json(status, body)
    if kind.startswith("text/") or kind.endswith(("html", "xml")):
        return _not_otlp(status, f"a {kind} body")
    return _judge_protobuf(status, body)


def _judge_protobuf(status: int, body: bytes) -> Verdict:
    answer = ExportTraceServiceResponse()
    try:
        answer.ParseFromString(body)
    except DecodeError:
        return _not_otlp(status, f"a body of {len(body):,} bytes")
    answer.DiscardUnknownFields()
    if answer.ByteSize() != len(body):  # bytes that happened to parse, as fields OTLP lacks
        return _not_otlp(status, f"a body of {len(body):,} bytes")
    partial = answer.partial_success
    return _partial(partial.rejected_spans, partial.error_message)


def _judge_json(status: int, body: bytes) -> Verdict:
    try:
        answer: Any = json.loads(body)
    except ValueError:
        return _not_otlp(status, "a JSON body that does not parse")
    partial = (
        answer.get("partialSuccess", answer.get("partial_success"))
        if isinstance(answer, dict)
        else None
    )
    if not isinstance(answer, dict) or not isinstance(partial, (dict, type(None))):
        return _not_otlp(status, "a JSON body")
    partial = partial or {}
    rejected: Any = partial.get("rejectedSpans", partial.get("rejected_spans", 0))
    try:
        count = int(rejected)  # int64 in protobuf JSON: a number or a decimal string
    except (TypeError, ValueError):
        return _not_otlp(status, "a JSON body")
    message = partial.get("errorMessage", partial.get("error_message", ""))
    return _partial(count, message if isinstance(message, str) else "")


def _partial(rejected: int, message: str) -> Verdict:
    if rejected <= 0:
        return Verdict(True)  # full success (an error_message alone is only a warning)
    return Verdict(True, rejected, one_line(message, MESSAGE_LIMIT) if message else None)


def _not_otlp(status: int, what: str) -> Verdict:
    return Verdict(
        False,
        message=f"the server answered {_status(status)} with {what}, not an OTLP response "
        "(is the endpoint an OTLP/HTTP receiver's /v1/traces?)",
    )


def _status(status: int) -> str:
    """``307 Temporary Redirect``: the code and its standard phrase, when it has one."""
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _shown_location(location: str) -> str:
    """A redirect's target as a warning may show it: no query, fragment or credentials."""
    try:
        parts = urlsplit(location.strip())
        bare = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    except ValueError:
        return "an address that is not a URL"
    return one_line(shown_endpoint(bare), 120)


class CheckingSession(requests.Session):
    """The HTTP exporter's session: no redirects followed, every 2xx/3xx answer judged."""

    def request(self, method: Any, url: Any, *args: Any, **kwargs: Any) -> Any:
        """Send as `requests.Session.request` does, without following redirects; judge the answer.

        Raises:
            NotOtlpAnswer: the answer is 2xx or 3xx but not an OTLP success.
        """
        kwargs["allow_redirects"] = False
        response = super().request(method, url, *args, **kwargs)
        verdict = judge(
            response.status_code,
            response.headers.get("content-type"),
            response.content,
            response.headers.get("location"),
        )
        if verdict is None:
            return response
        sink = LOG_SCOPE.sink
        answered = getattr(sink, "otlp_answer", None)
        if answered is not None:
            answered(verdict)
        if not verdict.accepted:
            raise NotOtlpAnswer(verdict.message)
        return response
