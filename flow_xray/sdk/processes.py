"""One trace across processes: child processes' spans join the capture that started them.

``trace.capture(processes=True)`` (and ``flow-xray run``, always) makes this
process the *parent*. While such a capture is open:

- a private channel listens (`flow_xray.sdk.process_channel`), and the
  process environment gets ``FLOW_XRAY_CHANNEL`` (its address and token) and
  a ``PYTHONPATH`` entry for the bootstrap folder, whose ``sitecustomize``
  runs in every Python child: it waits for the child to import flow-xray or
  set an OpenTelemetry provider, then calls `start_child`, and runs the
  ``sitecustomize`` it shadows, so the user's own still runs. Both variables
  are restored when the last processes capture closes; nothing is written to
  disk and nothing outside the process changes;
- the hooks of `flow_xray.runtime.process_hooks` hand the current call to
  work leaving for another process (``subprocess``, ``multiprocessing``,
  process pools), as `flow_xray.sdk.process_handover` says, so the child's
  spans have the right parent;
- a *child* collects every span it starts, in any thread, and sends each
  one to the parent as it starts and again as it ends, one frame each: a
  child that crashes or is killed loses only its unfinished spans, and the
  parent shows those as incomplete. Grandchildren talk to the same parent.

When the capture closes, the parent merges the spans that belong to it:
every child span for a process-wide capture (``all_threads=True``), else the
spans started under the capture's tag (which travels with the carrier, so
work handed over outside any traced call is found too). Every node then has
a ``process.pid`` attribute (`TraceNode.pid`). Child spans that ended are
also handed to the exporters `configure` set up, with the parent's resource
plus ``process.pid``: an OTLP backend sees one trace across processes.

Fork: a forked child forgets the captures and spans it inherited (the
parent reports them; see `flow_xray.runtime.captures`), closes its copies of
the channel, and, when the parent was collecting processes, becomes a child
that sends its own spans to it and exports nothing itself. The fork hooks,
the process-start hooks and the bootstrap's ``set_tracer_provider`` wrapper
are installed in `flow_xray.runtime.patches` (``flow_xray.shutdown()`` undoes
them); this process's collection state is `flow_xray.runtime.sdk_state.PROCESSES`.

Not collected: children started with ``python -I``, ``-E`` or ``-S`` (they
ignore ``PYTHONPATH`` or ``sitecustomize``), and Pythons without flow-xray.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from opentelemetry.sdk.trace import ReadableSpan

from flow_xray import attributes as attr
from flow_xray.runtime import captures, patches, process_hooks
from flow_xray.runtime.sdk_state import PROCESSES
from flow_xray.sdk import provider
from flow_xray.sdk.process_channel import CHANNEL_ENV, Address, Client, Frame, Hub, decode, encode
from flow_xray.sdk.process_handover import ProcessHandover, prepend_path
from flow_xray.sdk.process_spans import message_parts, pid_resource, plain, to_readable
from flow_xray.sdk.processor import Collector, ensure_collecting, get_processor
from flow_xray.sdk.rows import to_wire, wire_record
from flow_xray.tracing import propagation
from flow_xray.tree.model import TraceResult
from flow_xray.tree.spans import SpanStore

logger = logging.getLogger("flow_xray")

BOOTSTRAP_DIR: Final = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bootstrap")
_START: Final = 1
_END: Final = 2


@dataclass(slots=True)
class _Entry:
    """A child span as the parent last heard of it.

    ``start`` is the undecoded start frame, decoded (into ``tags`` and
    ``wire``) only if no end frame replaces it.
    """

    seq: int  # arrival order
    pid: int
    start: bytes | None = None
    tags: tuple[str, ...] = ()
    wire: tuple[Any, ...] = ()
    ended: bool = False
    exported: bool = False

    def settle(self) -> bool:
        """Decode the start frame if that is all there is; False when unreadable."""
        if not self.wire and self.start is not None:
            message, self.start = decode(self.start), None
            self.tags, self.wire = message_parts(message) or ((), ())
        return bool(self.wire)


class _Parent:
    """The channel shared by every processes capture open in this process."""

    def __init__(self) -> None:
        self.hub: Hub | None = None
        self.users = 0
        self.entries: dict[int, _Entry] = {}
        self.seq = 0
        self.tags = 0
        self.saved_env: dict[str, str | None] = {}
        self.set_env: dict[str, str] = {}


def _parent() -> _Parent:
    """This process's channel state (made on first use, anew in a forked child)."""
    parent: _Parent | None = PROCESSES.parent
    if parent is None:
        parent = PROCESSES.parent = _Parent()
    return parent


def _child() -> _Child | None:
    child: _Child | None = PROCESSES.child
    return child


def _active() -> bool:
    return _parent().hub is not None or PROCESSES.child is not None


def _channel_env() -> dict[str, str]:
    hub, child = _parent().hub, _child()
    if hub is not None:
        address = hub.address
    elif child is not None:
        address = child.client.address
    else:
        return {}
    return {CHANNEL_ENV: str(address), "PYTHONPATH": BOOTSTRAP_DIR}


