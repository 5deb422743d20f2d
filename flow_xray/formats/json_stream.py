"""The JSON envelope (version 1) written as a stream: ``TraceResult.save("t.json")``.

The text is what `flow_xray.formats.flow_xray_json.result_to_json` makes
(``{"version": 1, "totals": {...}, "nodes": [...]}``, each node its fields
and ``children``, no ``meta`` key when it has none, lone surrogates written as
visible ``\\udcXX`` escapes) but it is made a chunk of calls at a time, in
pre-order, so a million-call trace is written without its whole text or its
nodes' dicts ever existing: each node's text is its fields' JSON texts put
into a template, the texts made a column at a time (a string by the C
encoder, a value shared by many calls once, inputs and outputs a lazily built
node has not decoded as the JSON text its span holds). No OpenTelemetry here.
"""

from __future__ import annotations

import json
import json.encoder
import os
from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import Any, Final

from flow_xray import jsontext
from flow_xray.files import write_chunks_atomic
from flow_xray.formats.columnar import ValueTexts
from flow_xray.formats.compact import CHUNK_ROWS, node_columns, preorder
from flow_xray.jsontext import gc_paused
from flow_xray.serialize.text import has_unwritable, writable_data
from flow_xray.tree.model import ACCOUNTING_FIELDS, DATA_FIELDS, TraceNode, TraceResult, totals_dict

_STRING: Final = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) uses
_AT_META: Final = DATA_FIELDS.index("meta")


def _template(names: Sequence[str]) -> str:
    return "{" + ", ".join(f'"{name}": %s' for name in names) + ', "children": ['


_WITH_META: Final = _template(DATA_FIELDS)
_WITHOUT_META: Final = _template([n for n in DATA_FIELDS if n != "meta"])


def save_json(result: TraceResult, path: str | os.PathLike[str]) -> None:
    """Write the JSON envelope of ``result`` to ``path`` as a stream (`flow_xray.files` rules)."""
    write_chunks_atomic(path, (text.encode("utf-8") for text in json_chunks(result)))


def json_chunks(result: TraceResult, chunk_rows: int = CHUNK_ROWS) -> Iterator[str]:
    """The text of ``result``'s JSON envelope, a chunk of calls at a time."""
    totals = jsontext.dumps(totals_dict(result.totals), default=repr)  # counts every node first
    yield f'{{"version": 1, "totals": {totals}, "nodes": ['
    nodes, parents = preorder(result.roots)
    depths = _depths(parents)
    for start in range(0, len(nodes), chunk_rows):
        end = start + chunk_rows
        with gc_paused():
            texts = _node_texts(nodes[start:end])
            yield "".join(_nested(texts, depths, start))
    yield "]}" * (depths[-1] + 1) + "]}" if nodes else "]}"


def _depths(parents: Sequence[int]) -> list[int]:
    depths: list[int] = []
    add = depths.append
    for parent in parents:
        add(0 if parent < 0 else depths[parent] + 1)
    return depths


def _nested(texts: list[str], depths: Sequence[int], start: int) -> Iterator[str]:
    """The nodes' texts with what closes the nodes before each and separates siblings."""
    for at, text in enumerate(texts, start):
        if at:
            before, depth = depths[at - 1], depths[at]
            if depth <= before:  # not a first child: close the previous node and its elders
                yield "]}" * (before - depth + 1) + ", "
        yield text


def _node_texts(nodes: Sequence[TraceNode]) -> list[str]:
    """Each node's text up to its children: ``{"id": ..., ..., "children": [``."""
    columns = node_columns(nodes)
    columns.update((name, list(map(attrgetter(name), nodes))) for name in ACCOUNTING_FIELDS)
    texts = [_texts(columns[name]) for name in DATA_FIELDS]
    meta = texts[_AT_META]
    plain = texts[:_AT_META] + texts[_AT_META + 1 :]  # the fields but meta
    rows = zip(zip(*plain, strict=True), zip(*texts, strict=True), meta, strict=True)
    out = [_WITHOUT_META % values if m == "{}" else _WITH_META % full for values, full, m in rows]
    if has_unwritable("".join(out)):
        out = [_writable(node, text) for node, text in zip(nodes, out, strict=True)]
    return out


def _writable(node: TraceNode, text: str) -> str:
    """A node's text with lone surrogates in its strings shown as ``\\udcXX``, as
    `flow_xray.formats.flow_xray_json.result_to_json` writes them."""
    if not has_unwritable(text):
        return text
    fields = dict(zip(DATA_FIELDS, node.field_values(), strict=True))
    if not fields["meta"]:
        del fields["meta"]
    whole = jsontext.dumps(writable_data(fields), default=repr)
    return whole[:-1] + ', "children": ['


def _texts(values: Sequence[Any]) -> list[str]:
    """Each value's JSON text (``json.dumps(value, ensure_ascii=False, default=repr)``)."""
    if set(map(type, values)) == {str}:
        seen: dict[str, str] = {}
        return [seen.get(v) or seen.setdefault(v, _STRING(v)) for v in values]
    return list(map(ValueTexts().text, values))
