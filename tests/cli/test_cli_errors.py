"""Bad input: exactly one `error: ...` line on stderr, exit status 2, no traceback, no files."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import SCRIPTS, invoke
from click.testing import Result


def error_line(result: Result) -> str:
    """The single error line; fails unless the command failed cleanly with status 2."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.output
    return lines[0]


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_run_missing_script(in_tmp: Path) -> None:
    """A script that does not exist is named in the error."""
    assert error_line(invoke("run", "nope.py")) == "error: no such file: nope.py"


def test_run_directory_instead_of_script(in_tmp: Path) -> None:
    """A directory given as the script is refused."""
    (in_tmp / "folder").mkdir()
    assert "folder is a directory" in error_line(invoke("run", "folder"))


def test_run_syntax_error_names_file_and_line(in_tmp: Path) -> None:
    """A script that does not compile is reported as file:line before anything runs."""
    bad = write(in_tmp / "bad.py", "x = 1\n\ndef broken(:\n    pass\n")
    assert error_line(invoke("run", bad)).startswith(f"error: {bad}:3: SyntaxError: ")
    assert sorted(p.name for p in in_tmp.iterdir()) == ["bad.py"]


def test_run_missing_module(in_tmp: Path) -> None:
    """`-m` with a module that cannot be found is named in the error."""
    assert "no module named 'no_such_module_xyz'" in error_line(
        invoke("run", "-m", "no_such_module_xyz")
    )


def test_run_without_script(in_tmp: Path) -> None:
    """`run` with neither SCRIPT nor -m is a usage error on one line."""
    assert "missing SCRIPT" in error_line(invoke("run"))


def test_run_unknown_option_before_script(in_tmp: Path) -> None:
    """An option flow-xray does not know, before the script, is rejected rather than run."""
    assert "no such option: --bogus" in error_line(
        invoke("run", "--bogus", str(SCRIPTS / "traced_ok.py"))
    )


def test_run_bad_protocol_is_one_line(in_tmp: Path) -> None:
    """A bad choice for --otlp-protocol comes out as one `error:` line, not click's usage block."""
    line = error_line(
        invoke("run", "--otlp-protocol", "carrier-pigeon", str(SCRIPTS / "traced_ok.py"))
    )
    assert "--otlp-protocol" in line and "carrier-pigeon" in line


def test_run_bad_header(in_tmp: Path) -> None:
    """An --otlp-header without `=` is rejected; the item, maybe a token, is not echoed."""
    line = error_line(invoke("run", "--otlp-header", "novalue", str(SCRIPTS / "traced_ok.py")))
    assert "--otlp-header" in line and "an item of 7 characters without '=' is not K=V" in line
    assert "novalue" not in line


def test_run_output_folder_missing_is_checked_before_running(in_tmp: Path) -> None:
    """An --html path in a missing folder fails before the script runs (it prints nothing)."""
    result = invoke("run", "--html", "missing/out.html", str(SCRIPTS / "traced_ok.py"))
    assert "missing/out.html" in error_line(result)
    assert result.stdout == ""


def test_run_json_path_is_a_directory(in_tmp: Path) -> None:
    """--json naming an existing directory is refused up front."""
    (in_tmp / "out").mkdir()
    assert "--json out is a directory" in error_line(
        invoke("run", "--json", "out", str(SCRIPTS / "traced_ok.py"))
    )


def test_unknown_command(in_tmp: Path) -> None:
    """An unknown command is one error line."""
    assert "bogus" in error_line(invoke("bogus"))


def test_view_missing_file(in_tmp: Path) -> None:
    """`view` of a missing file names it."""
    assert error_line(invoke("view", "gone.json")) == "error: no such file: gone.json"


def test_view_directory(in_tmp: Path) -> None:
    """`view` of a directory is refused."""
    (in_tmp / "d").mkdir()
    assert "d is a directory" in error_line(invoke("view", "d"))


def test_view_not_json(in_tmp: Path) -> None:
    """`view` of a file that is not JSON says so and writes nothing."""
    write(in_tmp / "notes.txt", "just some text\nmore text\n")
    assert "notes.txt is not a trace: not JSON" in error_line(invoke("view", "notes.txt"))
    assert not (in_tmp / "notes.html").exists()


def test_view_json_of_another_shape(in_tmp: Path) -> None:
    """`view` of JSON that is neither flow-xray nor OTLP says what was expected."""
    write(in_tmp / "config.json", json.dumps({"name": "not a trace"}))
    assert "'nodes'" in error_line(invoke("view", "config.json"))


