"""``trace.capture(processes=True)`` and ``propagate`` from the library, without the CLI."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
import workers
from processes_support import SCRIPTS

from flow_xray import propagate, trace
from flow_xray.tree.model import TraceResult

HERE = Path(__file__).parent


def _child_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -c CODE`` with this folder importable (env: os.environ plus ``env``)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


def test_pool_work_outside_any_traced_call_is_collected() -> None:
    """No traced call around pool.map: the tasks are found by the capture's tag, as roots."""
    with (
        trace.capture(processes=True) as result,
        multiprocessing.get_context("spawn").Pool(2) as pool,
    ):
        assert pool.map(workers.square, range(20)) == [x * x for x in range(20)]
    assert sorted(node.inputs["x"] for node in result.roots) == list(range(20))
    assert all(node.pid not in (None, os.getpid()) for node in result)


def test_without_processes_child_calls_stay_out() -> None:
    """A plain capture collects only this process: pool tasks are not in it."""
    with trace.capture() as result, multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(workers.square, range(5))
    assert list(result) == []


@pytest.mark.slow
def test_concurrent_captures_get_only_their_own_children() -> None:
    """Two threads, two processes captures, two pools: each result holds only its own tasks."""
    results: dict[str, TraceResult] = {}

    def run(name: str, items: range) -> None:
        with (
            trace.capture(processes=True) as result,
            ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool,
        ):
            list(pool.map(workers.square, items))
        results[name] = result

    threads = [
        threading.Thread(target=run, args=("low", range(0, 10))),
        threading.Thread(target=run, args=("high", range(100, 110))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(n.inputs["x"] for n in results["low"]) == list(range(0, 10))
    assert sorted(n.inputs["x"] for n in results["high"]) == list(range(100, 110))


def test_subprocess_outside_a_traced_call_joins_a_context_capture() -> None:
    """A Python subprocess started directly in the block carries the capture's tag along."""
    with trace.capture(processes=True) as result:
        _child_python("import workers; workers.square(7)")
    [node] = list(result)
    assert (node.name, node.inputs, node.output) == ("square", {"x": 7}, 49)


def test_child_using_only_opentelemetry_joins_when_it_sets_a_provider() -> None:
    """A child that never imports flow-xray but sets a global SDK provider is collected."""
    code = (
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "trace.set_tracer_provider(TracerProvider())\n"
        "with trace.get_tracer('my.library').start_as_current_span('library call'):\n"
        "    pass\n"
    )

    @trace
    def start_child() -> None:
        _child_python(code)

    with trace.capture(processes=True) as result:
        start_child()
    [root] = result.roots
    [call] = root.children
    assert call.name == "library call"
    assert call.attributes["otel.scope.name"] == "my.library"
    assert call.pid not in (None, root.pid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/net/unix")
def test_nothing_is_left_behind_after_the_capture() -> None:
    """After the block: the environment is as before, the listener and its thread are gone."""
    before = dict(os.environ)
    with trace.capture(processes=True):
        assert "FLOW_XRAY_CHANNEL" in os.environ
        assert os.environ["PYTHONPATH"].split(os.pathsep)[0].endswith("_bootstrap")
        listening = _our_sockets()
        assert listening
    assert dict(os.environ) == before
    assert not [t for t in threading.enumerate() if t.name == "flow-xray-processes"]
    assert not set(listening) & set(_our_sockets())


def _our_sockets() -> list[str]:
    prefix = f"@flow-xray-{os.getpid()}-"
    lines = Path("/proc/net/unix").read_text(encoding="ascii").splitlines()[1:]
    return [line.split()[-1] for line in lines if line.split()[-1].startswith(prefix)]


def test_users_sitecustomize_still_runs_in_children(tmp_path: Path) -> None:
    """The bootstrap sitecustomize runs the user's own afterwards; both do their work."""
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "ran"
    (site / "sitecustomize.py").write_text(
        f"open({str(marker)!r}, 'a').write('user sitecustomize\\n')\n", encoding="utf-8"
    )
    with trace.capture(processes=True) as result:
        old = os.environ["PYTHONPATH"]
        os.environ["PYTHONPATH"] = old + os.pathsep + str(site)
        try:
            _child_python("import workers; workers.square(3)")
        finally:
            os.environ["PYTHONPATH"] = old
    assert marker.read_text(encoding="utf-8") == "user sitecustomize\n"
    assert [node.inputs for node in result] == [{"x": 3}]


def test_children_that_never_import_flow_xray_pay_nothing() -> None:
    """A child that never traces loads neither flow-xray nor OpenTelemetry."""
    with trace.capture(processes=True):
        proc = _child_python(
            "import sys, json; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules "
            "if m.split('.')[0] in ('flow_xray', 'opentelemetry')})))"
        )
    assert json.loads(proc.stdout) == []


def test_propagate_carries_the_call_into_a_process_pool() -> None:
    """propagate(fn) pickles: in a worker process fn runs under the submitting call."""

    @trace
    def submit() -> tuple[tuple[str, str], tuple[str, str]]:
        here = workers.parent_seen()
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=context) as pool:
            there = pool.submit(propagate(workers.parent_seen)).result()
        return here, there

    with trace.capture():  # a capture gives @trace a provider; the worker is not collected
        here, there = submit()
    assert there == here


def test_propagated_callable_keeps_its_name_and_pickles() -> None:
    """The wrapper looks like the function it wraps and survives a pickle round trip."""
    import pickle

    wrapped = propagate(workers.square)
    assert wrapped.__name__ == "square"
    assert wrapped.__wrapped__ is workers.square  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(wrapped))(4) == 16


@pytest.mark.parametrize("mode", ["plain", "processes"])
def test_forked_child_reports_none_of_the_parents_spans(mode: str) -> None:
    """os.fork() inside a capture: the child's copy is empty; with processes its call joins ours."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "fork_capture.py"), mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = {line["role"]: line for line in map(json.loads, proc.stdout.splitlines())}
    assert lines["child"]["nodes"] == []
    parent = [tuple(node) for node in lines["parent"]["nodes"]]
    own = [("step", "before fork"), ("step", "in parent")]
    if mode == "plain":
        assert parent == [(*step, None) for step in own]
    else:
        mine, child = lines["parent"]["pid"], lines["child"]["pid"]
        # Roots in start order: the child's call may start before or after the parent's
        # second one, as the scheduler runs them.
        assert parent[0] == ("step", "before fork", mine)
        assert sorted(parent[1:]) == [("step", "in child", child), ("step", "in parent", mine)]


def test_forked_child_never_exports_the_parents_queued_spans_twice(tmp_path: Path) -> None:
    """A span queued for export at the fork is written once; the child warns about no loss."""
    out = tmp_path / "spans.jsonl"
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "fork_export.py"), str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    from flow_xray.formats.otlp_json import read_otlp_json

    names = sorted(record.name for record in read_otlp_json(out))
    assert names == ["in_child", "queued_in_parent"]
    assert "not exported" not in proc.stderr
