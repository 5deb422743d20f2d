"""`flow-xray diff A B`: the summary, the change lines, the viewer and the exit-status contract.

Exit status: 0 when the runs are equal, 1 when they differ (0 with --exit-zero),
2 on bad input with one ``error:`` line.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_support import invoke

from flow_xray import TraceResult
from flow_xray.render.payload import read_page

Run = Callable[..., subprocess.CompletedProcess[str]]
FIXTURES = Path(__file__).resolve().parents[1] / "analysis" / "fixtures"


def node(name: str, *children: dict[str, object], **fields: object) -> dict[str, object]:
    return {"name": name, "latency_ms": 10.0, "children": list(children), **fields}


def save(path: Path, *roots: dict[str, object]) -> str:
    TraceResult.from_dict({"nodes": list(roots)}).save(path)
    return str(path)


@pytest.fixture
def pair(in_tmp: Path) -> tuple[str, str]:
    """Two runs: the second retried the weather call once and answered differently."""
    before = save(
        in_tmp / "good.json",
        node("agent", node("weather", node("weather_api")), node("llm", output="It is sunny.")),
    )
    after = save(
        in_tmp / "bad.json",
        node(
            "agent",
            node(
                "weather",
                node("weather_api", status="error", error="TimeoutError: slow"),
                node("weather_api"),
            ),
            node("llm", output="It is raining."),
        ),
    )
    return before, after


def page_data(html: str) -> Any:
    """The JSON a viewer page embeds (a trace page's packed rows unpacked)."""
    return read_page(html)


def test_equal_runs_exit_0(pair: tuple[str, str]) -> None:
    """The same run on both sides: exit 0 and a summary saying there is no difference."""
    result = invoke("diff", pair[0], pair[0])
    assert result.exit_code == 0
    assert result.stdout == "no differences in 4 calls, wall time +0.0 ms (+0%)\n"


def test_different_runs_exit_1_with_one_line_per_change(pair: tuple[str, str]) -> None:
    """Runs that differ: exit 1, a line per added/changed call, the summary line last."""
    result = invoke("diff", *pair)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "+ agent > weather > weather_api #1: added, TimeoutError: slow",
        "~ agent > llm: output changed, latency +0.0 ms (+0%)",
        "+1 call, 1 new error, 1 output changed, wall time +0.0 ms (+0%)",
    ]


def test_exit_zero_always_exits_0(pair: tuple[str, str]) -> None:
    """--exit-zero reports the same differences but exits 0 (for a report-only CI step)."""
    result = invoke("diff", *pair, "--exit-zero")
    assert (result.exit_code, result.stdout.splitlines()[-1]) == (
        0,
        "+1 call, 1 new error, 1 output changed, wall time +0.0 ms (+0%)",
    )


def test_quiet_prints_only_the_summary(pair: tuple[str, str]) -> None:
    """-q leaves the one summary line."""
    result = invoke("diff", *pair, "-q")
    assert result.stdout.count("\n") == 1 and result.stdout.startswith("+1 call")


def test_html_writes_the_diff_viewer(pair: tuple[str, str], in_tmp: Path) -> None:
    """--html writes one offline page (CSP, no network) with both runs and the aligned calls."""
    result = invoke("diff", *pair, "--html", "diff.html")
    assert result.exit_code == 1
    assert result.stderr == "flow-xray: wrote diff.html\n"
    html = (in_tmp / "diff.html").read_text(encoding="utf-8")
    assert "default-src 'none'" in html and "connect-src 'none'" in html
    data = page_data(html)
    assert data["mode"] == "diff"
    assert [c["change"] for c in data["calls"]] == ["same", "same", "added", "same", "changed"]
    assert (data["before"]["label"], data["after"]["label"]) == ("good.json", "bad.json")


def test_names_in_the_page_are_inert(in_tmp: Path) -> None:
    """A call named like markup reaches the page only as escaped JSON text."""
    hostile = "</script><img src=x onerror=alert(1)>"
    a = save(in_tmp / "a.json", node(hostile, output="x"))
    b = save(in_tmp / "b.json", node(hostile, output="y"))
    invoke("diff", a, b, "--html", "d.html")
    html = (in_tmp / "d.html").read_text(encoding="utf-8")
    assert hostile not in html and "<img" not in html
    assert page_data(html)["calls"][0]["name"] == hostile


