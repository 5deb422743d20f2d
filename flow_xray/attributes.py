"""Every span attribute key flow-xray writes or reads, in one place.

flow-xray writes both the OpenTelemetry GenAI names and the OpenInference
names, so Jaeger, Tempo, Phoenix and Langfuse all show the spans natively.
Readers (the tree builder, the OTLP JSON importer) accept either family plus
the deprecated GenAI ``prompt_tokens`` / ``completion_tokens`` names.
"""

from __future__ import annotations

from typing import Final

# The instrumentation scope (tracer name) of flow-xray's own spans; any other scope is
# another instrumentation's.
TRACER_NAME: Final = "flow_xray"

# --- span kind ---------------------------------------------------------------
SPAN_KIND: Final = "openinference.span.kind"
KINDS: Final = ("chain", "llm", "tool", "agent", "retriever", "embedding")

# --- inputs and outputs ------------------------------------------------------
INPUT_VALUE: Final = "input.value"
INPUT_MIME_TYPE: Final = "input.mime_type"
OUTPUT_VALUE: Final = "output.value"
OUTPUT_MIME_TYPE: Final = "output.mime_type"
MIME_JSON: Final = "application/json"
MIME_TEXT: Final = "text/plain"

# --- model, provider, operation ----------------------------------------------
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
# Other spellings of the response id that readers accept (OpenInference-era names).
LLM_RESPONSE_ID: Final = "llm.response.id"
RESPONSE_ID_LEGACY: Final = "flow_xray.response_id"
LLM_MODEL_NAME: Final = "llm.model_name"
# OpenInference names an embedding call's model apart from an LLM's.
EMBEDDING_MODEL_NAME: Final = "embedding.model_name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
LLM_PROVIDER: Final = "llm.provider"
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
# A span's kind from its GenAI operation, when it declares no OpenInference kind.
OPERATION_KINDS: Final = {
    "invoke_agent": "agent",
    "create_agent": "agent",
    "execute_tool": "tool",
    "chat": "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    "embeddings": "embedding",
}

# --- tokens ------------------------------------------------------------------
# Token counts are 64-bit attribute ints (OTLP's int64): a count, or a sum of two, at or
# past this is none (a reader of the trace file refuses it).
MAX_TOKEN_COUNT: Final = 1 << 63
GEN_AI_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_PROMPT_TOKENS_DEPRECATED: Final = "gen_ai.usage.prompt_tokens"
GEN_AI_COMPLETION_TOKENS_DEPRECATED: Final = "gen_ai.usage.completion_tokens"
LLM_TOKENS_PROMPT: Final = "llm.token_count.prompt"
LLM_TOKENS_COMPLETION: Final = "llm.token_count.completion"
LLM_TOKENS_TOTAL: Final = "llm.token_count.total"

# --- cost (USD) --------------------------------------------------------------
LLM_COST_PROMPT: Final = "llm.cost.prompt"
LLM_COST_COMPLETION: Final = "llm.cost.completion"
LLM_COST_TOTAL: Final = "llm.cost.total"

# --- source location ---------------------------------------------------------
CODE_FUNCTION: Final = "code.function.name"
CODE_FILE: Final = "code.file.path"
CODE_LINE: Final = "code.line.number"

# --- errors ------------------------------------------------------------------
ERROR_TYPE: Final = "error.type"
EXCEPTION_EVENT: Final = "exception"
EXCEPTION_TYPE: Final = "exception.type"
EXCEPTION_MESSAGE: Final = "exception.message"
EXCEPTION_STACKTRACE: Final = "exception.stacktrace"
EXCEPTION_ESCAPED: Final = "exception.escaped"

# --- chat messages ------------------------------------------------------------
# OpenInference's, written for `llm` spans and read from any: flattened lists,
# ``llm.input_messages.{i}.message.role`` / ``.content``.
LLM_INPUT_MESSAGES: Final = "llm.input_messages"
LLM_OUTPUT_MESSAGES: Final = "llm.output_messages"
LLM_INVOCATION_PARAMETERS: Final = "llm.invocation_parameters"
# The GenAI conventions': JSON text of ``[{"role", "parts": [...]}]``.
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
# The GenAI system prompt (JSON text of parts), and a tool call's arguments and result.
GEN_AI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
# OpenLLMetry's: ``gen_ai.prompt.{i}.role`` / ``.content``, ``gen_ai.completion.{i}...``.
GEN_AI_PROMPT: Final = "gen_ai.prompt"
GEN_AI_COMPLETION: Final = "gen_ai.completion"
# Request settings (temperature, max_tokens, ...): ``gen_ai.request.<name>``.
GEN_AI_REQUEST_PREFIX: Final = "gen_ai.request."
# The keys that show a span carries chat messages in a shape the tree reads: the
# GenAI ones (a tool call's arguments and result too), and the first message's role
# or content of each flattened family.
MESSAGE_KEYS: Final = frozenset(
    {
        GEN_AI_INPUT_MESSAGES,
        GEN_AI_OUTPUT_MESSAGES,
        GEN_AI_SYSTEM_INSTRUCTIONS,
        GEN_AI_TOOL_CALL_ARGUMENTS,
        GEN_AI_TOOL_CALL_RESULT,
        *(
            f"{family}.0.{field}"
            for family in (GEN_AI_PROMPT, GEN_AI_COMPLETION)
            for field in ("role", "content")
        ),
        *(
            f"{family}.0.message.{field}"
            for family in (LLM_INPUT_MESSAGES, LLM_OUTPUT_MESSAGES)
            for field in ("role", "content")
        ),
    }
)

