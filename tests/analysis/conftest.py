"""Fixtures for the analysis tests: the `shop` package under fixtures/, indexed and run."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator

import pytest
from analysis_fixtures import FIXTURES, SHOP

from flow_xray import TraceResult, trace
from flow_xray.analysis import StaticIndex


@pytest.fixture(scope="session")
def shop_index() -> StaticIndex:
    """The static index of the fixture package (built once: building never runs it)."""
    return StaticIndex.build([SHOP])


@pytest.fixture
def run_shop() -> Iterator[Callable[..., TraceResult]]:
    """Return ``run(*argv) -> TraceResult``: run shop.cli.main under a capture."""
    sys.path.insert(0, str(FIXTURES))
    try:
        import shop.cli

        def run(*argv: str) -> TraceResult:
            with trace.capture() as result:
                shop.cli.main(list(argv))
            return result

        yield run
    finally:
        sys.path.remove(str(FIXTURES))
