"""``flow-xray run`` puts the calls of every Python child process into the one trace.

Each test runs a fixture script under a real ``flow-xray run`` process and
reads the JSON trace it wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from processes_support import SCRIPTS, START_METHODS, Cli, only, traced

from flow_xray.render.payload import read_page
from flow_xray.tree.model import TraceResult


def _printed(proc_stdout: str) -> dict[str, int]:
    """The last JSON line a fixture script printed."""
    data: dict[str, int] = json.loads(proc_stdout.strip().splitlines()[-1])
    return data


@pytest.mark.parametrize("method", START_METHODS)
def test_pool_map_puts_every_item_under_the_call_that_mapped(flow_xray: Cli, method: str) -> None:
    """Pool(4).map over 100 items: 100 child spans, none lost, all under fan_out."""
    result = traced(flow_xray, "pool_map.py", method)
    fan_out = only(result, "fan_out")
    squares = [child for child in fan_out.children if child.name == "square"]
    assert len(squares) == 100
    assert sorted(child.inputs["x"] for child in squares) == list(range(100))
    assert all(child.status == "ok" and not child.incomplete for child in squares)
    assert len(result.roots) == 1


@pytest.mark.parametrize("method", START_METHODS)
def test_pool_workers_show_their_own_pids(flow_xray: Cli, method: str) -> None:
    """Each node carries the pid of the process that ran it: workers differ from the parent."""
    proc = flow_xray("run", "-q", "--json", "t.json", str(SCRIPTS / "pool_map.py"), method, "8")
    assert proc.returncode == 0, proc.stderr
    parent = _printed(proc.stdout)["pid"]
    fan_out = only(TraceResult.load("t.json"), "fan_out")
    assert fan_out.pid == parent
    worker_pids = {child.pid for child in fan_out.children}
    assert None not in worker_pids and parent not in worker_pids
    assert 1 <= len(worker_pids) <= 4


@pytest.mark.parametrize("method", START_METHODS)
def test_process_pool_executor_tasks_sit_under_the_submitting_call(
    flow_xray: Cli, method: str
) -> None:
    """ProcessPoolExecutor.map and submit: every task under dispatch, a raising one as an error."""
    result = traced(flow_xray, "executor.py", method)
    dispatch = only(result, "dispatch")
    names = sorted(child.name for child in dispatch.children)
    assert names == ["cube"] * 10 + ["refuse"]
    refuse = only(result, "refuse")
    assert refuse.status == "error"
    assert refuse.error == "ValueError: cannot take 7"
    assert refuse.pid not in (None, dispatch.pid)


@pytest.mark.parametrize("method", START_METHODS)
def test_process_target_runs_under_the_call_that_started_it(flow_xray: Cli, method: str) -> None:
    """multiprocessing.Process(target=work): work and its steps under launch, in the child's pid."""
    proc = flow_xray("run", "-q", "--json", "t.json", str(SCRIPTS / "process_target.py"), method)
    assert proc.returncode == 0, proc.stderr
    printed = _printed(proc.stdout)
    result = TraceResult.load("t.json")
    launch = only(result, "launch")
    [work] = launch.children
    assert work.name == "work"
    assert (launch.pid, work.pid) == (printed["pid"], printed["child"])
    assert [step.name for step in work.children] == ["step", "step", "step"]
    assert {step.pid for step in work.children} == {printed["child"]}


@pytest.mark.slow
def test_subprocess_worker_joins_under_the_call_that_ran_it(flow_xray: Cli) -> None:
    """subprocess.run([python, worker.py]): the worker's calls hang under run_worker."""
    proc = flow_xray("run", "-q", "--json", "t.json", str(SCRIPTS / "shell_out.py"), "ok")
    assert proc.returncode == 0, proc.stderr
    printed = _printed(proc.stdout)
    run_worker = only(TraceResult.load("t.json"), "run_worker")
    [job] = run_worker.children
    assert (job.name, job.pid, job.status) == ("job", printed["child"], "ok")
    assert [(c.name, c.kind, c.pid) for c in job.children] == [("parse", "tool", printed["child"])]


@pytest.mark.slow
def test_child_that_raises_shows_its_error(flow_xray: Cli) -> None:
    """A worker process that dies of an exception: its call is an error with its traceback."""
    result = traced(flow_xray, "shell_out.py", "raise")
    job = only(result, "job")
    assert job.status == "error"
    assert job.error == "RuntimeError: worker failed on purpose"
    assert job.traceback is not None and "worker.py" in job.traceback
    assert not job.incomplete
    assert [child.name for child in job.children] == ["parse"]


def test_child_killed_with_sigkill_loses_only_its_unfinished_calls(flow_xray: Cli) -> None:
    """SIGKILL mid-call: the finished step is complete, the open calls are there, incomplete."""
    proc = flow_xray("run", "-q", "--json", "t.json", str(SCRIPTS / "killed.py"))
    assert proc.returncode == 0, proc.stderr
    printed = _printed(proc.stdout)
    assert printed["returncode"] == -9
    supervise = only(TraceResult.load("t.json"), "supervise")
    [job] = supervise.children
    assert (job.name, job.pid, job.incomplete) == ("job", printed["child"], True)
    prepare, hang = job.children
    assert (prepare.name, prepare.incomplete, prepare.output) == ("prepare", False, "ready")
    assert (hang.name, hang.incomplete, hang.pid) == ("hang", True, printed["child"])
    assert not supervise.incomplete