# --- HTTP and the OpenTelemetry data model ----------------------------------------
HTTP_STATUS_CODE: Final = "http.response.status_code"
HTTP_REQUEST_METHOD: Final = "http.request.method"
# The pre-1.0 HTTP conventions' names, which HTTP client instrumentations still write
# unless OTEL_SEMCONV_STABILITY_OPT_IN=http.
HTTP_STATUS_CODE_OLD: Final = "http.status_code"
HTTP_METHOD_OLD: Final = "http.method"
READ_HTTP_STATUS: Final = (HTTP_STATUS_CODE, HTTP_STATUS_CODE_OLD)
OTEL_SCOPE_NAME: Final = "otel.scope.name"
# Tags Jaeger stores OTLP span fields in (they are not attributes).
OTEL_STATUS_CODE: Final = "otel.status_code"
OTEL_STATUS_DESCRIPTION: Final = "otel.status_description"
OTEL_SCOPE_VERSION: Final = "otel.scope.version"
OTEL_LIBRARY_NAME: Final = "otel.library.name"
OTEL_LIBRARY_VERSION: Final = "otel.library.version"
SPAN_KIND_TAG: Final = "span.kind"
W3C_TRACESTATE_TAG: Final = "w3c.tracestate"

# --- other instrumentations' scope names the readers act on --------------------
# The provider SDKs' own spans (``anthropic`` >= 2.16 traces itself): closest to the wire.
PROVIDER_SDK_SCOPES: Final = ("com.anthropic.sdk", "anthropic.sdk", "openai.sdk", "google.genai")
# opentelemetry-util-genai (behind the official OpenAI instrumentation), and
# OpenInference's LangChain instrumentor (see `flow_xray.tree.fixups`).
GENAI_UTIL_SCOPES: Final = (
    "opentelemetry.util.genai",
    "opentelemetry.instrumentation.openai_v2",
)
LANGCHAIN_SCOPE: Final = "openinference.instrumentation.langchain"

# --- flow-xray's own ---------------------------------------------------------
META_PREFIX: Final = "flow_xray.meta."
# ``trace.tag("label", key=value)``: each label as ``flow_xray.tag.<label>`` = True, each
# key-value tag as ``flow_xray.tag.<key>``; the viewer shows them as badges.
TAG_PREFIX: Final = "flow_xray.tag."
# A 0.3.x trace file's node field for its tags (read into the node's attributes).
TAGS_03: Final = "tags"
# A figure another span already reports for the same LLM request (kept out of the
# standard keys so backends summing them count the request once).
USAGE_COUNTED_IN: Final = "flow_xray.usage.counted_in"
DUP_MODEL: Final = "flow_xray.usage.model"
DUP_INPUT_TOKENS: Final = "flow_xray.usage.input_tokens"
DUP_OUTPUT_TOKENS: Final = "flow_xray.usage.output_tokens"
INCOMPLETE: Final = "flow_xray.incomplete"
# Where a failed call's exception was raised, ``path:line`` ready to paste into an
# editor (the ``exception`` event carries it as ``code.file.path`` / ``code.line.number``).
ERROR_LOCATION: Final = "flow_xray.error.location"
# How a call that neither returned nor failed ended: "cancelled" (asyncio/anyio
# cancellation, a timeout, a failing sibling in a TaskGroup) or "interrupted"
# (Ctrl-C, SIGTERM). Its span status stays UNSET: not a failure (see recording.py).
OUTCOME: Final = "flow_xray.outcome"
CANCELLED: Final = "cancelled"
INTERRUPTED: Final = "interrupted"

# --- process (OpenTelemetry semantic conventions) ----------------------------
PROCESS_PID: Final = "process.pid"
THREAD_ID: Final = "thread.id"
THREAD_NAME: Final = "thread.name"

# Read order when several families carry the same fact: first present wins.
READ_MODEL: Final = (
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_REQUEST_MODEL,
    LLM_MODEL_NAME,
    EMBEDDING_MODEL_NAME,
    DUP_MODEL,
)
READ_PROMPT_TOKENS: Final = (
    GEN_AI_INPUT_TOKENS,
    LLM_TOKENS_PROMPT,
    GEN_AI_PROMPT_TOKENS_DEPRECATED,
    DUP_INPUT_TOKENS,
)
READ_COMPLETION_TOKENS: Final = (
    GEN_AI_OUTPUT_TOKENS,
    LLM_TOKENS_COMPLETION,
    GEN_AI_COMPLETION_TOKENS_DEPRECATED,
    DUP_OUTPUT_TOKENS,
)
READ_TOTAL_TOKENS: Final = (LLM_TOKENS_TOTAL,)
READ_RESPONSE_ID: Final = (GEN_AI_RESPONSE_ID, LLM_RESPONSE_ID, RESPONSE_ID_LEGACY)
READ_COST: Final = (LLM_COST_TOTAL,)

# Keys the tree turns into first-class fields; the rest stay in ``attributes``.
CONSUMED: Final = frozenset(
    {
        SPAN_KIND,
        INPUT_VALUE,
        INPUT_MIME_TYPE,
        OUTPUT_VALUE,
        OUTPUT_MIME_TYPE,
        INCOMPLETE,
        OUTCOME,
        *READ_MODEL,
        *READ_PROMPT_TOKENS,
        *READ_COMPLETION_TOKENS,
        *READ_TOTAL_TOKENS,
        *READ_COST,
    }
)
