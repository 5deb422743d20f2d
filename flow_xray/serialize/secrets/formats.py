"""Credential formats found inside any text: `VALUE_RULES`. No OpenTelemetry.

Each rule is ``(kind, triggers, pattern, replace)``: a text can hold the
credential only if it holds one of the ``triggers`` (plain substrings, each
holding a character other than a lowercase letter, or a scheme word), the
``pattern`` finds it and ``replace`` gives what stays, ``[REDACTED:<kind>]``
in place of the secret part. Patterns start with their literal prefix (a
lookbehind after it keeps it from starting mid-word), so that a search skips
to the prefix in C. They hold no named groups: `flow_xray.serialize.secrets.scan`
joins the rules a text may match into one pattern, each rule one named group,
and ``replace`` reads its groups from that group's number on.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Final

# (match, number of the rule's own group): the text kept in place of the match.
Replace = Callable[[re.Match[str], int], str]
Rule = tuple[str, tuple[str, ...], re.Pattern[str], Replace]


def marker(kind: str) -> str:
    """What replaces a credential of ``kind``: ``[REDACTED:<kind>]``."""
    return f"[REDACTED:{kind}]"


def _fixed(kind: str) -> Replace:
    text = marker(kind)
    return lambda match, base: text


def _kept_prefix(kind: str) -> Replace:
    """The rule's first group (a scheme, a URL, a parameter name) kept before the marker."""
    text = marker(kind)
    return lambda match, base: f"{match.group(base + 1)}{text}"


def _basic(match: re.Match[str], base: int) -> str:
    """``Basic <base64>`` only when it decodes to ``user:password`` (not the word "Basic")."""
    try:
        decoded = base64.b64decode(match.group(base + 3) + "==", validate=False)
    except (binascii.Error, ValueError):
        return match.group(0)
    if b":" not in decoded:
        return match.group(0)
    return f"{match.group(base + 1)}{match.group(base + 2)}{marker('basic-auth')}"


def _scheme_token(kind: str) -> Replace:
    """``<Scheme> <token>`` when the token looks like one: prose ("Bearer authentication",
    "Token limits") is kept."""
    text = marker(kind)

    def replace(match: re.Match[str], base: int) -> str:
        token = match.group(base + 3)
        if len(token) < 20 and not any(c.isdigit() for c in token):
            return match.group(0)
        return f"{match.group(base + 1)}{match.group(base + 2)}{text}"

    return replace


