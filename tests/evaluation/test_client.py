"""The async client against the local server: cache, resume, bounded concurrency, retries."""
from __future__ import annotations

from pathlib import Path

from casebook.llm import ChatClient, ChatRequest, Prices, ResponseCache
from casebook.openai_test_server import OpenAITestServer, Reply


def _requests(n: int, model: str = "m") -> list[ChatRequest]:
    return [ChatRequest(model, [{"role": "user", "content": f"问题 {i}"}], {"temperature": 0}) for i in range(n)]


def _client(server: OpenAITestServer, tmp_path: Path, **kw) -> ChatClient:
    return ChatClient(base_url=server.base_url, api_key="test", cache=ResponseCache(tmp_path / "cache"),
                      progress=False, **kw)


def test_cache_key_covers_model_messages_and_parameters() -> None:
    base = ChatRequest("m", [{"role": "user", "content": "x"}], {"temperature": 0, "seed": 1})
    assert base.key() == ChatRequest("m", [{"role": "user", "content": "x"}], {"seed": 1, "temperature": 0}).key()
    assert base.key() != ChatRequest("m2", base.messages, base.params).key()
    assert base.key() != ChatRequest("m", [{"role": "user", "content": "y"}], base.params).key()
    assert base.key() != ChatRequest("m", base.messages, {"temperature": 0, "seed": 2}).key()


def test_second_run_sends_nothing_and_gives_the_same_answers(server, tmp_path) -> None:
    server.responder = lambda req, n: f"reply to {req['messages'][0]['content']}"
    first = _client(server, tmp_path, prices=Prices(1.0, 2.0))
    results = first.run_sync(_requests(6))
    assert server.count == 6 and first.sent == 6 and first.cached == 0
    assert first.usage.prompt_tokens > 0 and first.cost > 0
    second = _client(server, tmp_path)
    again = second.run_sync(_requests(6))
    assert server.count == 6 and second.sent == 0 and second.cached == 6
    assert [r.content for r in again] == [r.content for r in results] == [f"reply to 问题 {i}" for i in range(6)]
    assert all(r.cached for r in again)


def test_interrupted_run_resumes_with_only_the_missing_requests(tmp_path) -> None:
    with OpenAITestServer(reply="B", fail_after=4) as server:
        client = _client(server, tmp_path, concurrency=1, max_retries=1)
        results = client.run_sync(_requests(10))
        ok = [r for r in results if r.content is not None]
        assert len(ok) == 4 and client.failed == 6  # failures are results, not exceptions
        assert client.failed_by_reason == {"server": 6}
        server.fail_after = None  # the endpoint recovers
        server.reset_counters()
        client = _client(server, tmp_path)
        results = client.run_sync(_requests(10))
        assert server.count == 6 and client.cached == 4
        assert all(r.content == "B" for r in results)
        sent = {r["messages"][0]["content"] for r in server.requests}
        assert sent == {f"问题 {i}" for i in range(4, 10)}


def test_concurrency_is_bounded(tmp_path) -> None:
    with OpenAITestServer(reply="A", latency=0.05) as srv:
        client = _client(srv, tmp_path, concurrency=3)
        client.run_sync(_requests(15))
        assert srv.count == 15
        assert srv.max_in_flight == 3  # reached, never exceeded


def test_429_500_and_timeout_are_retried_then_succeed(tmp_path) -> None:
    with OpenAITestServer(reply="C") as srv:
        srv.enqueue(Reply.rate_limited(retry_after=0.05), Reply.error(500), Reply.error(503), Reply.slow(2.0, "late"))
        client = _client(srv, tmp_path, concurrency=1, timeout=0.5, max_retries=5)
        [result] = client.run_sync(_requests(1))
        assert result.content == "C" and result.attempts == 5 and result.error == ""
        assert srv.count == 5 and client.sent == 5


def test_client_error_is_not_retried_and_malformed_body_fails_cleanly(tmp_path) -> None:
    with OpenAITestServer(reply="C") as srv:
        srv.enqueue(Reply.error(400, "bad request"))
        client = _client(srv, tmp_path, max_retries=3)
        [result] = client.run_sync(_requests(1))
        assert result.content is None and "400" in result.error and srv.count == 1
    with OpenAITestServer(responder=lambda req, n: Reply.malformed()) as srv:
        client = _client(srv, tmp_path, max_retries=1)
        [result] = client.run_sync(_requests(1, model="other"))
        assert result.content is None and result.error
        assert not list((tmp_path / "cache").rglob("*.tmp"))


