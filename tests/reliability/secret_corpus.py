"""The two corpora the secret scrubbing is measured on: credentials (recall) and ordinary values.

`CREDENTIALS`: each credential format people paste into prompts, configs,
headers and logs, as the text it comes in (``Authorization: Bot ...``, a
``.netrc`` line, a service-account JSON, a connection string), with the
fragments of it none of which may survive anywhere. The secret parts are made
by `fake` (fixed seeds: the same text every run), each distinctive enough
that finding one in a sink is a leak, not a chance.

`ORDINARY`: values of LLM and developer work that look a little like secrets
(token fields of logprobs, ``*_token`` settings of tokenizers, pagination
cursors, ``PWD``, slugs starting ``sk-``, SHAs, UUIDs, base64 images, public
keys and certificates, provider ids), each under the name it comes with: all
must survive unchanged.
"""

from __future__ import annotations

import base64
import json
import random
import string
from typing import NamedTuple

_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "_-"


def fake(seed: int, size: int, alphabet: str = _ALNUM) -> str:
    """``size`` characters of ``alphabet``, the same for the same ``seed`` (with a digit and both
    cases when the alphabet has them, as real tokens do)."""
    chosen = random.Random(seed)
    while True:
        text = "".join(chosen.choice(alphabet) for _ in range(size))
        kinds = [set(text) & set(s) for s in (string.digits, string.ascii_lowercase)]
        if all(kinds) or not all(set(alphabet) & set(s) for s in (string.digits, "abc")):
            return text


class Credential(NamedTuple):
    """A credential as it is pasted, and the fragments of it that must not survive."""

    what: str
    text: str
    fragments: tuple[str, ...]


def _c(what: str, text: str, *fragments: str) -> Credential:
    return Credential(what, text, fragments)


_K = {i: fake(1000 + i, 64) for i in range(80)}  # a distinctive secret body per entry
_PEM = "\n".join(fake(7, 64, _B64) for _ in range(6))
_SA_KEY = "-----BEGIN PRIVATE KEY-----\n" + _PEM + "\n-----END PRIVATE KEY-----\n"
_KUBE_KEY = base64.b64encode(
    f"-----BEGIN RSA PRIVATE KEY-----\n{_PEM}\n-----END RSA PRIVATE KEY-----\n".encode()
).decode()
_DOCKER_AUTH = base64.b64encode(f"deploy:{_K[30][:20]}".encode()).decode()
_DISCORD = f"MTk4NjIyNDgzNDcxOTI1MjQ4.{_K[31][:6]}.{_K[31][6:33]}"
_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    + base64.urlsafe_b64encode(b'{"sub":"svc-42","role":"service_role"}').decode().rstrip("=")
    + "."
    + fake(8, 43, _URLSAFE)
)

