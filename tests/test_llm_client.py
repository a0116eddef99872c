"""The one LLM client (casebook/llm.py) against the local OpenAI-compatible server: the SDK retries
transport errors and every HTTP request is counted, unusable replies are asked again with their
tokens kept, batches stay within their concurrency, the format ladder probes without backoff."""
from __future__ import annotations

import json
import time

import pytest

from casebook.llm import LLMClient, LLMError, LLMSettings, ReplyTries, server_context_size
from casebook.openai_test_server import OpenAITestServer, Reply

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def _client(server: OpenAITestServer, **overrides) -> LLMClient:
    return LLMClient(LLMSettings(base_url=server.base_url, model="m", timeout=5, **overrides))


def _ask(client: LLMClient, text: str = "谁是凶手？"):
    return client.chat_reply([{"role": "user", "content": text}], SCHEMA)


def test_the_sdk_retries_5xx_and_429_and_every_request_is_counted():
    with OpenAITestServer(reply=json.dumps({"answer": "王村长"}, ensure_ascii=False)) as server:
        client = _client(server, attempts=4, response_format="none")
        server.enqueue(Reply.error(503, retry_after=0.01), Reply.rate_limited(retry_after=0.01))
        reply = _ask(client)
        assert reply.value == {"answer": "王村长"} and reply.attempts == 3 and server.count == 3
        server.enqueue(*[Reply.error(502, retry_after=0.01)] * 4)
        with pytest.raises(LLMError, match=r"HTTP 502 .*gave up after 4 attempts"):
            _ask(client)
        assert server.count == 3 + 4


def test_unusable_replies_are_asked_again_and_their_tokens_are_kept():
    with OpenAITestServer() as server:
        client = _client(server, attempts=3, response_format="none")
        server.enqueue(Reply.text("not json", usage={"prompt_tokens": 10, "completion_tokens": 2}),
                       Reply.no_choices(),
                       Reply.text("{still not", usage={"prompt_tokens": 10, "completion_tokens": 3}))
        with pytest.raises(LLMError, match=r"not valid JSON.*gave up after 3 attempts") as failure:
            _ask(client)
        assert failure.value.usage == {"prompt_tokens": 20, "completion_tokens": 5}
        assert failure.value.reply == "{still not" and server.count == 3
        server.enqueue("oops", '{"answer": "甲"}')
        reply = _ask(client)
        assert reply.value == {"answer": "甲"} and reply.attempts == 2 and len(reply.errors) == 1


def test_reply_tries_counts_errors_and_usage():
    tries = ReplyTries(2)
    seen = []
    for attempt in tries:
        seen.append(attempt)
        tries.add_usage({"prompt_tokens": 5})
        tries.unusable(f"bad {attempt}", "text")
    assert seen == [1, 2] and tries.errors == ["bad 1", "bad 2"] and tries.usage["prompt_tokens"] == 10
    assert tries.last_error == "bad 2" and ReplyTries(0).limit == 1


def test_a_llama_cpp_refusal_of_json_schema_is_seen_at_once_not_after_the_sdks_backoff():
    with OpenAITestServer.like_llama_cpp(reply='{"answer": "x"}') as server:
        client = _client(server, attempts=4)
        started = time.monotonic()
        assert _ask(client).value == {"answer": "x"}
        assert time.monotonic() - started < 0.4  # no 0.5 s + 1 s + 2 s of backoff on the refusal
        assert [(r.get("response_format") or {}).get("type") for r in server.requests] == ["json_schema", "json_object"]
        assert server.requests[1]["response_format"]["schema"] == SCHEMA


def test_a_prompt_over_the_context_is_not_retried_and_the_size_is_read_from_the_server():
    with OpenAITestServer.like_llama_cpp(context_size=40, reply='{"answer": "x"}') as server:
        client = _client(server, attempts=4, response_format="none")
        with pytest.raises(LLMError, match="HTTP 400"):
            _ask(client, "线索" * 100)
        assert server.count == 1
        assert server_context_size(server.base_url, None, "test-model") == 40
    with OpenAITestServer(advertise_context=False, context_size=40) as quiet:
        assert server_context_size(quiet.base_url, None, "test-model") is None
    assert server_context_size("http://127.0.0.1:9/v1", None, "m", timeout=0.5) is None


def test_map_keeps_within_its_concurrency_and_reports_each_failure():
    with OpenAITestServer(reply='{"answer": "a"}', latency=0.05) as server:
        client = _client(server, attempts=1, concurrency=2, response_format="none")
        server.enqueue(Reply.error(400, "bad"))
        results = list(client.map(lambda i: _ask(client, f"问题 {i}").value, range(6)))
        assert server.max_in_flight == 2 and server.count == 6
        assert sum(1 for _, _, error in results if error is not None) == 1
        assert sum(1 for _, value, _ in results if value == {"answer": "a"}) == 5


def test_keyless_local_server_is_configured_and_no_endpoint_is_a_clear_error():
    assert LLMSettings(base_url="http://127.0.0.1:1/v1").configured
    assert not LLMSettings().configured
    with pytest.raises(LLMError, match="OPENAI_BASE_URL"):
        LLMClient(LLMSettings())
