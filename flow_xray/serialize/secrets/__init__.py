"""What gets scrubbed: secret-looking names, and credentials inside any text. No OpenTelemetry.

Two rule sets, both on by default (``Limits.redact``):

- **Names** (`flow_xray.serialize.secrets.names`). An argument, mapping key,
  ``attributes=`` / ``trace.annotate`` key or ``name=value`` inside text whose
  name looks secret has its value replaced by ``"[REDACTED]"`` (`is_secret_name`;
  for ``token``, ``session`` and ``PWD`` the value decides, `hides_value`).
  ``Limits.redact_patterns`` adds regexes.
- **Formats** (`flow_xray.serialize.secrets.formats`). Credentials found inside
  any string (prompts, reprs, exception messages, tracebacks, CLI messages, keys)
  are replaced by ``[REDACTED:<kind>]``, the kind naming what was removed
  (`VALUE_RULES`). ``Limits.redact_value_patterns`` adds regexes (kind ``custom``).

``Limits.redact_allow`` lists names (compared case- and separator-insensitively)
that are never secret, and format kinds that are not scrubbed. `scrub_text`
(`flow_xray.serialize.secrets.scan`) applies both to text, at a cost close to
nothing for ordinary values.
"""

from __future__ import annotations

from flow_xray.serialize.secrets.formats import VALUE_RULES, marker
from flow_xray.serialize.secrets.names import (
    NAME_CACHE_CAP,
    REDACTED,
    SECRET_LAST_WORDS,
    SECRET_PAIRS,
    SECRET_WORDS,
    could_be_token,
    hides_value,
    is_secret_name,
    name_pattern,
    normalized_name,
    plain_names,
    secret_name_cache,
)
from flow_xray.serialize.secrets.scan import (
    CLEAN_CAP,
    CLEAN_MAX_LEN,
    SOLID_MIN,
    clean_strings,
    scrub_text,
)

__all__ = [
    "CLEAN_CAP",
    "CLEAN_MAX_LEN",
    "NAME_CACHE_CAP",
    "REDACTED",
    "SECRET_LAST_WORDS",
    "SECRET_PAIRS",
    "SECRET_WORDS",
    "SOLID_MIN",
    "VALUE_RULES",
    "clean_strings",
    "could_be_token",
    "hides_value",
    "is_secret_name",
    "marker",
    "name_pattern",
    "normalized_name",
    "plain_names",
    "scrub_text",
    "secret_name_cache",
]