def _install_hooks() -> None:
    """Install the process-start hooks and the fork hooks (again after a shutdown)."""
    process_hooks.install(ProcessHandover(_active, _channel_env))
    patches.install(_AT_FORK)


# --- the parent side -----------------------------------------------------------


class ProcessCollection:
    """The processes part of one capture: `open` with its collector, `close` with its records."""

    def __init__(self, all_threads: bool) -> None:
        self.all_threads = all_threads
        self._pid = os.getpid()
        self._since = 0
        self._tag: str | None = None
        self._joined = False

    def open(self, collector: Collector) -> None:
        """Start listening for child processes (or join the channel already listening).

        Undone (`release`) whatever interrupts it.
        """
        try:
            with PROCESSES.lock:
                if PROCESSES.child is not None:
                    return  # a child's processes capture: its children report to our parent
                parent = _parent()
                parent.users += 1
                self._joined = True  # (no check point between the two: counted once joined)
                hub = parent.hub or _start_parent(parent)
                _absorb(parent, hub.drain())
                self._since = parent.seq
                if not self.all_threads:  # a process-wide capture takes every child span anyway
                    parent.tags += 1
                    self._tag = f"c{parent.tags}"
                    collector.process_tag = self._tag
        except BaseException:
            self.release()
            raise

    def close(self, store: SpanStore) -> bool:
        """Add the child spans that belong to this capture to ``store``; False if there were none.

        The store is the capture's own (`FlowXrayProcessor.close_capture`). The channel is
        released (`release`) whatever happens.
        """
        if not self._joined or self._pid != os.getpid():
            return False  # forked after the capture opened: the parent merges
        try:
            with PROCESSES.lock:
                parent = _parent()
                hub = parent.hub
                if hub is None:
                    return False
                _absorb(parent, hub.drain())
                mine = [
                    entry
                    for entry in parent.entries.values()
                    if entry.settle()
                    and (entry.seq >= self._since if self.all_threads else self._tag in entry.tags)
                ]
                _export_pending(parent)
        finally:
            self.release()
        added = False
        for entry in sorted(mine, key=lambda e: e.seq):
            record = wire_record(entry.pid, entry.wire)
            if record is not None:
                store.append(record)
                added = True
        store.seal()  # with max_spans, appended records wait in the tail until sealed
        return added

    def release(self) -> None:
        """Leave the channel; the last capture to leave stops it: its socket, its reader
        thread, the environment children would inherit. Does nothing the second time; a
        signal's exception (Ctrl-C) cutting it short makes it finish first, then go on."""
        if self._pid != os.getpid():
            return
        try:
            self._leave()
        except BaseException:
            self._leave()  # (what the exception cut short: each step is done once)
            raise

    def _leave(self) -> None:
        with PROCESSES.lock:
            parent = _parent()
            if self._joined:
                self._joined = False
                parent.users -= 1  # (no check point between the two: counted once left)
            if parent.users <= 0 and (parent.hub is not None or parent.set_env):
                _stop_parent(parent)

    @staticmethod
    def stamp_pids(result: TraceResult) -> None:
        """Give this process's nodes their pid too, once the trace spans processes."""
        pid = os.getpid()
        for node in result:
            if node.pid is None:
                node.pid = pid
                node.attributes[attr.PROCESS_PID] = pid


def _start_parent(parent: _Parent) -> Hub:
    _install_hooks()
    hub = parent.hub = Hub()
    hub.start()  # (once the parent has it: `_stop_parent` stops it whatever happens next)
    values = {
        CHANNEL_ENV: str(hub.address),
        "PYTHONPATH": prepend_path(BOOTSTRAP_DIR, os.environ.get("PYTHONPATH")),
    }
    parent.saved_env = {name: os.environ.get(name) for name in values}
    parent.set_env = values
    os.environ.update(values)
    return hub


def _stop_parent(parent: _Parent) -> None:
    """Stop the channel and put the environment back; called again, finishes what a first
    call left (each step may be done twice)."""
    hub = parent.hub
    if hub is not None:
        _absorb(parent, hub.close())
        parent.hub = None
    _export_pending(parent)
    parent.entries = {}
    for name, value in parent.set_env.items():
        current = os.environ.get(name)
        saved = parent.saved_env.get(name)
        if current != value and name == "PYTHONPATH" and current:
            # The program changed PYTHONPATH meanwhile: keep its change, drop our entry.
            saved = os.pathsep.join(p for p in current.split(os.pathsep) if p != BOOTSTRAP_DIR)
        elif current != value:
            continue  # the program set its own value: leave it
        if saved is None or saved == "":
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved
    parent.set_env = {}


def _absorb(parent: _Parent, frames: Iterable[Frame]) -> None:
    """Fold received frames into the entries (a span's end replaces its start)."""
    entries = parent.entries
    for pid, kind, span_id, payload in frames:
        entry = entries.get(span_id)
        if kind == _START:
            if entry is None:
                entries[span_id] = _Entry(parent.seq, pid, start=payload)
                parent.seq += 1
        elif kind == _END:
            parts = message_parts(decode(payload))
            if parts is None:
                continue
            if entry is None:
                entry = entries[span_id] = _Entry(parent.seq, pid)
                parent.seq += 1
            entry.tags, entry.wire = parts
            entry.start, entry.ended = None, True


