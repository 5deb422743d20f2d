"""The static context: a call graph of the program's source, matched with a run.

`index.StaticIndex.build` reads source with `ast` (`scan`, then `resolve`) into
the functions and calls of `functions`; `merge` matches a run's calls to it
(executed marks, ghosts, runtime-only edges); `rows` puts the result on the
viewer page. The public names are exported by `flow_xray.analysis`. No
OpenTelemetry here.
"""