CREDENTIALS: tuple[Credential, ...] = (
    # --- the shapes the README promised that leaked -------------------------------
    _c("Authorization: Bot", f"Authorization: Bot {_DISCORD}", _DISCORD[25:]),
    _c("Authorization: SSWS (Okta)", f"Authorization: SSWS 00{_K[1][:40]}", _K[1][:40]),
    _c("Authorization: ApiKey", f"Authorization: ApiKey {_K[2][:32]}", _K[2][:32]),
    _c("Authorization: Token", f"Authorization: Token {_K[3][:40]}", _K[3][:40]),
    _c(
        "Authorization: Digest",
        f'Authorization: Digest username="svc", realm="api", nonce="{_K[4][:16]}", '
        f'uri="/v1", response="{_K[4][16:48]}"',
        _K[4][16:48],
    ),
    _c("Authorization: Negotiate", f"Authorization: Negotiate YII{_K[5][:60]}", _K[5][:60]),
    _c(
        "password= with , & ; )",
        f"password={_K[6][:6]},{_K[6][6:12]}&{_K[6][12:18]};x)y",
        _K[6][:18],
    ),
    _c(
        "Pwd= in an ODBC string",
        f"Driver={{ODBC}};Server=db;Uid=sa;Pwd={_K[7][:8]};z&{_K[7][8:14]};",
        _K[7][:14],
    ),
    _c(
        "Cookie: every cookie",
        f"Cookie: theme=dark; sid={_K[8][:24]}; pref={_K[8][24:48]}",
        _K[8][:48],
    ),
    _c("Set-Cookie", f"Set-Cookie: __Host-auth={_K[9][:32]}; Path=/; Secure; HttpOnly", _K[9][:32]),
    _c("Bearer header", f"Authorization: Bearer {_K[10][:40]}", _K[10][:40]),
    _c(
        "Basic header",
        "Authorization: Basic " + base64.b64encode(f"adm:{_K[11][:16]}".encode()).decode(),
        base64.b64encode(f"adm:{_K[11][:16]}".encode()).decode()[:20],
    ),
    # --- provider keys and tokens ------------------------------------------------------
    _c("OpenAI project key", f"sk-proj-{_K[12]}", _K[12][:40]),
    _c("OpenAI legacy key", f"sk-{_K[13][:20]}T3BlbkFJ{_K[13][20:40]}", _K[13][:20]),
    _c("Anthropic key", f"sk-ant-api03-{_K[14]}-{_K[15][:30]}AA", _K[14][:40]),
    _c("OpenRouter key", f"sk-or-v1-{fake(16, 64, _HEX)}", fake(16, 64, _HEX)[:40]),
    _c("Groq key", f"gsk_{_K[17][:52]}", _K[17][:40]),
    _c("Replicate token", f"r8_{_K[18][:37]}", _K[18][:37]),
    _c("Perplexity key", f"pplx-{_K[19][:48]}", _K[19][:40]),
    _c("xAI key", f"xai-{_K[20]}{_K[21][:16]}", _K[20][:40]),
    _c("Hugging Face token", f"hf_{_K[22][:34]}", _K[22][:34]),
    _c("LangSmith key", f"lsv2_pt_{fake(23, 32, _HEX)}_{fake(24, 10, _HEX)}", fake(23, 32, _HEX)),
    _c(
        "Langfuse secret key",
        "sk-lf-7a1c9e2b-4d3f-4e8a-9b6c-2f0e1d3c5a7b",
        "7a1c9e2b-4d3f-4e8a-9b6c",
    ),
    _c("Pinecone key", f"pcsk_5x9Qz_{_K[25][:60]}", _K[25][:40]),
    _c("GitHub classic token", f"ghp_{_K[26][:36]}", _K[26][:36]),
    _c("GitHub fine-grained token", f"github_pat_11A{_K[27][:19]}_{_K[27][19:78]}", _K[27][:40]),
    _c("GitLab token", f"glpat-{_K[28][:20]}", _K[28][:20]),
    _c("Stripe restricted key", f"rk_live_51H{_K[29][:40]}", _K[29][:40]),
    _c("Stripe webhook secret", f"whsec_{_K[32][:32]}", _K[32][:32]),
    _c("Twilio API key", f"SK{fake(33, 32, _HEX)}", fake(33, 32, _HEX)),
    _c("Twilio auth token (env)", f"TWILIO_AUTH_TOKEN={fake(34, 32, _HEX)}", fake(34, 32, _HEX)),
    _c("Mailgun key", f"key-{fake(35, 32, _HEX)}", fake(35, 32, _HEX)),
    _c("Datadog API key (env)", f"DD_API_KEY={fake(36, 32, _HEX)}", fake(36, 32, _HEX)),
    _c("Datadog app key header", f"DD-APPLICATION-KEY: {fake(37, 40, _HEX)}", fake(37, 40, _HEX)),
    _c(
        "New Relic user key",
        f"NRAK-{fake(38, 27, string.ascii_uppercase + string.digits)}",
        fake(38, 27, string.ascii_uppercase + string.digits),
    ),
    _c("PyPI token", f"pypi-AgEIcHlwaS5vcmc{_K[39]}", _K[39][:40]),
    _c("npm token", f"npm_{_K[40][:36]}", _K[40][:36]),
    _c(".npmrc auth token", f"//registry.npmjs.org/:_authToken={_K[41][:36]}", _K[41][:36]),
    _c(
        "Telegram bot token",
        f"https://api.telegram.org/bot7123456789:AA{_K[42][:33]}/getMe",
        _K[42][:33],
    ),
    _c("Discord bot token", _DISCORD, _DISCORD[25:]),
    _c("Discord webhook", f"https://discord.com/api/webhooks/1234567890123/{_K[43]}", _K[43][:40]),
    _c("Slack bot token", f"xoxb-2481632641-1234567890123-{_K[44][:24]}", _K[44][:24]),
    _c(
        "Slack app token",
        f"xapp-1-A0123456789-1234567890123-{fake(45, 64, _HEX)}",
        fake(45, 64, _HEX)[:40],
    ),
    _c("Shopify token", f"shpat_{fake(46, 32, _HEX)}", fake(46, 32, _HEX)),
    _c("Atlassian API token", f"ATATT3xFfGF0{_K[47]}{_K[48]}=A1B2C3D4", _K[47][:40]),
    _c("DigitalOcean token", f"dop_v1_{fake(49, 64, _HEX)}", fake(49, 64, _HEX)[:40]),
    _c("Linear key", f"lin_api_{_K[50][:40]}", _K[50][:40]),
    _c("Notion secret", f"secret_{_K[51][:43]}", _K[51][:43]),
    _c("Notion token", f"ntn_12345678901{_K[52][:35]}", _K[52][:35]),
    _c("Vault token", f"VAULT_TOKEN=hvs.{_K[53][:90]}", _K[53][:40]),
    _c("Supabase access token", f"sbp_{fake(54, 40, _HEX)}", fake(54, 40, _HEX)),
    _c("Supabase service-role JWT", f"SUPABASE_SERVICE_ROLE_KEY={_JWT}", _JWT[40:80]),
    _c(
        "Firebase server key",
        f"AAAA{_K[55][:7]}:APA91b{_K[55][7:64]}{_K[56]}{_K[57][:20]}",
        _K[55][7:60],
    ),
    _c("Google OAuth access token", f"ya29.a0AfB_{_K[17][52:64]}{_K[18][37:64]}", _K[18][37:64]),
    _c(
        "SendGrid key",
        f"SG.{_K[19][48:64]}{_K[20][:6]}.{_K[21][16:59]}",
        _K[21][16:59],
    ),
    _c(
        "AWS session token in a URL",
        f"https://x.s3.amazonaws.com/k?X-Amz-Security-Token={_K[22][34:64]}",
        _K[22][34:64],
    ),
    _c("1Password service account token", f"ops_eyJzaWduSW5BZGRyZXNz{_K[23][:50]}", _K[23][:50]),
    _c(
        "Facebook access token",
        f"EAACEdEose0cBA{_K[24]}{_K[25][60:64]}{_K[26][36:64]}",
        _K[24][:40],
    ),
    _c("Google API key", f"AIza{_K[58][:35]}", _K[58][:35]),
    _c("Google OAuth client secret", f"GOCSPX-{_K[59][:28]}", _K[59][:28]),
    _c("Google refresh token", f"1//0g{_K[60]}", _K[60][:40]),
    _c("Sentry auth token", f"sntrys_{_K[61]}{_K[62][:20]}", _K[61][:40]),
    _c("Postman key", f"PMAK-{fake(63, 24, _HEX)}-{fake(64, 34, _HEX)}", fake(64, 34, _HEX)),
    _c("Databricks token", f"dapi{fake(65, 32, _HEX)}", fake(65, 32, _HEX)),
    _c("Azure AD client secret", f"{_K[66][:3]}8Q~{_K[66][3:37]}", _K[66][3:37]),
    _c(
        "Azure storage connection string",
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={_K[67]}{_K[68][:22]}==;EndpointSuffix=core.windows.net",
        _K[67][:40],
    ),
    _c(
        "Azure Service Bus connection string",
        f"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={_K[69][:43]}=",
        _K[69][:43],
    ),
    _c(
        "AWS config secret key",
        "[default]\naws_access_key_id = AKIAZ7Q3LM2XP9RT4WVB\n"
        f"aws_secret_access_key = {fake(70, 40, _B64)}\n",
        fake(70, 40, _B64),
    ),
    _c(
        "AWS JSON credentials",
        json.dumps(
            {
                "AccessKeyId": "ASIAZ7Q3LM2XP9RT4WVC",
                "SecretAccessKey": fake(71, 40, _B64),
                "SessionToken": _K[71],
            }
        ),
        fake(71, 40, _B64),
        _K[71][:40],
    ),
    _c(
        "GCP service-account JSON",
        json.dumps(
            {
                "type": "service_account",
                "private_key_id": fake(72, 40, _HEX),
                "private_key": _SA_KEY,
            }
        ),
        fake(72, 40, _HEX),
        _PEM[:40],
    ),
    _c(
        "OpenSSH private key",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{_PEM}\n-----END OPENSSH PRIVATE KEY-----",
        _PEM[:40],
    ),
    _c(
        "PGP private key block",
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{_PEM}\n-----END PGP PRIVATE KEY BLOCK-----",
        _PEM[64:104],
    ),
    _c(
        "kubeconfig client key",
        f"users:\n- name: admin\n  user:\n    client-key-data: {_KUBE_KEY}\n",
        _KUBE_KEY[40:80],
    ),
    _c("kubeconfig token", f"users:\n- name: sa\n  user:\n    token: {_K[73][:52]}\n", _K[73][:52]),
    _c(
        "Docker config auth",
        json.dumps({"auths": {"ghcr.io": {"auth": _DOCKER_AUTH}}}),
        _DOCKER_AUTH,
    ),
    _c(
        ".netrc",
        f"machine api.heroku.com\n  login me@example.com\n  password {_K[74][:36]}\n",
        _K[74][:36],
    ),
    _c(".netrc one line", f"machine github.com login bot password {_K[75][:36]}", _K[75][:36]),
    _c(
        "MongoDB SRV DSN",
        f"mongodb+srv://app:{_K[76][:20]}@cluster0.ab1cd.mongodb.net/db",
        _K[76][:20],
    ),
    _c("MySQL DSN", f"mysql+pymysql://root:{_K[77][:16]}%40x@db:3306/app", _K[77][:16]),
    _c("Redis DSN", f"rediss://default:{_K[78][:24]}@cache.example.com:6380/0", _K[78][:24]),
    _c(
        "JDBC URL",
        f"jdbc:postgresql://db:5432/app?user=app&password={_K[79][:20]}&ssl=true",
        _K[79][:20],
    ),
    _c(
        "libpq key-value DSN",
        f"host=db port=5432 user=app password={_K[0][:20]} dbname=app",
        _K[0][:20],
    ),
    _c("Oracle EZConnect", f"sqlplus scott/{_K[0][20:36]}@db.example.com:1521/ORCL", _K[0][20:36]),
    _c(
        "basic auth in a URL",
        f"https://deploy:{_K[0][36:56]}@git.example.com/org/repo.git",
        _K[0][36:56],
    ),
    _c("X-Api-Key header", f"X-Api-Key: {_K[1][40:64]}", _K[1][40:64]),
    _c("env file SECRET", f"STRIPE_SIGNING_SECRET={_K[2][32:64]}", _K[2][32:64]),
    _c("env file PASS", f"SMTP_PASS={_K[3][40:56]}", _K[3][40:56]),
    _c("Heroku key", f"HRKU-{_K[4][48:64]}{_K[5][:40]}", _K[5][:40]),
    _c("Doppler token", f"dp.st.prd.{_K[6][18:64]}", _K[6][18:58]),
    _c("Tailscale key", f"tskey-auth-{_K[7][14:40]}-{_K[7][40:64]}", _K[7][14:40]),
    _c(
        "Grafana service account token",
        f"glsa_{_K[8][48:64]}{_K[9][32:48]}_{fake(9, 8, _HEX)}",
        _K[9][32:48],
    ),
    _c(
        "age secret key",
        "AGE-SECRET-KEY-1" + fake(10, 58, string.ascii_uppercase + string.digits),
        fake(10, 58, string.ascii_uppercase + string.digits)[:40],
    ),
    _c(
        "Terraform Cloud token",
        f"{_K[10][40:54]}.atlasv1.{_K[11][16:64]}{_K[12][:30]}",
        _K[11][16:56],
    ),
    _c(
        "Mapbox secret token",
        f"sk.eyJ1IjoiYWNtZSIsImEiOiJ{_K[13][40:60]}.{_K[13][:22]}",
        _K[13][40:60],
    ),
    _c("Square token", f"sq0atp-{_K[14][40:62]}", _K[14][40:62]),
    _c("AWS access key id", "AKIAZ7Q3LM2XP9RT4WVD", "Z7Q3LM2XP9RT4WVD"),
    _c(
        "signed S3 URL",
        "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature="
        + fake(15, 64, _HEX),
        fake(15, 64, _HEX)[:40],
    ),
    _c(
        "Slack webhook",
        f"https://hooks.slack.com/services/T0ABCD123/B0EFGH456/{_K[16][:24]}",
        _K[16][:24],
    ),
    _c("JWT", _JWT, _JWT[40:80]),
)