def test_identical_requests_in_one_batch_are_sent_once(server, tmp_path) -> None:
    client = _client(server, tmp_path)
    results = client.run_sync(_requests(2) + _requests(2))
    assert server.count == 2 and len(results) == 4 and client.cached == 2


def test_run_blocking_works_inside_a_running_event_loop():
    """Notebooks and Playwright's sync API keep a loop running; the runner must still work there."""
    import asyncio

    from casebook.llm import run_blocking

    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def caller() -> int:
        return run_blocking(answer())  # called from synchronous code while this loop runs

    assert run_blocking(answer()) == 42
    assert run_blocking(caller()) == 42  # the inner call finds a running loop


def test_context_overflow_fails_with_its_reason_and_is_not_retried(tmp_path) -> None:
    with OpenAITestServer.like_llama_cpp(context_size=50) as srv:
        client = _client(srv, tmp_path, max_retries=5)
        long = ChatRequest("m", [{"role": "user", "content": "线索" * 100}], {})
        [result] = client.run_sync([long])
        assert result.content is None and result.failure == "context" and srv.count == 1
        assert client.failed_by_reason == {"context": 1}
        assert not list((tmp_path / "cache").rglob("*.json"))


def test_401_stops_the_run_at_once(tmp_path) -> None:
    import pytest

    from casebook.llm import EndpointAuthError

    with OpenAITestServer(api_key="right") as srv:
        client = ChatClient(base_url=srv.base_url, api_key="wrong", cache=ResponseCache(tmp_path / "c"),
                            progress=False, concurrency=4, max_retries=5)
        with pytest.raises(EndpointAuthError, match="refused"):
            client.run_sync(_requests(20))
        assert srv.count < 20  # stopped, not one 401 per request (and never retried)


def test_broken_200_responses_are_retried_and_never_cached(tmp_path) -> None:
    with OpenAITestServer(reply="B") as srv:
        srv.enqueue(Reply.no_choices(), Reply.malformed(), Reply.text(""))
        client = _client(srv, tmp_path, concurrency=1, max_retries=5)
        [result] = client.run_sync(_requests(1))
        assert result.content == "B" and srv.count == 4
    with OpenAITestServer(responder=lambda req, n: Reply.no_choices()) as srv:
        client = _client(srv, tmp_path, max_retries=1)
        [result] = client.run_sync(_requests(1, model="other"))
        assert result.content is None and result.failure == "server" and "no choices" in result.error
        cached = [p.read_text(encoding="utf-8") for p in (tmp_path / "cache").rglob("*.json")]
        assert len(cached) == 1 and '"B"' in cached[0]  # only the good answer was ever stored


def test_refresh_failed_resends_empty_entries_of_older_caches(server, tmp_path) -> None:
    client = _client(server, tmp_path)
    [request] = _requests(1)
    client.cache.put(client.key(request), request, "", client.usage)  # what older versions stored
    assert client.run_sync([request])[0].content == "" and server.count == 0
    refreshing = _client(server, tmp_path, refresh_failed=True)
    assert refreshing.run_sync([request])[0].content == '{"answer": "a"}' and server.count == 1


def test_concurrency_backs_off_on_a_server_that_computes_one_request_at_a_time(tmp_path) -> None:
    """--concurrency 8 against a one-slot server: no timeouts, no re-sent requests."""
    with OpenAITestServer(reply="A", latency=0.05, serial=True) as srv:
        client = _client(srv, tmp_path, concurrency=8, timeout=0.6, max_retries=3)
        results = client.run_sync(_requests(24))
        assert all(r.content == "A" for r in results)
        assert srv.count == 24 and client.sent == 24  # nothing timed out and was sent again
        # 8 at once would queue 8 × 50 ms at the server; the limit stays well below that
        assert srv.max_computing == 1 and srv.max_in_flight < 8
    with OpenAITestServer(reply="A", latency=0.05) as parallel:
        client = _client(parallel, tmp_path / "p", concurrency=4)
        client.run_sync(_requests(24))
        assert parallel.max_in_flight == 4  # a server that keeps up gets the full concurrency
