"""``flow-xray run --static src/pkg -m pkg.cli`` in a src layout, without ``PYTHONPATH=src``.

A package under ``src/`` is importable once installed; before that, ``-m``
also finds it next to the ``--static`` paths, which name where the source is.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from flow_xray.render.payload import read_page

pytestmark = pytest.mark.slow  # child processes
FIXTURES = Path(__file__).resolve().parents[1] / "analysis" / "fixtures"
Run = Callable[..., subprocess.CompletedProcess[str]]


def src_layout(root: Path) -> None:
    """The fixture shop package as ``root/src/shop``."""
    shutil.copytree(FIXTURES / "shop", root / "src" / "shop")


def test_static_src_package_runs_its_module(flow_xray: Run, tmp_path: Path) -> None:
    """``--static src/shop -m shop.cli`` runs the package from src and draws its ghosts."""
    src_layout(tmp_path)
    ran = flow_xray("run", "--static", "src/shop", "--html", "run.html", "-m", "shop.cli", "tea")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("primary: tea")
    nodes = read_page((tmp_path / "run.html").read_text(encoding="utf-8"))["nodes"]
    assert [n["name"] for n in nodes if n.get("ghost")] == ["fallback", "record_fallback"]
    assert "Agent.answer" in [n["name"] for n in nodes]


def test_static_src_folder_is_a_source_root_too(flow_xray: Run, tmp_path: Path) -> None:
    """``--static src`` (the folder of packages) works the same way."""
    src_layout(tmp_path)
    ran = flow_xray("run", "--static", "src", "-q", "-m", "shop.cli", "tea")
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "shop.cli_trace.html").exists()


def test_the_script_sees_src_where_an_installed_package_would_be(
    flow_xray: Run, tmp_path: Path
) -> None:
    """While it runs, the working directory stays first on ``sys.path`` and src comes next."""
    src_layout(tmp_path)
    (tmp_path / "src" / "shop" / "where.py").write_text(
        "import sys\nprint(sys.path[:2])\n", encoding="utf-8"
    )
    ran = flow_xray("run", "--static", "src/shop", "-q", "-m", "shop.where")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == repr([str(tmp_path), str(tmp_path / "src")])


def test_without_static_a_src_package_is_not_found(flow_xray: Run, tmp_path: Path) -> None:
    """Without ``--static`` the module is looked up as ``python -m`` would: not found."""
    src_layout(tmp_path)
    ran = flow_xray("run", "-m", "shop.cli", "tea")
    assert ran.returncode == 2
    assert ran.stderr.strip() == "error: no module named 'shop.cli'"


def test_a_module_in_the_working_directory_wins_over_src(flow_xray: Run, tmp_path: Path) -> None:
    """A package importable from the working directory runs, not the copy under src."""
    src_layout(tmp_path)
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "shop" / "cli.py").write_text("print('the working copy')\n", encoding="utf-8")
    ran = flow_xray("run", "--static", "src/shop", "-q", "-m", "shop.cli")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "the working copy"
