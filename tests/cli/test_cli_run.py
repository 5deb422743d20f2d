"""``flow-xray run`` in a real child process: how scripts run, and the trace of every ending."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import SCRIPTS

from flow_xray.tree.model import TraceResult

Cli = Callable[..., subprocess.CompletedProcess[str]]


def _script_output(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    """The JSON line a fixture script prints on stdout."""
    data: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return data


def test_normal_exit_is_zero_and_writes_the_default_viewer(flow_xray: Cli, tmp_path: Path) -> None:
    """A script that returns exits 0 and leaves <stem>_trace.html in the working directory."""
    proc = flow_xray("run", str(SCRIPTS / "traced_ok.py"))
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "traced_ok_trace.html").read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html")


def test_trace_holds_the_scripts_calls(flow_xray: Cli, tmp_path: Path) -> None:
    """--json saves the nested calls the script made, all ok."""
    proc = flow_xray("run", "--json", "t.json", str(SCRIPTS / "traced_ok.py"))
    assert proc.returncode == 0, proc.stderr
    result = TraceResult.load(tmp_path / "t.json")
    pipeline = result.find("pipeline")
    assert pipeline is not None and pipeline.status == "ok"
    assert [child.name for child in pipeline.children] == ["double"]
    assert pipeline.children[0].output == 40


def test_main_block_runs_as_main(flow_xray: Cli) -> None:
    """The script runs with __name__ == "__main__", so its main block runs."""
    proc = flow_xray("run", str(SCRIPTS / "traced_ok.py"))
    assert _script_output(proc)["name"] == "__main__"


def test_script_arguments_are_passed_through(flow_xray: Cli) -> None:
    """Everything after the script is its own argv, in order."""
    proc = flow_xray("run", str(SCRIPTS / "traced_ok.py"), "a", "-x", "--long=1")
    assert _script_output(proc)["argv"] == ["a", "-x", "--long=1"]


def test_own_options_after_the_script_are_flow_xrays_with_a_warning(
    flow_xray: Cli, tmp_path: Path
) -> None:
    """`run script.py --html x.html --title T` (0.2.0's form) writes x.html titled T, and one
    warning line says how to pass such options to the script instead."""
    proc = flow_xray("run", str(SCRIPTS / "traced_ok.py"), "--html", "x.html", "--title", "T")
    assert _script_output(proc)["argv"] == []
    assert "<title>T</title>" in (tmp_path / "x.html").read_text(encoding="utf-8")
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    script = SCRIPTS / "traced_ok.py"
    assert warnings == [
        f"flow-xray: warning: read --html, --title after {script} as flow-xray's options; "
        f"to pass them to {script}, put them after `--`"
    ]


def test_everything_after_double_dash_belongs_to_the_script(flow_xray: Cli, tmp_path: Path) -> None:
    """`run script.py a -- --html x.html --quiet`: after `--` it all goes to the script."""
    proc = flow_xray("run", str(SCRIPTS / "traced_ok.py"), "a", "--", "--html", "x.html", "-q")
    assert _script_output(proc)["argv"] == ["a", "--html", "x.html", "-q"]
    assert not (tmp_path / "x.html").exists()
    assert "warning" not in proc.stderr
    assert "flow-xray: wrote traced_ok_trace.html" in proc.stderr


def test_argv0_is_the_script_path(flow_xray: Cli) -> None:
    """sys.argv[0] is the script path as given, as with `python script.py`."""
    script = str(SCRIPTS / "traced_ok.py")
    proc = flow_xray("run", script)
    assert _script_output(proc)["argv0"] == script


def test_module_of_a_package_runs_with_dash_m(flow_xray: Cli, tmp_path: Path) -> None:
    """`run -m pkg.mod ARGS` runs the module as __main__ from the working directory."""
    shutil.copytree(SCRIPTS / "fxpkg", tmp_path / "fxpkg")
    proc = flow_xray("run", "--json", "t.json", "-m", "fxpkg.tool", "one", "--two")
    assert proc.returncode == 0, proc.stderr
    assert _script_output(proc) == {"argv": ["one", "--two"], "name": "__main__"}
    assert (tmp_path / "fxpkg.tool_trace.html").exists()
    handle = TraceResult.load(tmp_path / "t.json").find("handle")
    assert handle is not None and handle.output == 2


def test_scripts_folder_is_first_on_sys_path(flow_xray: Cli, tmp_path: Path) -> None:
    """A script imports a module next to it even when run from another directory."""
    proc = flow_xray("run", "--json", "t.json", str(SCRIPTS / "uses_sibling.py"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "hello flow-xray"
    assert TraceResult.load(tmp_path / "t.json").find("greet") is not None


@pytest.mark.slow
def test_spans_from_threads_are_in_the_trace(flow_xray: Cli, tmp_path: Path) -> None:
    """Calls made in threads the script starts are captured, one node each."""
    proc = flow_xray("run", "--json", "t.json", str(SCRIPTS / "threads.py"))
    assert proc.returncode == 0, proc.stderr
    result = TraceResult.load(tmp_path / "t.json")
    assert sorted(node.output for node in result.find_all("work")) == [0, 1, 4]


@pytest.mark.slow
def test_unjoined_non_daemon_threads_are_waited_for(flow_xray: Cli, tmp_path: Path) -> None:
    """A non-daemon thread still running when the script returns finishes inside the trace."""
    flow_xray("run", "--json", "t.json", str(SCRIPTS / "threads.py"))
    late = TraceResult.load(tmp_path / "t.json").find("late_work")
    assert late is not None
    assert (late.status, late.incomplete, late.output) == ("ok", False, "late")


def test_thread_pool_never_shut_down_does_not_hang_the_exit(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    """A ThreadPoolExecutor left open ends the run as with `python` (its idle workers stop)."""
    script = str(SCRIPTS / "pool_left_open.py")
    proc = subprocess.run(
        [sys.executable, "-m", "flow_xray", "run", "--json", "t.json", script],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    squares = TraceResult.load(tmp_path / "t.json").find_all("square")
    assert sorted(node.output for node in squares) == [0, 1, 4]


def test_outputs_land_where_run_started_when_the_script_changes_directory(
    flow_xray: Cli, tmp_path: Path
) -> None:
    """Relative --html/--json paths are relative to where `run` started, even after os.chdir."""
    proc = flow_xray("run", "--json", "t.json", str(SCRIPTS / "changes_dir.py"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "changes_dir_trace.html").exists()
    assert TraceResult.load(tmp_path / "t.json").find("step") is not None
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_uncaught_exception_exits_one_with_the_scripts_traceback(flow_xray: Cli) -> None:
    """A crash exits 1 and prints Python's traceback of the script, without flow-xray frames."""
    proc = flow_xray("run", str(SCRIPTS / "crashes.py"))
    assert proc.returncode == 1
    tb = proc.stderr[proc.stderr.index("Traceback (most recent call last):") :]
    frames = [line for line in tb.splitlines() if line.startswith('  File "')]
    assert frames and all("crashes.py" in line for line in frames)
    assert "ValueError: config settings.toml is broken" in tb


def test_crash_still_writes_the_trace_with_error_nodes(flow_xray: Cli, tmp_path: Path) -> None:
    """After a crash the trace exists and the failing calls are errors."""
    proc = flow_xray("run", "--json", "t.json", str(SCRIPTS / "crashes.py"))
    assert proc.returncode == 1
    assert (tmp_path / "crashes_trace.html").exists()
    result = TraceResult.load(tmp_path / "t.json")
    failing = result.find("load_config")
    assert failing is not None
    assert (failing.status, failing.error) == (
        "error",
        "ValueError: config settings.toml is broken",
    )
    outer = result.find("main")
    assert outer is not None and outer.status == "error"


def test_sys_exit_number_becomes_the_exit_status(flow_xray: Cli, tmp_path: Path) -> None:
    """sys.exit(3) exits 3, and the trace is written with the calls made before."""
    proc = flow_xray("run", "--json", "t.json", str(SCRIPTS / "exits.py"), "3")
    assert proc.returncode == 3
    step = TraceResult.load(tmp_path / "t.json").find("step")
    assert step is not None and step.status == "ok"


def test_sys_exit_message_is_printed_and_exits_one(flow_xray: Cli) -> None:
    """sys.exit("text") prints the text on stderr and exits 1, as Python does."""
    proc = flow_xray("run", str(SCRIPTS / "exits.py"), "giving up now")
    assert proc.returncode == 1
    assert "giving up now" in proc.stderr.splitlines()


def _default_signal_handling() -> None:
    """In the child: SIGINT and SIGTERM back to their defaults, whatever pytest was launched with.

    A test run started in the background or under ``nohup`` ignores SIGINT, and
    children inherit that; Python then installs no KeyboardInterrupt handler,
    so the Ctrl-C test would see a script that never notices the signal.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def stop_waiting_script(
    sig: int, tmp_path: Path, env: dict[str, str], script: str = "waits.py"
) -> tuple[int, str]:
    """Run ``script`` under `flow-xray run --json t.json`, send ``sig`` once it is ready."""
    child = subprocess.Popen(
        [sys.executable, "-m", "flow_xray", "run", "--json", "t.json", str(SCRIPTS / script)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_signal_handling,  # no threads start between fork and exec
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        child.send_signal(sig)
        _, stderr = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    return child.returncode, stderr


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_ctrl_c_exits_130_and_keeps_open_spans_as_incomplete(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    """SIGINT exits 130; the trace is written and spans still open are incomplete."""
    code, stderr = stop_waiting_script(signal.SIGINT, tmp_path, child_env)
    assert code == 130, stderr
    result = TraceResult.load(tmp_path / "t.json")
    background = result.find("background_poll")
    assert background is not None and background.incomplete
    assert result.find("wait_forever") is not None


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_sigterm_exits_143_and_still_writes_the_trace(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    """SIGTERM (a CI timeout, `docker stop`) exits 143 with the trace written; the call it
    interrupted is marked incomplete."""
    code, stderr = stop_waiting_script(signal.SIGTERM, tmp_path, child_env)
    assert code == 143, stderr
    waiting = TraceResult.load(tmp_path / "t.json").find("wait_forever")
    assert waiting is not None and waiting.incomplete


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_a_tight_traced_loop_at_once(
    sig: int, tmp_path: Path, child_env: dict[str, str]
) -> None:
    """A script spending its time in small traced calls stops at the signal (143 / 130), with
    its trace written, although the signal mostly lands while a call is being recorded
    (recording contains what a value's hooks raise, never what a signal raises)."""
    code, stderr = stop_waiting_script(sig, tmp_path, child_env, "spins.py")
    assert code == 128 + sig, stderr
    spin = TraceResult.load(tmp_path / "t.json").find("spin")
    assert spin is not None and spin.incomplete and len(spin.children) >= 2000


def test_summary_line_names_file_nodes_and_errors(flow_xray: Cli) -> None:
    """The last stderr line summarises the trace: file, calls, failures, wall time; no
    tokens or cost phrase for a trace without LLM calls.

    The one exception passes through both calls: one error, not two.
    """
    proc = flow_xray("run", str(SCRIPTS / "crashes.py"))
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("flow-xray: wrote crashes_trace.html — 2 calls, 1 error, ")
    assert last.endswith(" ms") and "token" not in last and "cost" not in last


def test_quiet_prints_no_summary(flow_xray: Cli) -> None:
    """--quiet leaves stderr empty after a clean run."""
    proc = flow_xray("run", "--quiet", str(SCRIPTS / "traced_ok.py"))
    assert proc.returncode == 0
    assert proc.stderr == ""


def test_html_and_title_options_are_used(flow_xray: Cli, tmp_path: Path) -> None:
    """--html picks the viewer path and --title appears in the page."""
    proc = flow_xray(
        "run", "--html", "out.html", "--title", "Nightly run", str(SCRIPTS / "traced_ok.py")
    )
    assert proc.returncode == 0, proc.stderr
    assert "Nightly run" in (tmp_path / "out.html").read_text(encoding="utf-8")
    assert not (tmp_path / "traced_ok_trace.html").exists()


def test_otlp_json_lines_hold_the_same_spans(flow_xray: Cli, tmp_path: Path) -> None:
    """--otlp-json writes OTLP JSON lines with every span of the run, flushed before exit."""
    from flow_xray.formats.otlp_json import read_otlp_json

    proc = flow_xray("run", "--otlp-json", "spans.jsonl", str(SCRIPTS / "traced_ok.py"))
    assert proc.returncode == 0, proc.stderr
    names = sorted(record.name for record in read_otlp_json(tmp_path / "spans.jsonl"))
    assert names == ["double", "pipeline"]


def test_service_name_reaches_exported_spans(flow_xray: Cli, tmp_path: Path) -> None:
    """--service-name sets service.name on the resource of exported spans."""
    proc = flow_xray(
        "run",
        "--service-name",
        "nightly-job",
        "--otlp-json",
        "s.jsonl",
        str(SCRIPTS / "traced_ok.py"),
    )
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()
    services = {
        attribute["value"]["stringValue"]
        for line in lines
        for resource_spans in json.loads(line)["resourceSpans"]
        for attribute in resource_spans["resource"]["attributes"]
        if attribute["key"] == "service.name"
    }
    assert services == {"nightly-job"}


@pytest.mark.skipif(os.name != "posix", reason="the fake browser is a shell script")
def test_open_hands_the_viewer_to_the_browser(flow_xray: Cli, tmp_path: Path) -> None:
    """--open opens the written viewer's file:// URL with the user's browser ($BROWSER)."""
    browser = tmp_path / "browser.sh"
    browser.write_text('#!/bin/sh\necho "$1" > "$(dirname "$0")/opened.txt"\n', encoding="utf-8")
    browser.chmod(0o755)
    proc = flow_xray("run", "--open", str(SCRIPTS / "traced_ok.py"), BROWSER=str(browser))
    assert proc.returncode == 0, proc.stderr
    opened = (tmp_path / "opened.txt").read_text(encoding="utf-8").strip()
    assert opened == (tmp_path / "traced_ok_trace.html").resolve().as_uri()


def test_a_script_keeps_its_own_opentelemetry_provider(flow_xray: Cli, tmp_path: Path) -> None:
    """Without export options, `run` installs no provider: the script's own set-up works
    unchanged, and its spans (flow-xray's and other tracers') still reach the viewer."""
    proc = flow_xray("run", "--json", "t.json", str(SCRIPTS / "own_provider.py"))
    assert proc.returncode == 0, proc.stderr
    assert "own exporter got: SELECT users, SELECT users, handle, handle" in proc.stdout
    assert "Overriding" not in proc.stderr
    result = TraceResult.load(tmp_path / "t.json")
    assert [n.name for n in result] == ["handle", "SELECT users", "handle", "SELECT users"]
