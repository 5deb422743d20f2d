"""Specification of redaction on the value path: secret names and credentials inside text."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from flow_xray import set_redaction
from flow_xray.serialize import (
    REDACTED,
    Limits,
    encode_inputs,
    get_limits,
    is_secret_name,
    to_jsonable,
)
from flow_xray.serialize.secrets import SOLID_MIN, VALUE_RULES, scrub_text
from tests.serialize.serialize_support import DEFAULT, strict_loads

# --- redaction ---------------------------------------------------------------
SECRET_NAMES = [
    *("password", "passwd", "secret", "api_key", "apikey", "api-key", "authorization"),
    *("access_token", "refresh_token", "cookie", "private_key", "credential", "credentials"),
    *("OPENAI_API_KEY", "db_password", "X-Api-Key", "Authorization", "client_secret"),
    *("apiKey", "dbPassword", "Set-Cookie", "AWS_SECRET_ACCESS_KEY"),
    # issue 12: the shapes 0.2.0's ten names missed
    *("token", "auth_token", "session_id", "sessionid", "sessionId", "jwt", "X-Auth-Token"),
    *("x-api-key", "csrf", "xsrf", "csrftoken", "XSRF-TOKEN", "pwd", "db_pwd", "id_token"),
    *("secret_key", "signing_key", "basic_auth", "session", "bearer", "passphrase"),
]
PLAIN_NAMES = [
    *("max_tokens", "prompt_tokens", "completion_tokens", "tokens", "token_count"),
    *("total_tokens", "token_type", "secretary", "author", "keys", "key", "cookbook", "access"),
    *("tokenizer", "input_tokens", "auth_method", "session_count", "monkey", "passenger"),
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names_are_recognised(name: str) -> None:
    """Secret-looking names match as fragments, whatever the case or separator."""
    assert is_secret_name(name, DEFAULT)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_token_counts_and_lookalikes_are_not_secret(name: str) -> None:
    """Token counts and words merely containing a secret fragment are not redacted."""
    assert not is_secret_name(name, DEFAULT)


def test_secret_arguments_are_redacted() -> None:
    """A secret argument name replaces the value with [REDACTED]; others are kept."""
    text = encode_inputs({"prompt": "hi", "api_key": "sk-live-123"}, DEFAULT, 1000)
    assert strict_loads(text) == {"prompt": "hi", "api_key": REDACTED}
    assert "sk-live-123" not in text


def test_secret_arguments_are_redacted_on_the_slow_path_too() -> None:
    """Redaction applies when other arguments need the full walk."""
    text = encode_inputs({"password": "hunter2", "rows": [{"a": {1, 2}}]}, DEFAULT, 1000)
    assert strict_loads(text) == {"password": REDACTED, "rows": [{"a": [1, 2]}]}


def test_secret_keys_are_redacted_at_any_depth() -> None:
    """Secret dict keys are redacted deep inside lists and dicts, and in dataclass fields."""

    @dataclasses.dataclass
    class Conn:
        host: str
        db_password: str

    value = {"cfg": [{"http": {"headers": {"Authorization": "Bearer t"}}}], "c": Conn("h", "pw")}
    out = to_jsonable(value, DEFAULT)
    assert out["cfg"][0]["http"]["headers"] == {"Authorization": REDACTED}
    assert out["c"] == {"host": "h", "db_password": REDACTED}


def test_token_counts_are_kept() -> None:
    """Token-count arguments are never redacted."""
    args = {"max_tokens": 256, "usage": {"prompt_tokens": 3, "total_tokens": 5}}
    assert strict_loads(encode_inputs(args, DEFAULT, 1000)) == args


def test_redaction_can_be_turned_off() -> None:
    """With redact=False secret-looking names keep their values."""
    limits = Limits(redact=False)
    assert to_jsonable({"password": "x"}, limits) == {"password": "x"}
    assert not is_secret_name("password", limits)


def test_extra_patterns_are_case_insensitive_searches() -> None:
    """redact_patterns are searched case-insensitively in names, in addition to the defaults."""
    limits = Limits(redact_patterns=(r"ssn", r"^pin$"))
    out = to_jsonable({"user_SSN": 1, "PIN": 2, "spin": 3, "secret": 4}, limits)
    assert out == {"user_SSN": REDACTED, "PIN": REDACTED, "spin": 3, "secret": REDACTED}


# --- credentials inside text ---------------------------------------------------
def test_credentials_inside_strings_are_scrubbed_and_named() -> None:
    """A key inside a prompt is replaced by a marker naming its kind; the text around stays."""
    prompt = "use sk-proj-abcdefghijklmnopqrstuvwxyz0123 to call"
    text = encode_inputs({"prompt": prompt, "n": 1}, DEFAULT, 1000)
    assert strict_loads(text) == {"prompt": "use [REDACTED:openai-key] to call", "n": 1}


# The formats whose every match holds a blank (a scheme and its token) or ":" (a URL).
SEPARATED = {"url-password", "digest-auth", "bearer", "basic-auth", "auth-header", "netrc-password"}


def _regex_parser() -> Any:
    """The standard library's regex parser (``re._parser``; ``sre_parse`` before 3.11)."""
    found = getattr(re, "_parser", None)
    if found is None:
        import sre_parse

        found = sre_parse
    return found


def test_the_short_text_shortcut_skips_nothing_a_rule_matches() -> None:
    """A text shorter than SOLID_MIN without a blank, "=" or ":" is returned unscanned, so
    every other format's shortest match is at least SOLID_MIN characters long."""
    shortest = {
        kind: _regex_parser().parse(pattern.pattern).getwidth()[0]
        for kind, _, pattern, _ in VALUE_RULES
        if kind not in SEPARATED
    }
    assert {kind: width for kind, width in shortest.items() if width < SOLID_MIN} == {}


def test_a_long_text_scrubs_the_same_twice() -> None:
    """A long text seen again (a prompt passed through to the output) gives the same result,
    and an unchanged text comes back as the very object passed."""
    secret = "context " * 40 + "key sk-proj-abcdefghijklmnopqrstuvwxyz0123 end"
    clean = "context " * 60
    for _ in range(2):
        assert "[REDACTED:openai-key]" in scrub_text("".join(secret), DEFAULT)
        copy = "".join(clean)
        assert scrub_text(copy, DEFAULT) is copy


def test_allow_list_and_off_switch(restore_limits: None) -> None:
    """set_redaction(allow=...) keeps listed names and kinds; enabled=False keeps everything."""
    args = {"session_id": "s-1", "dsn": "postgres://u:pw@h/db", "password": "x"}
    set_redaction(allow=("Session-ID", "url-password"))
    kept = strict_loads(encode_inputs(args, get_limits(), 1000))
    assert kept == {"session_id": "s-1", "dsn": "postgres://u:pw@h/db", "password": REDACTED}
    set_redaction(enabled=False)
    assert strict_loads(encode_inputs(args, get_limits(), 1000)) == args