# --- ordinary values: every one must survive --------------------------------------
_LOGPROBS = {
    "token": " Paris",
    "logprob": -0.0012,
    "bytes": [32, 80, 97, 114, 105, 115],
    "top_logprobs": [{"token": "London", "logprob": -7.1}],
}
_PNG = "data:image/png;base64," + base64.b64encode(bytes(random.Random(3).randbytes(600))).decode()
_CERT_B64 = base64.b64encode(
    f"-----BEGIN CERTIFICATE-----\n{_PEM}\n-----END CERTIFICATE-----\n".encode()
).decode()


class Ordinary(NamedTuple):
    """An ordinary value under the name it comes with (None: a bare value)."""

    what: str
    name: str | None
    value: object


ORDINARY: tuple[Ordinary, ...] = (
    Ordinary("logprobs entry", "logprobs", _LOGPROBS),
    Ordinary("logprobs token", "token", " Paris"),
    Ordinary("token text without a blank", "token", "ization"),
    Ordinary("token id", "token", 15339),
    Ordinary("token ids", "token_ids", [15339, 1917, 0]),
    Ordinary("pad_token", "pad_token", "<pad>"),
    Ordinary("bos_token", "bos_token", "<|begin_of_text|>"),
    Ordinary("eos_token", "eos_token", "</s>"),
    Ordinary("unk_token", "unk_token", "[UNK]"),
    Ordinary("next_token cursor", "next_token", "eyJvZmZzZXQiOjEwMH0="),
    Ordinary("page token", "nextPageToken", "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0"),
    Ordinary("PWD", "PWD", "/home/dev/projects/flow-xray"),
    Ordinary("OLDPWD", "OLDPWD", "/home/dev"),
    Ordinary("sk-learn slug", "package", "sk-learn"),
    Ordinary("sk- slug", "slug", "sk-items-list-for-the-admin-page"),
    Ordinary("git SHA", "sha", "9fceb02d0ae598e95dc970b74767f19372d61af8"),
    Ordinary("short SHA", "commit", "9fceb02"),
    Ordinary("UUID", "request_id", "123e4567-e89b-12d3-a456-426614174000"),
    Ordinary("base64 image", "image_url", _PNG),
    Ordinary("SHA-256 digest", "digest", "sha256:" + "a3f5" * 16),
    Ordinary(
        "SSH public key",
        "public_key",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
        " dev@laptop",
    ),
    Ordinary("certificate data", "client-certificate-data", _CERT_B64),
    Ordinary(
        "public key PEM",
        "pem",
        f"-----BEGIN PUBLIC KEY-----\n{_PEM[:128]}\n-----END PUBLIC KEY-----",
    ),
    Ordinary("chat completion id", "id", "chatcmpl-9xYzAbCdEf0123456789GhIjKl"),
    Ordinary("tool call id", "tool_call_id", "call_a1B2c3D4e5F6g7H8i9J0kLmN"),
    Ordinary("Anthropic message id", "id", "msg_01XFDUDYJgAACzvnptvVoYEL"),
    Ordinary("Anthropic tool use id", "id", "toolu_01A09q90qw90lq917835lq9"),
    Ordinary("model name", "model", "gpt-4o-mini-2024-07-18"),
    Ordinary("HF model id", "model", "meta-llama/Llama-3.1-8B-Instruct"),
    Ordinary(
        "token counts", "usage", {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42}
    ),
    Ordinary("max_tokens", "max_tokens", 1024),
    Ordinary("tokenizer name", "tokenizer", "cl100k_base"),
    Ordinary(
        "URL with port and query", "url", "https://api.example.com:8443/v1/items?page=2&limit=50"
    ),
    Ordinary("dev server URL", "url", "http://localhost:3000/@vite/client"),
    Ordinary("git remote", "remote", "git@github.com:org/repo.git"),
    Ordinary("email", "email", "jane.doe@example.com"),
    Ordinary("session date", "session", "2024-05-01"),
    Ordinary(
        "session object repr", "session", "<requests.sessions.Session object at 0x7f3a2c1b9d90>"
    ),
    Ordinary(
        "prose about auth",
        "text",
        "Bearer authentication is described in RFC 6750; Basic usage too.",
    ),
    Ordinary("prose about tokens", "text", "Token limits: each token is about 4 characters."),
    Ordinary("pass flag", "pass", True),
    Ordinary("ISO timestamp", "created", "2024-05-01T12:34:56.789Z"),
    Ordinary("semver", "version", "v1.2.3-rc.1+build.5"),
    Ordinary("AWS ARN", "arn", "arn:aws:iam::123456789012:role/service-role/lambda-exec"),
    Ordinary("S3 URL", "url", "s3://my-bucket/data/2024/05/01/part-0001.parquet"),
    Ordinary("Windows path", "path", "C:\\Users\\dev\\AppData\\Local\\Temp"),
    Ordinary("hex colour and CSS", "style", "color: #1a2b3c; margin: 0 auto;"),
    Ordinary("cron", "schedule", "*/5 * * * *"),
    Ordinary(
        "python code", "code", "def tokenize(text: str) -> list[str]:\n    return text.split()"
    ),
    Ordinary("md5", "md5", "d41d8cd98f00b204e9800998ecf8427e"),
    Ordinary(
        "embedding base64", "embedding", base64.b64encode(random.Random(4).randbytes(96)).decode()
    ),
    Ordinary("key value prose", "text", "key: value, primary key: id, author: Jane, monkey=1"),
)
