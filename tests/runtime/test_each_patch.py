"""Every process-wide patch flow-xray makes installs, survives a second install, and uninstalls.

Uninstalling puts the original object back, so a program that calls
``flow_xray.shutdown()`` leaves the standard library and OpenTelemetry as it
found them; whatever needs a patch installs it again (see test_shutdown.py).
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import process as futures_process
from multiprocessing import pool, process

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import ProxyTracer

from flow_xray.runtime import captures, patches, process_hooks, run_hooks, tracer
from flow_xray.sdk import otlp, processes, processor
from flow_xray.sdk.process_handover import ProcessHandover

# (patch, the object it changes, the attributes it replaces)
ATTRIBUTE_PATCHES = [
    (tracer.PROXY_FALLBACK, ProxyTracer, ("_tracer",)),
    (process_hooks.POPEN, subprocess.Popen, ("__init__",)),
    (process_hooks.PROCESS_START, process.BaseProcess, ("start", "_bootstrap")),
    (
        process_hooks.POOL,
        pool.Pool,
        ("apply_async", "_map_async", "imap", "imap_unordered"),
    ),
    (process_hooks.PROCESS_POOL_EXECUTOR, futures_process.ProcessPoolExecutor, ("submit",)),
    (run_hooks.EXEC, os, run_hooks._EXEC_NAMES),
]


@pytest.fixture
def uninstalled() -> Iterator[Callable[[patches.Patch], None]]:
    """Uninstall a patch for the test (it starts from the original); uninstalled again after."""
    used: list[str] = []

    def take(patch: patches.Patch) -> None:
        used.append(patch.name)
        patches.uninstall(patch.name)

    yield take
    for name in used:
        patches.uninstall(name)


@pytest.mark.parametrize(
    ("patch", "owner", "attributes"),
    ATTRIBUTE_PATCHES,
    ids=[p.name for p, _, _ in ATTRIBUTE_PATCHES],
)
def test_an_attribute_patch_installs_twice_and_uninstalls_to_the_original(
    uninstalled: Callable[[patches.Patch], None],
    patch: patches.AttributePatch,
    owner: object,
    attributes: tuple[str, ...],
) -> None:
    """Installed, each attribute is flow-xray's; again, unchanged; uninstalled, the original."""
    uninstalled(patch)
    originals = [vars(owner)[name] for name in attributes]
    assert patches.install(patch)
    installed = [vars(owner)[name] for name in attributes]
    assert all(new is not old for new, old in zip(installed, originals, strict=True))
    assert patches.install(patch)
    assert [vars(owner)[name] for name in attributes] == installed
    patches.uninstall(patch.name)
    assert all(vars(owner)[name] is old for name, old in zip(attributes, originals, strict=True))


def test_the_process_hooks_install_with_their_handover(
    uninstalled: Callable[[patches.Patch], None],
) -> None:
    """`process_hooks.install` installs the four process-start patches, inert while inactive."""
    hooks = (
        process_hooks.POPEN,
        process_hooks.PROCESS_START,
        process_hooks.POOL,
        process_hooks.PROCESS_POOL_EXECUTOR,
    )
    for patch in hooks:
        uninstalled(patch)
    process_hooks.install(ProcessHandover(lambda: False, dict))
    assert all(patches.is_installed(p.name) for p in hooks)
    done = subprocess.run(["true"], check=False)  # an inactive hand-over adds nothing
    assert done.returncode == 0


def test_the_exec_patch_reports_only_inside_the_watch() -> None:
    """``os.execv`` calls back (here an exec that fails) only while watched; then it is Python's."""
    original = os.execv
    calls: list[str] = []
    with run_hooks.exec_watched(calls.append):
        assert os.execv is not original
        with pytest.raises(OSError):
            os.execv("/nonexistent/flow-xray-test", ["x"])
    assert calls == ["execv"] and os.execv is original


def test_the_exporter_log_filter_installs_and_uninstalls(
    uninstalled: Callable[[patches.Patch], None],
) -> None:
    """The filter quieting the SDK exporters' logs goes on each of their loggers, and comes off."""
    patch = otlp._QUIET_LOGS
    uninstalled(patch)
    loggers = [logging.getLogger(name) for name in patch.loggers]
    before = [list(logger.filters) for logger in loggers]
    otlp.LossCountingExporter(InMemorySpanExporter())  # its first exporter installs it
    otlp.LossCountingExporter(InMemorySpanExporter())
    assert [logger.filters.count(patch.log_filter) for logger in loggers] == [1] * len(loggers)
    patches.uninstall(patch.name)
    assert [list(logger.filters) for logger in loggers] == before


FORK_HOOKS = [
    captures._FORGET_AT_FORK,
    processor._FORGET_AT_FORK,
    processes._AT_FORK,
    otlp._RESTART_COUNTS_AT_FORK,
    run_hooks.SIGTERM_ACROSS_FORK,
]


@pytest.mark.parametrize("hook", FORK_HOOKS, ids=[h.name for h in FORK_HOOKS])
def test_a_fork_hook_is_dispatched_once_and_uninstalls(
    uninstalled: Callable[[patches.Patch], None], hook: patches.ForkHook
) -> None:
    """Each fork hook runs once per fork however often installed, and not at all uninstalled."""
    uninstalled(hook)
    assert hook.name not in patches.fork_hooks()
    patches.install(hook)
    patches.install(hook)
    assert patches.fork_hooks().count(hook.name) == 1
    patches.uninstall(hook.name)
    assert hook.name not in patches.fork_hooks()


def test_the_bootstrap_provider_watch_is_adopted_and_undone(
    monkeypatch: pytest.MonkeyPatch, uninstalled: Callable[[patches.Patch], None]
) -> None:
    """The child bootstrap's ``set_tracer_provider`` wrapper comes out again on uninstall."""
    uninstalled(process_hooks.PROVIDER_WATCH)
    original = trace_api.set_tracer_provider

    def watching(provider: object) -> None:
        original(provider)  # type: ignore[arg-type]

    watching.__wrapped__ = original  # type: ignore[attr-defined]
    watching._flow_xray_bootstrap = True  # type: ignore[attr-defined]
    monkeypatch.setattr(trace_api, "set_tracer_provider", watching)
    assert patches.install(process_hooks.PROVIDER_WATCH)
    assert patches.install(process_hooks.PROVIDER_WATCH)
    patches.uninstall(process_hooks.PROVIDER_WATCH.name)
    assert trace_api.set_tracer_provider is original
