"""An agent written with a real agent framework, calling the fake server through its client.

``FX_FRAMEWORK`` picks the framework; each agent answers one question with one
tool (``get_weather``), so the trace holds an agent run, two model calls (the
tool call turn and the answer) and one tool execution:

- ``pydantic-ai``: ``Agent.instrument_all()`` — pydantic-ai's own GenAI spans
  (``invoke_agent``, ``chat``, ``execute_tool``, messages as GenAI parts);
- ``openai-agents``: ``Runner.run_sync`` traced by OpenInference's openai-agents
  instrumentor (its exclusive processor: nothing goes to OpenAI's trace backend);
- ``langchain``: a ``ChatOpenAI`` tool-calling loop in a ``RunnableLambda``, its
  tool a ``@trace(kind="tool")`` function, traced by OpenInference's LangChain
  instrumentor.

``FAKE_LLM_URL`` is the fake server. The whole run is inside ``@trace(kind="agent")``.
"""

from __future__ import annotations

import os
from typing import Any

from flow_xray import trace

URL = os.environ["FAKE_LLM_URL"]
QUESTION = "What is the weather in Paris?"
GPT = "gpt-4o-mini"


def get_weather(city: str) -> str:
    """The weather in ``city``."""
    return f"sunny in {city}"


def pydantic_ai_agent() -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel(GPT, provider=OpenAIProvider(base_url=f"{URL}/v1", api_key="sk-test"))
    Agent.instrument_all()  # pydantic-ai's own OpenTelemetry spans, from the global provider
    agent = Agent(model, instructions="Answer briefly.", name="weather")
    agent.tool_plain(get_weather)
    return agent.run_sync(QUESTION).output


def openai_agents_agent() -> Any:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument()
    client = AsyncOpenAI(base_url=f"{URL}/v1", api_key="sk-test", max_retries=0)
    agent = Agent(
        name="weather",
        instructions="Answer briefly.",
        model=OpenAIChatCompletionsModel(model=GPT, openai_client=client),
        tools=[function_tool(get_weather)],
    )
    return Runner.run_sync(agent, QUESTION).final_output


@trace(kind="tool")
def lookup_weather(city: str) -> str:
    """The weather in ``city`` (a traced function LangChain calls as its tool)."""
    return get_weather(city)


def langchain_agent() -> Any:
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_core.runnables import RunnableConfig, RunnableLambda
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument()
    weather = tool(lookup_weather)
    llm = ChatOpenAI(model=GPT, base_url=f"{URL}/v1", api_key="sk-test", max_retries=0).bind_tools(
        [weather]
    )

    def loop(question: str, config: RunnableConfig) -> Any:
        messages: list[Any] = [HumanMessage(question)]
        reply = llm.invoke(messages, config)
        messages.append(reply)
        for call in reply.tool_calls:
            result = weather.invoke(call["args"], config)
            messages.append(ToolMessage(result, tool_call_id=call["id"]))
        return llm.invoke(messages, config).content

    return RunnableLambda(loop, name="weather_agent").invoke(QUESTION)


FRAMEWORKS = {
    "pydantic-ai": pydantic_ai_agent,
    "openai-agents": openai_agents_agent,
    "langchain": langchain_agent,
}


@trace(kind="agent")
def agent(framework: str) -> Any:
    return FRAMEWORKS[framework]()


if __name__ == "__main__":
    print(agent(os.environ["FX_FRAMEWORK"]))