def test_same_file_names_are_told_apart_by_path(in_tmp: Path) -> None:
    """Two files both called run.json are labelled with their paths."""
    (in_tmp / "old").mkdir()
    (in_tmp / "new").mkdir()
    a = save(in_tmp / "old" / "run.json", node("job"))
    b = save(in_tmp / "new" / "run.json", node("job"))
    invoke("diff", a, b, "--html", "d.html")
    data = page_data((in_tmp / "d.html").read_text(encoding="utf-8"))
    assert (data["before"]["label"], data["after"]["label"]) == (a, b)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: ["missing.json", "missing.json"], "error: no such file: missing.json"),
        (lambda tmp: [str(tmp), str(tmp)], "is a directory, not a file"),
        (lambda tmp: [save(tmp / "a.json", node("x")), str(tmp / "bad.json")], "is not a trace"),
        (lambda tmp: [save(tmp / "a.json", node("x"))], "error: Missing argument 'B'"),
    ],
    ids=["missing", "directory", "not-a-trace", "one-file"],
)
def test_bad_input_is_one_error_line_and_exit_2(
    in_tmp: Path, make: Callable[[Path], list[str]], message: str
) -> None:
    """Missing files, folders, files that are not traces and a missing argument: exit 2."""
    (in_tmp / "bad.json").write_text("{not json", encoding="utf-8")
    result = invoke("diff", *make(in_tmp))
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_unwritable_html_fails_before_reading(pair: tuple[str, str]) -> None:
    """--html into a missing folder is an error before any work."""
    result = invoke("diff", *pair, "--html", "nowhere/d.html")
    assert result.exit_code == 2 and "folder" in result.stderr


@pytest.mark.slow
def test_one_run_saved_as_json_and_otlp_json_is_equal(flow_xray: Run, in_tmp: Path) -> None:
    """`flow-xray run --json a.json --otlp-json b.jsonl` writes one run in two formats
    (the OTLP one by the OpenTelemetry SDK's exporter path); diffing them finds nothing,
    in a real process, exit 0."""
    script = in_tmp / "pipeline.py"
    script.write_text(
        "from flow_xray import trace\n\n"
        "@trace(kind='tool')\ndef search(q):\n    return [q + ' 1', q + ' 2']\n\n"
        "@trace(kind='agent')\ndef agent(q):\n    return ' / '.join(search(q))\n\n"
        "agent('tea')\n",
        encoding="utf-8",
    )
    ran = flow_xray("run", "--json", "a.json", "--otlp-json", "b.jsonl", "-q", "pipeline.py")
    assert ran.returncode == 0, ran.stderr
    compared = flow_xray("diff", "a.json", "b.jsonl")
    assert (compared.returncode, compared.stdout) == (
        0,
        "no differences in 2 calls, wall time +0.0 ms (+0%)\n",
    )


@pytest.mark.slow
def test_two_demo_seeds_differ_in_a_real_process(flow_xray: Run, in_tmp: Path) -> None:
    """Two seeds of the demo agent, saved and compared by the installed command: exit 1, and
    the summary names the extra attempt and its error."""
    code = (
        "from flow_xray.examples.demo_agent import run_demo\n"
        "run_demo(seed=4).save('good.json')\nrun_demo(seed=5).save('bad.json')\n"
    )
    made = subprocess.run([sys.executable, "-c", code], cwd=in_tmp, timeout=120, check=False)
    assert made.returncode == 0
    compared = flow_xray("diff", "good.json", "bad.json", "--html", "diff.html")
    assert compared.returncode == 1, compared.stderr
    assert compared.stdout.splitlines()[-1].startswith("+1 call, 1 new error, ")
    assert "+ research_agent > get_weather > weather_api #1: added, TimeoutError" in compared.stdout
    assert (in_tmp / "diff.html").stat().st_size > 10_000


@pytest.mark.slow
def test_run_static_draws_the_branch_that_did_not_run(flow_xray: Run, in_tmp: Path) -> None:
    """`flow-xray run --static shop -m shop.cli` runs the fixture package and its viewer
    holds a ghost for the fallback model that did not run, under Agent.answer."""
    import shutil

    shutil.copytree(FIXTURES / "shop", in_tmp / "shop")
    ran = flow_xray("run", "--static", "shop", "--html", "run.html", "-q", "-m", "shop.cli", "tea")
    assert ran.returncode == 0, ran.stderr
    data = page_data((in_tmp / "run.html").read_text(encoding="utf-8"))
    nodes = data["nodes"]
    ghosts = [n for n in nodes if n.get("ghost")]
    assert [(g["name"], g["view_status"]) for g in ghosts] == [
        ("fallback", "ghost"),
        ("record_fallback", "ghost"),
    ]
    parent = nodes[ghosts[0]["parent"]]
    assert parent["name"] == "Agent.answer"
    assert data["static"]["unused"] == ["shop.models.fallback_model", "shop.models.record_fallback"]


@pytest.mark.slow
def test_run_static_with_a_missing_path_fails_before_running(flow_xray: Run, in_tmp: Path) -> None:
    """A --static path that does not exist is one error line, exit 2, and the script never ran."""
    (in_tmp / "marks.py").write_text("open('ran.txt', 'w').write('x')\n", encoding="utf-8")
    ran = flow_xray("run", "--static", "nope", "marks.py")
    assert ran.returncode == 2
    assert ran.stderr.strip() == "error: --static: no such file or folder: nope"
    assert not (in_tmp / "ran.txt").exists()
