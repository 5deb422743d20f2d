"""The pages in a real browser: an executed notebook exported by nbconvert, where the
inline viewer shows the calls, and a failing test's page, opened on the failure."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chromium_page import Opened
from notebook_sample import INDEX
from sample_project import run_pytest, write_project

from flow_xray.integrations.pytest_plugin import page_name

pytestmark = pytest.mark.e2e

ASSETS = Path(__file__).resolve().parents[2] / ".assets"
OpenFile = Callable[[Path], Opened]
READY = "body[data-ready='1']"


@pytest.fixture(scope="module")
def exported(executed: tuple[Path, Any]) -> Path:
    """The executed notebook as nbconvert's HTML (its JupyterLab look), written to a file."""
    nbconvert = pytest.importorskip("nbconvert")
    folder, notebook = executed
    body, _ = nbconvert.HTMLExporter().from_notebook_node(notebook)
    path = folder / "sample.html"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.fixture
def notebook_page(open_file: OpenFile, exported: Path) -> Opened:
    return open_file(exported)


def inline(opened: Opened, cell: str) -> Any:
    """The inline viewer frame of a notebook cell (by its name in `notebook_sample.CELLS`),
    scrolled into view and drawn (Chromium draws a frame off screen only once it is seen)."""
    output = opened.page.locator(".jp-Cell").nth(INDEX[cell]).locator("div.flow-xray-inline")
    output.scroll_into_view_if_needed()
    frame = output.frame_locator("iframe")
    frame.locator(READY).wait_for(state="attached")
    return frame


def row_names(frame: Any) -> list[str]:
    return list(frame.locator(".fx-trace-row .fx-name").all_text_contents())


def test_the_inline_viewer_shows_the_calls_of_the_cell(notebook_page: Opened) -> None:
    """In the exported notebook, the magic cell's viewer lists its calls, with the totals."""
    frame = inline(notebook_page, "magic")
    assert row_names(frame) == ["agent", "search", "ask"]
    assert frame.locator(".fx-title").first.text_content() == "agent run"


def test_every_inline_output_runs_offline_and_without_errors(notebook_page: Opened) -> None:
    """Five inline viewers (four traces, one Value graph), none reaching out or failing.

    nbconvert's own template asks for a script and a font online; those requests are
    the page's, refused here like every other, and nothing inside an output makes any.
    """
    assert notebook_page.page.locator("div.flow-xray-inline iframe").count() == 5
    assert row_names(inline(notebook_page, "await")) == ["async_agent", "agent", "search", "ask"]
    assert row_names(inline(notebook_page, "result")) == ["agent", "search", "ask"]
    assert inline(notebook_page, "value").locator(".fx-node").count() >= 3
    assert [url for url, from_page in notebook_page.refused if not from_page] == []
    assert [text for text, from_page in notebook_page.errors if not from_page] == []


def test_the_failing_cell_opens_on_its_failure(notebook_page: Opened) -> None:
    """A cell that raised shows its trace opened on the call that raised."""
    detail = inline(notebook_page, "raises").locator(".fx-detail-name")
    assert detail.text_content() == "search"


def test_the_full_size_link_opens_the_same_page_in_a_tab(notebook_page: Opened) -> None:
    """ "Open full size" is a blob: URL of the frame's own srcdoc: the viewer, full size."""
    link = notebook_page.page.locator(".jp-Cell").nth(INDEX["magic"]).locator(".flow-xray-inline a")
    assert link.is_visible() and str(link.get_attribute("href")).startswith("blob:")
    with notebook_page.page.context.expect_page() as opening:
        link.click()
    tab = opening.value
    tab.wait_for_selector(READY, state="attached")
    assert tab.locator(".fx-trace-row .fx-name").all_text_contents() == ["agent", "search", "ask"]


def test_the_page_s_own_buttons_work_inside_the_frame(notebook_page: Opened) -> None:
    """Keys move the selection; "JSON" saves a file and "Copy" copies, with no error."""
    frame = inline(notebook_page, "magic")
    frame.locator(".fx-trace-row .fx-name", has_text="agent").first.click()
    notebook_page.page.keyboard.press("j")
    assert frame.locator(".fx-detail-name").text_content() == "search"
    with notebook_page.page.expect_download() as saving:
        frame.locator("button.fx-download").click()
    assert saving.value.suggested_filename.endswith(".json")
    frame.get_by_role("button", name="Copy JSON").first.click()
    frame.get_by_role("button", name="Copied").wait_for()
    assert [text for text, from_page in notebook_page.errors if not from_page] == []


def test_screenshot_of_a_notebook_for_the_readme(notebook_page: Opened, tmp_path: Path) -> None:
    """The README's picture: the magic cell and its inline trace."""
    cell = notebook_page.page.locator(".jp-Cell").nth(INDEX["magic"])
    cell.scroll_into_view_if_needed()
    notebook_page.page.evaluate("(y) => window.scrollBy(0, y)", cell.bounding_box()["y"] - 40)
    data = notebook_page.screenshot(ASSETS / "notebook.png", tmp_path / "notebook.png")
    assert data[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def failing_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page ``pytest --flow-xray`` wrote for the sample project's test failing deepest."""
    folder = write_project(tmp_path_factory.mktemp("sample"))
    run_pytest(folder, "--flow-xray", "-k", "raises_deep")
    return folder / ".flow-xray" / f"{page_name('test_sample.py::test_raises_deep')}.html"


def test_a_failing_test_s_page_opens_on_the_failing_call(
    open_file: OpenFile, failing_page: Path, tmp_path: Path
) -> None:
    """The page of a test failing three calls down opens on the call that raised."""
    opened = open_file(failing_page)
    opened.page.wait_for_selector(READY, state="attached")
    assert opened.page.locator(".fx-detail-name").text_content() == "search"
    assert row_names(opened.page) == ["test_raises_deep", "agent", "search"]
    assert opened.refused == [] and opened.errors == []
    opened.screenshot(ASSETS / "pytest.png", tmp_path / "pytest.png")
