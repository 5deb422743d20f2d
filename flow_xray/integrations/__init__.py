"""Where flow-xray meets the tools people already run: pytest and notebooks.

- `flow_xray.integrations.pytest_plugin`: the ``pytest11`` plugin (``pytest --flow-xray``):
  a trace page for every failing test, and the ``flow_xray_trace`` fixture.
- `flow_xray.integrations.notebook`: the inline viewer of ``TraceResult`` and ``Value``
  in Jupyter, JupyterLab and VS Code, and the ``%%flow_xray`` cell magic
  (``%load_ext flow_xray``).

Both use only the public library (the names ``flow_xray`` exports), and importing
either loads no OpenTelemetry: that waits until a capture is opened.
"""