@pytest.mark.slow
def test_nested_subprocesses_two_levels_deep(flow_xray: Cli) -> None:
    """outer -> middle -> inner, each a subprocess of the one above: one chain, three pids."""
    proc = flow_xray("run", "-q", "--json", "t.json", str(SCRIPTS / "nested.py"))
    assert proc.returncode == 0, proc.stderr
    pids = {
        line["level"]: line["pid"] for line in map(json.loads, proc.stdout.strip().splitlines())
    }
    result = TraceResult.load("t.json")
    [outer] = result.roots
    [middle] = outer.children
    [inner] = middle.children
    assert [n.inputs["name"] for n in (outer, middle, inner)] == ["outer", "middle", "inner"]
    assert [n.pid for n in (outer, middle, inner)] == [pids["outer"], pids["middle"], pids["inner"]]
    assert len({outer.trace_id, middle.trace_id, inner.trace_id}) == 1


def test_forked_child_joins_under_the_call_that_forked(flow_xray: Cli) -> None:
    """os.fork() in a traced call: the child's call sits beside the parent's, with its pid."""
    proc = flow_xray("run", "-q", "--json", "t.json", str(SCRIPTS / "forking.py"), "wait")
    assert proc.returncode == 0, proc.stderr
    printed = _printed(proc.stdout)
    split = only(TraceResult.load("t.json"), "split")
    assert [(c.name, c.pid) for c in split.children] == [
        ("parent_work", printed["pid"]),
        ("child_work", printed["child"]),
    ]


def test_forked_child_outliving_the_parent_never_overwrites_its_trace(
    flow_xray: Cli, tmp_path: Path
) -> None:
    """A forked child that finishes the script after the parent left writes no trace files."""
    marker = tmp_path / "child-finished"
    proc = flow_xray(
        "run",
        "--json",
        "t.json",
        "--html",
        "t.html",
        str(SCRIPTS / "forking.py"),
        "outlive",
        str(marker),
    )
    # subprocess.run returns once the child closed its end of stdout: after it finished.
    assert proc.returncode == 0, proc.stderr
    assert marker.read_text(encoding="utf-8") == "done"
    assert (tmp_path / "t.json").stat().st_mtime_ns < marker.stat().st_mtime_ns
    result = TraceResult.load("t.json")
    split = only(result, "split")
    assert split.children[0].name == "parent_work"
    # The child's last call came after the parent wrote its trace: it is in no file.
    assert not [n for n in result if n.name == "child_work" and n.inputs == {"n": 20}]
    assert proc.stderr.count("flow-xray: wrote") == 1
    page = read_page((tmp_path / "t.html").read_text(encoding="utf-8"))
    assert sorted(n["name"] for n in page["nodes"]) == sorted(n.name for n in result)


def test_forked_child_ends_on_sigterm_as_under_plain_python(flow_xray: Cli) -> None:
    """The run's SIGTERM handling is the run's own: a forked child SIGTERMed dies of the signal."""
    proc = flow_xray("run", "-q", str(SCRIPTS / "fork_sigterm.py"))
    assert proc.returncode == 0, proc.stderr
    assert _printed(proc.stdout) == {"signal": 15, "exit": None}


@pytest.mark.slow
def test_incoming_traceparent_is_continued(flow_xray: Cli) -> None:
    """An incoming TRACEPARENT: every call, in every process, joins that trace."""
    trace_id, span_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    result = traced(flow_xray, "shell_out.py", "ok", TRACEPARENT=f"00-{trace_id}-{span_id}-01")
    [root] = result.roots
    assert root.name == "run_worker"
    assert root.parent_id == span_id
    assert {node.trace_id for node in result} == {trace_id}
    assert len({node.pid for node in result}) == 2


@pytest.mark.slow
def test_without_incoming_context_children_share_the_scripts_trace(flow_xray: Cli) -> None:
    """With no TRACEPARENT the run starts its own trace; children join it, not a new one."""
    result = traced(flow_xray, "nested.py")
    [root] = result.roots
    assert root.parent_id is None
    assert len({node.trace_id for node in result}) == 1


def test_children_get_the_channel_and_keep_the_users_pythonpath(
    flow_xray: Cli, tmp_path: Path
) -> None:
    """A child sees the channel and the user's PYTHONPATH; the bootstrap is off its sys.path."""
    probe = (
        "import json, os, sys; print(json.dumps({"
        "'vars': sorted(k for k in os.environ if k.startswith('FLOW_XRAY')),"
        "'pythonpath': os.environ['PYTHONPATH'].split(os.pathsep)[1:],"
        "'bootstrap_on_path': any(p.endswith('_bootstrap') for p in sys.path)}))"
    )
    script = tmp_path / "env_probe.py"
    script.write_text(
        "import subprocess, sys\n"
        f"print(subprocess.run([sys.executable, '-c', {probe!r}], capture_output=True, "
        "text=True, check=True).stdout)\n",
        encoding="utf-8",
    )
    proc = flow_xray("run", "-q", str(script), PYTHONPATH="/somewhere/else")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {
        "vars": ["FLOW_XRAY_CHANNEL"],
        "pythonpath": ["/somewhere/else"],
        "bootstrap_on_path": False,
    }


def test_fixture_scripts_run_untraced_too() -> None:
    """The fixture scripts are ordinary programs: under plain python they work the same."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLOW_XRAY")}
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "nested.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    levels = [json.loads(line)["level"] for line in proc.stdout.splitlines()]
    assert levels == ["outer", "middle", "inner"]
