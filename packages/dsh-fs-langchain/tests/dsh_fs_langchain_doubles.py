"""LangChain's own scripted chat model, able to drive an agent, and the scenes the tests share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

CRLF_BEFORE = b"DEBUG = True\r\nPORT = 8000\r\n"
CRLF_AFTER = b"DEBUG = False\r\nPORT = 8000\r\n"


class ScriptedChatModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` answering with scripted turns, recording what it was sent.

    Agents bind their tools to the model; the fake ignores them (its turns
    are written already) but keeps their names, so a test can say which
    tools the model was offered.
    """

    sent: list[list[BaseMessage]] = Field(default_factory=list)
    offered: list[list[str]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        self.offered.append([getattr(tool, "name", None) or tool["name"] for tool in tools])
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.sent.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop, None, **kwargs)


def turn(name: str, args: dict[str, Any], n: int) -> AIMessage:
    """One turn that calls tool ``name``."""
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{n}"}])
