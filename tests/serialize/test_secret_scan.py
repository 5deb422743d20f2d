"""Specification of how the secret scan stays cheap without missing anything.

`flow_xray.serialize.secrets.scan` skips work on ordinary values: a text is
searched only around the sentinel characters of the rules' triggers, strings
found clean and names found plain are remembered, and a dict made of both is
told plain at once. Each shortcut must never let a credential through.
"""

from __future__ import annotations

import dataclasses

from flow_xray import set_redaction
from flow_xray.serialize import REDACTED, Limits, encode_inputs, get_limits
from flow_xray.serialize.fast import checks_for
from flow_xray.serialize.secrets import (
    CLEAN_CAP,
    VALUE_RULES,
    hides_value,
    is_secret_name,
    scrub_text,
)
from flow_xray.serialize.secrets.scan import _DETECTORS, sentinel
from tests.serialize.serialize_support import strict_loads

KEY = "sk-proj-Qz8Rt5Pw9kLm2Vb7Xc4Nd6Fh1Gj3"


def test_every_trigger_is_found_around_its_sentinel() -> None:
    """Each trigger of each rule, inside text, is found by the search for its sentinel, so no
    rule is left out of the scan of a text that holds its trigger."""
    missed = [
        (kind, trigger)
        for kind, triggers, _, _ in VALUE_RULES
        for trigger in triggers
        if _DETECTORS[sentinel(trigger)].search(f"see {trigger} here") is None
    ]
    assert missed == []


def test_a_string_kept_under_an_allow_list_is_scrubbed_without_it(restore_limits: None) -> None:
    """A credential of an allowed kind, kept (and remembered as clean) under one allow-list,
    is scrubbed again under limits without it: the memory is per allow-list."""
    value = {"note": KEY, "model": "gpt-4o"}
    set_redaction(allow=("openai-key",))
    assert strict_loads(encode_inputs({"v": value}, get_limits(), 4096)) == {"v": value}
    assert scrub_text(KEY, get_limits()) is KEY
    set_redaction(allow=())
    assert strict_loads(encode_inputs({"v": value}, get_limits(), 4096)) == {
        "v": {"note": "[REDACTED:openai-key]", "model": "gpt-4o"}
    }


def test_a_known_dict_with_one_new_value_is_scanned() -> None:
    """A dict whose keys and values were all seen clean is told plain at once; the same keys
    with one new value holding a credential are scanned and the credential scrubbed."""
    limits = get_limits()
    options = {f"field-{i:02}": f"value-{i:02}" for i in range(20)}
    for _ in range(2):  # the second time through the shortcut
        assert strict_loads(encode_inputs({"options": options}, limits, 8192)) == {
            "options": options
        }
    changed = {**options, "field-07": f"use {KEY}"}
    out = strict_loads(encode_inputs({"options": changed}, limits, 8192))
    assert out["options"]["field-07"] == "use [REDACTED:openai-key]"


def test_the_string_cap_holds_for_strings_remembered_as_clean() -> None:
    """Strings remembered clean under the default string cap are still cut under a smaller
    one: the shortcut applies only when the cap is above every remembered string."""
    text = "a plain sentence of ordinary words, " * 5  # 180 characters, below 256
    value = {"a": text, "b": text}
    encode_inputs({"v": value}, get_limits(), 8192)  # remembered as clean
    small = dataclasses.replace(get_limits(), max_string=50)
    out = strict_loads(encode_inputs({"v": value}, small, 8192))
    assert len(out["v"]["a"]) < 100 and out["v"]["a"] != text


def test_token_and_session_values_decide_by_their_shape() -> None:
    """``token`` / ``session`` hide credential-shaped strings only: a logprobs token, a token id
    or an object's repr stays; a token string (letters and digits, 8+) goes."""
    limits = Limits()
    assert is_secret_name("token", limits) and is_secret_name("session", limits)
    kept = [("token", " Paris"), ("token", 15339), ("token", "ization"), ("session", {"id": 1})]
    hidden = [("token", "nv01Qz8Rt5Pw9k"), ("session", "a8f5f167f44f4964e6c998dee827110c")]
    assert [hides_value(n, v, limits) for n, v in kept] == [False] * len(kept)
    assert [hides_value(n, v, limits) for n, v in hidden] == [True] * len(hidden)


def test_pwd_and_pass_keep_paths_and_flags_only() -> None:
    """``PWD`` / ``OLDPWD`` / ``*_PASS`` keep a path, a number or a boolean and hide anything
    else (an ODBC ``PWD=hunter2``)."""
    limits = Limits()
    assert [hides_value("PWD", "/home/dev/x", limits), hides_value("OLDPWD", "~/x", limits)] == [
        False,
        False,
    ]
    assert [hides_value("pass", True, limits), hides_value("PWD", "hunter2", limits)] == [
        False,
        True,
    ]
    assert hides_value("DB_PASS", "s3cret", limits)


def test_tokenizer_and_pagination_names_are_not_secret() -> None:
    """``pad_token``, ``eos_token``, ``next_token``, ``next_page_token`` name settings and
    cursors; ``auth_token``, ``github_token``, ``X-Vault-Token`` name credentials."""
    limits = Limits()
    plain = ["pad_token", "eos_token", "next_token", "next_page_token", "nextPageToken"]
    secret = ["auth_token", "github_token", "X-Vault-Token", "identitytoken", "bot_token"]
    assert [n for n in plain if is_secret_name(n, limits)] == []
    assert [n for n in secret if not is_secret_name(n, limits)] == []
    assert all(hides_value(n, "abc", limits) for n in secret)


def test_a_name_the_user_lists_hides_any_value() -> None:
    """``@trace(redact={"token"})`` / ``redact_patterns`` hide a ``token`` value of any shape."""
    limits = Limits(redact_patterns=(r"^token$",))
    assert is_secret_name("token", limits) and hides_value("token", "abc", limits)
    assert to_redacted({"token": "abc"}, limits) == {"token": REDACTED}


def to_redacted(value: dict[str, str], limits: Limits) -> object:
    return strict_loads(encode_inputs({"v": value}, limits, 4096))["v"]


def test_the_fast_paths_caches_follow_the_limits_and_start_over_when_full() -> None:
    """`checks_for` keeps the caches of the limits asked last; other limits get their own;
    a set that filled up is replaced, and values are still scanned right afterwards."""
    limits = get_limits()
    checks = checks_for(limits)
    assert checks_for(limits) is checks
    other = dataclasses.replace(limits, redact_patterns=("zz_custom_name",))
    assert checks_for(other)[0] is other and checks_for(other)[3] is not checks[3]
    full = checks_for(limits)[2]
    full.update(f"plain-{i:05}" for i in range(CLEAN_CAP - len(full)))  # (really clean)
    fresh = checks_for(limits)
    assert fresh[2] is not full and len(fresh[2]) < CLEAN_CAP
    options = {f"field-{i:02}": f"value-{i:02}" for i in range(20)}
    options["field-07"] = f"use {KEY}"
    out = strict_loads(encode_inputs({"options": options}, limits, 8192))
    assert out["options"]["field-07"] == "use [REDACTED:openai-key]"
