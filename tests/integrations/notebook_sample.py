"""A sample notebook using flow-xray, executed by a real Jupyter kernel (nbclient + ipykernel).

Kept out of ``conftest.py`` so test modules can import it by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"

DEFINE = """
import asyncio

from flow_xray import Value, trace


@trace(kind="tool")
def search(query):
    if "boom" in query:
        raise ValueError(f"no results for {query!r}")
    return [query.upper()]


@trace(kind="llm")
def ask(prompt, api_key=None):
    trace.usage(model="gpt-4o-mini", input_tokens=120, output_tokens=30)
    return "answer: " + prompt


@trace(kind="agent")
def agent(question, api_key=None):
    return ask(f"{question} {search(question)}", api_key=api_key)


@trace(kind="agent")
async def async_agent(question):
    await asyncio.sleep(0)
    return agent(question)
"""

#: The cells, by what each shows. Index = cell number.
CELLS = {
    "load": "%load_ext flow_xray",
    "define": DEFINE.strip(),
    "magic": (
        '%%flow_xray --title "agent run" --save agent.json\n'
        f'agent("What is flow-xray?", api_key="{SECRET}")'
    ),
    "await": "%%flow_xray\nawait async_agent('async')",
    "raises": "%%flow_xray\nagent('boom')",
    "result": "with trace.capture() as result:\n    agent('plain')\nresult",
    "value": "a = Value(2.0, label='a')\nb = Value(-3.0, label='b')\nloss = (a * b).tanh()\nloss",
    "bad": "%%flow_xray --bogus\nagent('never')",
}
INDEX = {name: i for i, name in enumerate(CELLS)}


def execute_notebook(folder: Path) -> Any:
    """Run the sample notebook in a fresh kernel with ``folder`` as its working folder.

    Returns the executed notebook (``nbformat.NotebookNode``), also saved as
    ``folder/sample.ipynb``. Errors in cells are kept as outputs.
    """
    import nbclient
    import nbformat

    cells = [nbformat.v4.new_code_cell(source) for source in CELLS.values()]
    notebook = nbformat.v4.new_notebook(cells=cells)
    client = nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute()
    nbformat.write(notebook, str(folder / "sample.ipynb"))
    return notebook


def outputs(notebook: Any, cell: str, kind: str | None = None) -> list[Any]:
    """The outputs of the cell named ``cell`` (of one ``output_type`` if given)."""
    found = notebook.cells[INDEX[cell]].outputs
    return [o for o in found if kind is None or o.output_type == kind]
