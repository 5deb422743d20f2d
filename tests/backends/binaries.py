"""Where build.sh puts the real Collector and Jaeger binaries, and which versions they are.

The versions live in ``versions.env`` (KEY=VALUE lines, also sourced by
build.sh); the Collector's folder is also keyed by a hash of the builder
manifest, so a manifest change is never served by an old binary.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERSIONS_FILE = HERE / "versions.env"
MANIFEST = HERE / "otelcol-builder.yaml"
BUILD_SCRIPT = HERE / "build.sh"
CACHE_DEFAULT = "/opt/flow-xray-backends"


def versions() -> dict[str, str]:
    """The pinned versions, e.g. ``{"COLLECTOR_VERSION": "0.161.0", ...}``."""
    pinned: dict[str, str] = {}
    for line in VERSIONS_FILE.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            pinned[key.strip()] = value.strip()
    return pinned


def cache_dir() -> Path:
    """The cache folder build.sh writes to (``FLOW_XRAY_BACKENDS_DIR`` overrides it)."""
    return Path(os.environ.get("FLOW_XRAY_BACKENDS_DIR", CACHE_DEFAULT))


def manifest_hash() -> str:
    """The first 12 hex digits of the manifest's SHA-256, as build.sh computes them."""
    return hashlib.sha256(MANIFEST.read_bytes()).hexdigest()[:12]


def otelcol_path() -> Path:
    """The Collector binary built from the manifest at the pinned version."""
    version = versions()["COLLECTOR_VERSION"]
    return cache_dir() / f"otelcol-{version}-{manifest_hash()}" / "otelcol-flow-xray"


def jaeger_path() -> Path:
    """The Jaeger v2 binary at the pinned version."""
    return cache_dir() / f"jaeger-{versions()['JAEGER_VERSION']}" / "jaeger"


def missing_reason(path: Path, what: str) -> str | None:
    """None when ``path`` is an executable, else why a test cannot run."""
    if os.access(path, os.X_OK):
        return None
    return f"{what} not built at {path} (run tests/backends/build.sh)"