def test_view_bad_node(in_tmp: Path) -> None:
    """`view` of a flow-xray envelope with a malformed node is refused."""
    write(in_tmp / "t.json", json.dumps({"version": 1, "nodes": [{"id": "n1"}]}))
    assert "name" in error_line(invoke("view", "t.json"))


def test_view_bad_otlp_line(in_tmp: Path) -> None:
    """`view` of OTLP JSON lines with a broken line names the line."""
    good = json.dumps({"resourceSpans": []})
    write(in_tmp / "spans.jsonl", f"{good}\n{{not json\n")
    assert "2" in error_line(invoke("view", "spans.jsonl"))


def test_view_empty_file(in_tmp: Path) -> None:
    """`view` of an empty file is refused."""
    write(in_tmp / "empty.json", "")
    assert "empty.json is empty" in error_line(invoke("view", "empty.json"))


def test_view_output_folder_missing(in_tmp: Path) -> None:
    """`view --html` into a missing folder fails without writing anything."""
    write(in_tmp / "t.json", json.dumps({"version": 1, "nodes": []}))
    assert "folder" in error_line(invoke("view", "t.json", "--html", "no/where.html"))


def test_demo_output_folder_missing(in_tmp: Path) -> None:
    """`demo --html` into a missing folder fails before the pipeline runs."""
    assert "no/demo.html" in error_line(invoke("demo", "--html", "no/demo.html"))


def test_dot_demo_bad_which(in_tmp: Path) -> None:
    """`dot demo sideways` is a usage error on one line."""
    assert "sideways" in error_line(invoke("dot", "demo", "sideways"))


def test_dot_demo_output_dir_that_cannot_be_created(in_tmp: Path) -> None:
    """`dot demo --output-dir` under a plain file fails on one line and writes nothing."""
    (in_tmp / "afile").write_text("x", encoding="utf-8")
    assert "afile/sub" in error_line(invoke("dot", "demo", "--output-dir", "afile/sub"))
    assert [p.name for p in in_tmp.iterdir()] == ["afile"]


def test_dot_export_missing_script(in_tmp: Path) -> None:
    """`dot export` of a missing script names it."""
    assert error_line(invoke("dot", "export", "graph.py")) == "error: no such file: graph.py"


def test_dot_export_without_root(in_tmp: Path) -> None:
    """A script that defines no `root` is refused and nothing is written."""
    script = write(in_tmp / "graph.py", "x = 1\n")
    assert "does not define root" in error_line(invoke("dot", "export", script))
    assert not (in_tmp / "graph.dot").exists()


def test_dot_export_root_not_a_value(in_tmp: Path) -> None:
    """A `root` that is not a Value is refused, naming its type."""
    script = write(in_tmp / "graph.py", "root = [1, 2]\n")
    assert "is a list, not a flow_xray.Value" in error_line(invoke("dot", "export", script))


def test_dot_export_syntax_error(in_tmp: Path) -> None:
    """A `dot export` script that does not compile is reported as file:line."""
    script = write(in_tmp / "graph.py", "root = (\n")
    assert error_line(invoke("dot", "export", script)).startswith(f"error: {script}:1: SyntaxError")


def test_dot_export_output_folder_missing(in_tmp: Path) -> None:
    """`dot export -o` into a missing folder fails before the script runs."""
    script = write(in_tmp / "graph.py", "print('ran')\n")
    result = invoke("dot", "export", script, "-o", "nowhere/g.dot")
    assert "nowhere/g.dot" in error_line(result)
    assert result.stdout == ""


def test_a_malformed_header_is_named_but_its_value_never_echoed(in_tmp: Path) -> None:
    """`--otlp-header "Authorization: Bearer …"` (no `=`) names the header, not the token."""
    token = "Bearer abcdefghijklmnop0123456789"
    line = error_line(
        invoke("run", "--otlp-header", f"Authorization: {token}", str(SCRIPTS / "traced_ok.py"))
    )
    assert "'Authorization'… is not K=V" in line
    assert "abcdefghijklmnop0123456789" not in line


def test_credentials_in_an_endpoint_url_are_scrubbed_from_the_error(in_tmp: Path) -> None:
    """A bad endpoint with user:password@ is shown with the password replaced."""
    url = "ftp://alice:hunter2-pw@collector:4317"
    line = error_line(invoke("run", "--otlp-endpoint", url, str(SCRIPTS / "traced_ok.py")))
    assert "hunter2-pw" not in line
    assert "ftp://alice:[REDACTED:url-password]@collector:4317" in line
