"""The one owner of process state: captures, providers, and every process-wide patch.

It imports the OpenTelemetry API only (the tracing side needs this state and
must never load the SDK):

- `captures`: the open-capture registry (which captures a span started now
  belongs to) and the capture tags a process inherited;
- `tracer`: which provider is in use (`provider_in_use`, the one answer),
  which tracer ``@trace`` uses, the private provider and the join hook, and
  the ``ProxyTracer._tracer`` patch;
- `usage`: LLM usage reported by spans that ended below a still-open span;
- `patches`: the registry every process-wide change goes through, each with
  install / uninstall, and the one fork dispatcher; ``flow_xray.shutdown()``
  uninstalls them all (`patches.uninstall_all`);
- `process_hooks`: the ``subprocess.Popen`` and ``multiprocessing`` patches
  of processes captures; `run_hooks`: SIGTERM and ``os.exec*`` while
  ``flow-xray run`` runs a script;
- `sdk_state`: the SDK side's singletons (collecting processor, export
  pipelines, child-process collection), plain holders the SDK side fills.

One change is made before flow-xray can load: in child processes of a
processes capture, the bootstrap ``sitecustomize`` (standard library only)
wraps ``opentelemetry.trace.set_tracer_provider``; once flow-xray loads there,
`flow_xray.sdk.processes` adopts that wrapper into the registry.
"""