def _base64_private_key(match: re.Match[str], base: int) -> str:
    """Base64 of a PEM block (kubeconfig ``client-key-data``) only when it holds a private key:
    a certificate or public key stays."""
    head = match.group(0)[:120]
    try:
        decoded = base64.b64decode(head[: len(head) // 4 * 4], validate=False)
    except (binascii.Error, ValueError):
        return match.group(0)
    return marker("private-key") if b"PRIVATE KEY" in decoded else match.group(0)


def _token(prefixes: str, body: str, *, end: bool = True) -> str:
    """A regex for a token: one of the ``|``-separated literal ``prefixes`` (not preceded by a
    token character: a lookbehind placed after the prefix, so a search skips to the prefix in
    C), then ``body``; not followed by more token characters when ``end``."""
    branches = [re.escape(p) + f"(?<![A-Za-z0-9_+/-]{'.' * len(p)})" for p in prefixes.split("|")]
    head = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return head + body + (r"(?![A-Za-z0-9_-])" if end else "")


# Authorization schemes other than Bearer and Basic, as their header values (``Bot <token>``).
_SCHEMES: Final = (
    "Bot|SSWS|Token|TOKEN|ApiKey|Apikey|Api-Key|API-Key|GenieKey|Splunk|DPoP"
    "|Negotiate|NTLM|sso-key|PVEAPIToken|Klaviyo-API-Key|Zoho-oauthtoken|OAuth|SharedKey"
)


def _rule(kind: str, triggers: str, pattern: str, replace: Replace | None = None) -> Rule:
    """A rule whose ``|``-separated ``triggers`` are plain substrings; ``[REDACTED:kind]``
    replaces the whole match unless ``replace`` says otherwise."""
    return (kind, tuple(triggers.split("|")), re.compile(pattern), replace or _fixed(kind))


# Applied as one scan; where two rules could match at one place, the earlier wins.
VALUE_RULES: Final[tuple[Rule, ...]] = (
    _rule(
        "private-key",
        "-----BEGIN",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)"
        r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    _rule(
        "private-key",
        "PuTTY-User-Key-File-",
        r"PuTTY-User-Key-File-\d: (?s:.*?)(?:Private-MAC: [0-9a-f]+|\Z)",
    ),
    _rule(
        "private-key",
        "LS0tLS1CRUdJTi",
        _token("LS0tLS1CRUdJTi", r"[A-Za-z0-9+/]{40,}={0,2}", end=False),
        _base64_private_key,
    ),
    _rule("age-secret-key", "AGE-SECRET-KEY-1", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    _rule(
        "slack-webhook",
        "://hooks.slack.com/",
        r"(https?://hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_-]{8,}",
        _kept_prefix("slack-webhook"),
    ),
    _rule(
        "discord-webhook",
        "/api/webhooks/",
        r"(https?://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/\d{5,}/)[A-Za-z0-9_-]{20,}",
        _kept_prefix("discord-webhook"),
    ),
    _rule(
        # The password runs to the last ``@`` of the URL (it may hold ``/``, ``#``,
        # ``@``), but ``host:8080/path@x`` is a port and a path, not a password.
        "url-password",
        "://",
        r"(://(?<=[A-Za-z0-9+.-]://)[^\s:/?#@'\"<>\[\]]{0,256}):(?!\d+(?:[/?#]|$))[^\s'\"<>]{1,256}@"
        r"(?=[A-Za-z0-9\[])",
        lambda m, base: f"{m.group(base + 1)}:{marker('url-password')}@",
    ),
    _rule(
        # Oracle's ``user/password@host:port/service`` (the port tells it from a path).
        "url-password",
        "@",
        r"/(?<=[A-Za-z0-9_$#]/)(?![/\s])[^\s/@'\"]{1,128}@(?=[A-Za-z0-9.-]+:\d{2,5}/)",
        lambda m, base: f"/{marker('url-password')}@",
    ),
    _rule(
        "url-signature",
        "-Signature=|-signature=|-SIGNATURE=|sig=",
        r"(?i:(\bX-(?:Amz|Goog)-Signature=)[0-9a-f]{16,})"
        r"|(?<![A-Za-z0-9_-])(sig=)(?=[A-Za-z0-9%+/=]*%[0-9A-Fa-f]{2}|[A-Za-z0-9+/]{40,}=)"
        r"[A-Za-z0-9%+/=]{20,}",
        lambda m, base: f"{m.group(base + 1) or m.group(base + 2)}{marker('url-signature')}",
    ),
    _rule(
        "aws-session-token",
        "-Security-Token=|-security-token=|-SECURITY-TOKEN=",
        r"(?i:(\bX-Amz-Security-Token=))[A-Za-z0-9%+/=_-]{16,}",
        _kept_prefix("aws-session-token"),
    ),
    _rule("anthropic-key", "sk-ant-", _token("sk-ant-", r"[A-Za-z0-9_-]{16,}", end=False)),
    _rule(
        # OpenAI (``sk-proj-``, ``sk-svcacct-``, ``sk-admin-``, legacy ``sk-`` + 48),
        # OpenRouter (``sk-or-v1-``), Langfuse (``sk-lf-``) and DeepSeek-style ``sk-<hex>``.
        # A slug (``sk-learn``, ``sk-items-list-for-admin``) has no run with a digit.
        "openai-key",
        "sk-",
        _token(
            "sk-",
            r"(?:(?:proj|svcacct|admin|None|or-v1|lf)-[A-Za-z0-9_-]{16,}"
            r"|(?=[A-Za-z]*[0-9])[A-Za-z0-9]{20,})",
        ),
    ),
    _rule(
        "stripe-key",
        "_live_|_test_|whsec_",
        _token("sk_live_|rk_live_|sk_test_|rk_test_", r"[A-Za-z0-9]{16,}", end=False)
        + "|"
        + _token("whsec_", r"[A-Za-z0-9+/=]{24,}", end=False),
    ),
    _rule(
        "github-token",
        "ghp_|gho_|ghs_|ghu_|ghr_|github_pat_",
        _token("ghp_|gho_|ghs_|ghu_|ghr_", r"[A-Za-z0-9]{20,}", end=False)
        + "|"
        + _token("github_pat_", r"[A-Za-z0-9_]{20,}", end=False),
    ),
    _rule(
        "slack-token",
        "xoxa-|xoxb-|xoxp-|xoxr-|xoxs-|xoxe.|xoxe-|xapp-",
        _token("xoxa-|xoxb-|xoxp-|xoxr-|xoxs-|xoxe.|xoxe-|xapp-", r"[A-Za-z0-9.-]{20,}"),
    ),
    _rule(
        "gitlab-token",
        "glpat-|gldt-|glrt-|glptt-|glft-|glcbt-|glsoat-",
        _token("glpat-|gldt-|glrt-|glptt-|glft-|glcbt-|glsoat-", r"[A-Za-z0-9_-]{20,}", end=False)
        + r"(?:\.[A-Za-z0-9_-]+)*",
    ),
    _rule(
        "grafana-token",
        "glsa_|glc_",
        _token("glsa_|glc_", r"[A-Za-z0-9_+/=-]{32,}", end=False),
    ),
    _rule("huggingface-token", "hf_|api_org_", _token("hf_|api_org_", r"[A-Za-z0-9]{30,}")),
    _rule("npm-token", "npm_", _token("npm_", r"[A-Za-z0-9]{36}")),
    _rule("pypi-token", "pypi-AgE", _token("pypi-", r"AgE[A-Za-z0-9_-]{50,}")),
    _rule(
        "sendgrid-key",
        "SG.",
        _token("SG.", r"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{40,50}"),
    ),
    _rule(
        "google-oauth-token",
        "ya29.|1//0|GOCSPX-",
        _token("ya29.", r"[A-Za-z0-9_-]{20,}", end=False)
        + "|"
        + _token("1//0", r"[A-Za-z0-9_-]{30,}", end=False)
        + "|"
        + _token("GOCSPX-", r"[A-Za-z0-9_-]{24,}", end=False),
    ),
    _rule("google-api-key", "AIza", _token("AIza", r"[0-9A-Za-z_-]{30,}", end=False)),
    _rule(
        "firebase-server-key",
        ":APA91b",
        _token("AAAA", r"[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}", end=False),
    ),
    _rule(
        "aws-access-key-id",
        "AKIA|ASIA",
        r"(?:AKIA|ASIA)(?<![A-Z0-9]....)[A-Z0-9]{16}(?![A-Z0-9])",
    ),
    _rule(
        "azure-client-secret",
        "Q~",
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
    ),
    _rule(
        "telegram-bot-token",
        ":AA",
        r"(?<![0-9])([0-9]{8,10}):AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])",
        lambda m, base: f"{m.group(base + 1)}:{marker('telegram-bot-token')}",
    ),
    _rule(
        "discord-token",
        "MT|Mj|Mz|ND|NT|Nj|Nz|OD|OT",
        r"(?:M[Tjz]|N[DTjz]|O[DT])(?<![A-Za-z0-9_+/.-]..)[A-Za-z0-9]{22,24}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}"
        r"(?![A-Za-z0-9_-])",
    ),
    _rule(
        "shopify-token",
        "shpat_|shpss_|shpca_|shppa_",
        _token("shpat_|shpss_|shpca_|shppa_", r"[a-fA-F0-9]{32}"),
    ),
    _rule("atlassian-token", "ATATT|ATCTT", _token("ATATT|ATCTT", r"[A-Za-z0-9_=-]{40,}")),
    _rule(
        "digitalocean-token",
        "dop_v1_|doo_v1_|dor_v1_",
        _token("dop_v1_|doo_v1_|dor_v1_", r"[a-f0-9]{64}"),
    ),
    _rule(
        "linear-key",
        "lin_api_|lin_oauth_",
        _token("lin_api_|lin_oauth_", r"[A-Za-z0-9]{32,}"),
    ),
    _rule(
        "notion-token",
        "secret_|ntn_",
        _token("secret_", r"[A-Za-z0-9]{43}") + "|" + _token("ntn_", r"[0-9]{11}[A-Za-z0-9]{32,}"),
    ),
    _rule("groq-key", "gsk_", _token("gsk_", r"[A-Za-z0-9]{40,}")),
    _rule("replicate-token", "r8_", _token("r8_", r"(?=[A-Za-z]*[0-9])[A-Za-z0-9]{30,}")),
    _rule("perplexity-key", "pplx-", _token("pplx-", r"[A-Za-z0-9]{40,}")),
    _rule("xai-key", "xai-", _token("xai-", r"(?=[A-Za-z]*[0-9])[A-Za-z0-9]{60,}")),
    _rule(
        "langsmith-key",
        "lsv2_",
        _token("lsv2_pt_|lsv2_sk_", r"[a-f0-9]{32}_[a-f0-9]{10}"),
    ),
    _rule("pinecone-key", "pcsk_", _token("pcsk_", r"[A-Za-z0-9]{5,}_[A-Za-z0-9]{40,}")),
    _rule("databricks-token", "dapi", _token("dapi", r"[a-f0-9]{32}(?:-\d)?")),
    _rule("vault-token", "hvs.|hvb.|hvr.", _token("hvs.|hvb.|hvr.", r"[A-Za-z0-9_-]{24,}")),
    _rule("supabase-token", "sbp_|sb_secret_", _token("sbp_|sb_secret_", r"[A-Za-z0-9_-]{32,}")),
    _rule("sentry-token", "sntrys_|sntryu_", _token("sntrys_|sntryu_", r"[A-Za-z0-9_+/=]{40,}")),
    _rule("postman-key", "PMAK-", _token("PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}")),
    _rule(
        "newrelic-key",
        "NRAK-|NRJS-|NRII-|NRIQ-|NRAL",
        _token("NRAK-|NRJS-|NRII-|NRIQ-", r"[A-Z0-9]{19,}")
        + r"|(?<![A-Za-z0-9])[a-f0-9]{36}NRAL(?![A-Za-z0-9])",
    ),
    _rule("twilio-key", "SK", _token("SK", r"[0-9a-f]{32}")),
    _rule("mailgun-key", "key-", _token("key-", r"[0-9a-f]{32}")),
    _rule("heroku-key", "HRKU-", _token("HRKU-", r"[A-Za-z0-9_-]{40,}")),
    _rule(
        "doppler-token",
        "dp.pt.|dp.st.|dp.sa.|dp.ct.|dp.scim.|dp.audit.",
        _token(
            "dp.pt.|dp.st.|dp.sa.|dp.ct.|dp.scim.|dp.audit.",
            r"(?:[a-z0-9_-]{1,32}\.)?[A-Za-z0-9]{40,}",
        ),
    ),
    _rule(
        "terraform-token",
        ".atlasv1.",
        r"(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
    ),
    _rule("tailscale-key", "tskey-", _token("tskey-", r"[a-z]+-[A-Za-z0-9_-]{20,}")),
    _rule("square-token", "sq0atp-|sq0csp-", _token("sq0atp-|sq0csp-", r"[A-Za-z0-9_-]{22,}")),
    _rule("mapbox-token", "sk.eyJ", _token("sk.", r"eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}")),
    _rule("onepassword-token", "ops_eyJ", _token("ops_", r"eyJ[A-Za-z0-9+/=_-]{40,}")),
    _rule(
        "facebook-token",
        "EAA",
        _token("EAA", r"(?=[A-Za-z]*[0-9])[A-Za-z0-9]{80,}"),
    ),
    _rule(
        "jwt",
        "eyJ",
        _token("eyJ", r"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", end=False),
    ),
    _rule(
        "digest-auth",
        "Digest",
        r"(Digest)(?<![A-Za-z0-9_]Digest)(\s+)(?=[A-Za-z-]+=)"
        r"(?:[A-Za-z-]+=(?:\"[^\"\n]*\"|[^\s,\"]*)(?:[ \t]*,[ \t]*)?)+",
        lambda m, base: f"{m.group(base + 1)}{m.group(base + 2)}{marker('digest-auth')}",
    ),
    _rule(
        "bearer",
        "Bearer|BEARER",
        r"(Bearer|bearer|BEARER)(?<![A-Za-z0-9_]......)(\s+)([A-Za-z0-9._~+/=-]{8,})",
        _scheme_token("bearer"),
    ),
    _rule(
        "basic-auth",
        "Basic|BASIC",
        r"(Basic|basic|BASIC)(?<![A-Za-z0-9_].....)(\s+)([A-Za-z0-9+/]{6,}={0,2})",
        _basic,
    ),
    _rule(
        "auth-header",
        _SCHEMES,
        rf"\b({_SCHEMES})([ \t]+)([A-Za-z0-9._~+/=:-]{{8,}})",
        _scheme_token("auth-header"),
    ),
    _rule(
        # .netrc: ``machine host login user password secret``.
        "netrc-password",
        "machine",
        r"(\b(?:machine\s+\S+|default)\s+(?:login\s+\S+\s+)?(?:password|passwd)\s+)"
        r"(?!\[REDACTED)\S+",
        _kept_prefix("netrc-password"),
    ),
)