def _export_pending(parent: _Parent) -> None:
    """Hand child spans that ended to the exporters `configure` set up (each span once)."""
    pending = [e for e in parent.entries.values() if e.ended and not e.exported]
    if not pending:
        return
    for entry in pending:
        entry.exported = True
    for resource, processor in provider.export_processors():
        by_pid: dict[int, Any] = {}
        for entry in pending:
            try:
                if entry.pid not in by_pid:
                    by_pid[entry.pid] = pid_resource(resource, entry.pid)
                processor.on_end(to_readable(entry.pid, entry.wire, by_pid[entry.pid]))
            except Exception:
                logger.debug("flow-xray: a child span could not be exported", exc_info=True)


# --- the child side ------------------------------------------------------------


class _Child:
    """A child process's sink: every span it starts goes to the parent, as it starts and ends."""

    def __init__(self, address: Address) -> None:
        self.client = Client(address)
        self.collector: Collector | None = None
        # Capture tags of spans still open (only those that have any).
        self._tags: dict[int, tuple[str, ...]] = {}

    def listen(self) -> None:
        self.collector, _ = get_processor().open_capture(all_threads=True, sink=self)

    def after_fork(self) -> None:
        self.client.after_fork()
        self._tags = {}
        self.listen()  # the fork closed its capture (flow_xray.runtime.captures)

    def started(self, span: ReadableSpan) -> None:
        """Send the span as it is now (the parent shows it incomplete until it ends)."""
        tags = propagation.capture_tags()
        span_id = span.context.span_id if span.context else 0
        if tags:
            self._tags[span_id] = tags
        self._send(_START, span_id, (tags, to_wire(span, ended=False)))

    def ended(self, span: ReadableSpan) -> None:
        """Send the finished span."""
        span_id = span.context.span_id if span.context else 0
        self._send(_END, span_id, (self._tags.pop(span_id, ()), to_wire(span, ended=True)))

    def _send(self, kind: int, span_id: int, message: tuple[Any, ...]) -> None:
        try:
            try:
                frame = encode(kind, span_id, message)
            except ValueError:  # an attribute marshal cannot write: send its text
                frame = encode(kind, span_id, plain(message))
            self.client.send(frame)
        except Exception:
            logger.debug("flow-xray: could not send a span to the parent", exc_info=True)


def start_child(address: Address | None = None) -> bool:
    """Start sending this process's spans to the parent named by ``FLOW_XRAY_CHANNEL``.

    Called by the bootstrap ``sitecustomize`` when a child first imports
    flow-xray or sets a global OpenTelemetry provider; safe to call again
    (it then joins the global provider, if new). Continues the call that
    started the process (``TRACEPARENT``/``TRACESTATE``, capture tags in
    ``FLOW_XRAY_CAPTURES``) in the calling thread. Returns whether this
    process is a collecting child.
    """
    with PROCESSES.lock:
        if PROCESSES.child is not None:
            ensure_collecting()
            return True
        if _parent().hub is not None:
            return False  # the parent itself (its environment names its own channel)
        from_env = address is None
        address = address or Address.parse(os.environ.get(CHANNEL_ENV))
        if address is None:
            return False
        ensure_collecting()
        _install_hooks()
        # The bootstrap wrapped set_tracer_provider before flow-xray could load.
        patches.install(process_hooks.PROVIDER_WATCH)
        child = PROCESSES.child = _Child(address)
        child.listen()
    if from_env:
        propagation.attach(propagation.environ_carrier())
    return True


# --- fork ------------------------------------------------------------------------


def _before_fork() -> None:
    # The capture tags of the thread that forks, read just before the fork: the
    # child's copies of those captures are closed by then (flow_xray.runtime.captures),
    # but its spans still belong to them.
    PROCESSES.tags_at_fork = propagation.capture_tags() if _active() else ()


def _after_fork_in_parent() -> None:
    PROCESSES.tags_at_fork = ()


def _after_fork_in_child() -> None:
    PROCESSES.lock = threading.Lock()  # another thread may have held it at the fork
    hub = _parent().hub
    PROCESSES.parent = _Parent()
    if PROCESSES.tags_at_fork:
        captures.inherit_tags(PROCESSES.tags_at_fork)
    child = _child()
    if child is not None:
        child.after_fork()
        return
    if hub is None:
        return
    hub.after_fork()
    try:
        start_child(hub.address)
        provider.leave_export_to_parent()  # the parent exports what this child sends
    except Exception:
        logger.debug("flow-xray: a forked child could not start collecting", exc_info=True)


_AT_FORK: Final = patches.ForkHook(
    "child processes",
    before=_before_fork,
    after_in_parent=_after_fork_in_parent,
    after_in_child=_after_fork_in_child,
)
