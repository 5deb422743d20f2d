"""The names ``flow_xray`` exports, and where its version comes from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import flow_xray

ROOT = Path(__file__).resolve().parents[1]


def test_every_exported_name_resolves() -> None:
    """Each name in ``flow_xray.__all__`` can be imported from the package."""
    missing = [name for name in flow_xray.__all__ if getattr(flow_xray, name, None) is None]
    assert missing == []


def test_library_helpers_are_importable_from_the_package() -> None:
    """The helpers the README documents live on the package itself."""
    from flow_xray import (
        Limits,
        configure,
        flush,
        get_limits,
        load_trace,
        register_prices,
        set_limits,
        set_redaction,
        shutdown,
    )

    assert isinstance(get_limits(), Limits)
    helpers = (configure, flush, load_trace, register_prices, set_limits, set_redaction)
    assert all(callable(f) for f in helpers)
    assert callable(shutdown)


def test_the_version_has_one_source() -> None:
    """pyproject.toml reads the version from ``flow_xray.__version__`` and states none itself."""
    tomllib = pytest.importorskip("tomllib")  # (Python 3.11+)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == "flow_xray/__init__.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+", flow_xray.__version__)
