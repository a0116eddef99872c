"""LLM distractors against the local OpenAI-compatible server: replies good and bad, retries, storage."""
from __future__ import annotations

import json

import pytest

from annotate.models import Question
from casebook.llm import LLMClient, LLMError, LLMSettings, parse_json_reply
from casebook.openai_test_server import Reply
from generation.distractors import generate_for_question

from .conftest import bare_copy


def _who_killed(game) -> Question:
    return bare_copy(game.questions.filter(kind="objective").order_by("position").first())


def _reply(*items: str) -> str:
    return json.dumps({"distractors": list(items)}, ensure_ascii=False)


def test_parse_json_reply_accepts_fences_and_prose_and_explains_failures():
    assert parse_json_reply('{"distractors": ["a"]}') == {"distractors": ["a"]}
    assert parse_json_reply('Sure!\n```json\n{"distractors": ["甲", "乙"]}\n```\nDone.') == {"distractors": ["甲", "乙"]}
    assert parse_json_reply('Here you go: {"distractors": ["x"]} hope it helps') == {"distractors": ["x"]}
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_json_reply('{"distractors": ["unterminated"')
    with pytest.raises(ValueError, match="empty"):
        parse_json_reply("  ")


def test_good_json_is_stored_as_pending_llm_options(sin_zh, llm_server):
    llm_server.enqueue(_reply("张村民", "胡调研", "李警察"))
    question = _who_killed(sin_zh)
    version = question.version
    outcome = generate_for_question(question, 3, client=LLMClient(LLMSettings.from_settings()))

    options = list(question.options.order_by("position"))
    assert [o.text for o in options] == ["王村长", "张村民", "胡调研", "李警察"]
    generated = options[1:]
    assert {(o.origin, o.model_name, o.review, o.is_correct) for o in generated} == {("llm", "test-model", "pending", False)}
    assert outcome.origin == "llm" and len(outcome.options) == 3
    question.refresh_from_db()
    assert question.version == version + 1 and question.raw == "" and question.answer == "a"

    request = llm_server.requests[-1]
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["distractors"]
    prompt = request["messages"][-1]["content"]
    assert "赵慈善被谁杀死的" in prompt and "Correct answer: 王村长" in prompt
    assert "Simplified Chinese" in prompt and "exactly 3 distractors" in prompt
    assert "张村民" in prompt  # the game's people are offered for a person question


def test_json_in_a_code_fence_and_duplicates_of_the_answer_are_cleaned(sin_zh, llm_server):
    llm_server.enqueue('Here they are:\n```json\n{"distractors": ["王村长", "张村民 ", "胡调研"]}\n```')
    question = _who_killed(sin_zh)
    generate_for_question(question, 3, client=LLMClient(LLMSettings.from_settings()))
    assert list(question.options.values_list("text", flat=True).order_by("position")) == ["王村长", "张村民", "胡调研"]


def test_malformed_json_is_retried_then_explained(sin_zh, llm_server):
    client = LLMClient(LLMSettings.from_settings())
    llm_server.enqueue('{"distractors": ["张村民", ', _reply("张村民", "胡调研", "李警察"))
    question = _who_killed(sin_zh)
    generate_for_question(question, 3, client=client)
    assert question.options.count() == 4 and llm_server.count == 2

    other = _who_killed(sin_zh)
    llm_server.enqueue("not json at all", "still {not json", Reply.malformed())
    with pytest.raises(LLMError, match=r"not valid JSON.*gave up after 3 attempts"):
        generate_for_question(other, 3, client=client)
    assert other.options.count() == 1  # nothing half-written


def test_rate_limit_then_success(sin_zh, llm_server):
    llm_server.enqueue(Reply.rate_limited(retry_after=0.05), _reply("张村民", "胡调研", "李警察"))
    question = _who_killed(sin_zh)
    generate_for_question(question, 3, client=LLMClient(LLMSettings.from_settings()))
    assert llm_server.count == 2 and question.options.count() == 4


def test_timeouts_are_retried_and_reported(sin_zh, llm_server):
    settings = LLMSettings.from_settings(timeout=0.3, attempts=2)
    llm_server.enqueue(Reply.slow(1.0, _reply("x")), _reply("张村民", "胡调研", "李警察"))
    question = _who_killed(sin_zh)
    generate_for_question(question, 3, client=LLMClient(settings))
    assert question.options.count() == 4

    llm_server.enqueue(Reply.slow(1.0, _reply("x")), Reply.slow(1.0, _reply("x")))
    with pytest.raises(LLMError, match="timed out.*gave up after 2 attempts"):
        generate_for_question(_who_killed(sin_zh), 3, client=LLMClient(settings))


def test_client_errors_are_not_retried(sin_zh, llm_server):
    llm_server.enqueue(Reply.error(401, "bad key"))
    with pytest.raises(LLMError, match="HTTP 401"):
        generate_for_question(_who_killed(sin_zh), 3, client=LLMClient(LLMSettings.from_settings()))
    assert llm_server.count == 1


def test_no_key_is_a_clear_error(no_llm):
    with pytest.raises(LLMError, match="OPENAI_API_KEY"):
        LLMClient(LLMSettings.from_settings())


def test_english_prompt_carries_context_from_the_perspective_script(sin_en, llm_server):
    question = bare_copy(sin_en.questions.filter(kind="reasoning", sub_type="where").first())
    llm_server.enqueue(_reply("In the study", "On the deck", "By the river"))
    generate_for_question(question, 3, client=LLMClient(LLMSettings.from_settings()))
    prompt = llm_server.requests[-1]["messages"][-1]["content"]
    assert "Language of the options: English" in prompt and "a place or location" in prompt
    assert "Context from the game:" in prompt and "Zhao Cishan" in prompt.split("Context from the game:")[1]
    assert sorted(question.options.values_list("origin", flat=True)) == ["human", "llm", "llm", "llm"]


def test_servers_without_structured_output_get_plain_requests(sin_zh, llm_server):
    def responder(request, n):
        if "response_format" in request:
            return Reply.error(400, "response_format of type json_schema is not supported by this server")
        return "好的：" + _reply("张村民", "胡调研", "李警察")

    llm_server.responder = responder
    client = LLMClient(LLMSettings.from_settings())
    generate_for_question(_who_killed(sin_zh), 3, client=client)
    generate_for_question(_who_killed(sin_zh), 3, client=client)
    # json_schema refused, json_object refused the same way, then plain JSON for good
    assert ["response_format" in r for r in llm_server.requests] == [True, True, False, False]


def _llama_settings(server, settings, **overrides):
    settings.OPENAI_API_KEY = ""  # a keyless local server
    settings.OPENAI_BASE_URL = server.base_url
    settings.CASEBOOK_LLM_MODEL = "smollm2"
    settings.CASEBOOK_LLM_ATTEMPTS = 3
    for key, value in overrides.items():
        setattr(settings, key, value)
    return LLMSettings.from_settings()


def test_llama_cpp_server_falls_back_from_json_schema_keyless_with_max_tokens(sin_zh, settings):
    """llama.cpp: 500 on json_schema, one slot, no key: json_object is used from then on."""
    from casebook.openai_test_server import OpenAITestServer

    with OpenAITestServer.like_llama_cpp(context_size=8000, reply=_reply("张村民", "胡调研", "李警察")) as server:
        client = LLMClient(_llama_settings(server, settings))
        generate_for_question(_who_killed(sin_zh), 3, client=client)
        generate_for_question(_who_killed(sin_zh), 3, client=client)
        formats = [(r.get("response_format") or {}).get("type") for r in server.requests]
        assert formats == ["json_schema", "json_object", "json_object"]
        assert all(r["max_tokens"] == 1024 for r in server.requests)
        assert client.response_format == "json_object"


def test_plain_json_is_the_last_rung_and_the_switch_starts_lower(sin_zh, settings):
    from casebook.openai_test_server import OpenAITestServer

    def responder(request, n):
        if "response_format" in request:
            return Reply.error(422, f"unsupported response_format {request['response_format']['type']}")
        return _reply("张村民", "胡调研", "李警察")

    with OpenAITestServer(responder=responder) as server:
        client = LLMClient(_llama_settings(server, settings))
        generate_for_question(_who_killed(sin_zh), 3, client=client)
        assert [(r.get("response_format") or {}).get("type") for r in server.requests] == \
            ["json_schema", "json_object", None]
        server.reset_counters()
        plain = LLMClient(_llama_settings(server, settings, CASEBOOK_LLM_RESPONSE_FORMAT="none",
                                          CASEBOOK_LLM_MAX_TOKENS=200))
        generate_for_question(_who_killed(sin_zh), 3, client=plain)
        assert server.count == 1 and "response_format" not in server.requests[0]
        assert server.requests[0]["max_tokens"] == 200


def test_a_500_that_does_not_name_the_format_is_an_ordinary_retry(sin_zh, llm_server):
    llm_server.enqueue(Reply.error(500, "out of memory"), _reply("张村民", "胡调研", "李警察"))
    client = LLMClient(LLMSettings.from_settings())
    generate_for_question(_who_killed(sin_zh), 3, client=client)
    assert client.response_format == "json_schema" and llm_server.count == 2


def test_garbage_is_filtered_and_an_empty_list_is_named(sin_zh, llm_server):
    question = _who_killed(sin_zh)
    llm_server.enqueue(_reply("...", "S", "N/A", "Option 2", "赵慈善被谁杀死的？", "张村民", "胡调研"))
    generate_for_question(question, 3, client=LLMClient(LLMSettings.from_settings()))
    assert list(question.options.values_list("text", flat=True).order_by("position")) == ["王村长", "张村民", "胡调研"]

    other = _who_killed(sin_zh)
    llm_server.enqueue(_reply())
    with pytest.raises(LLMError, match="no options"):
        generate_for_question(other, 3, client=LLMClient(LLMSettings.from_settings()))
    llm_server.enqueue(_reply("…", "x", "王村长"))
    with pytest.raises(LLMError, match="placeholder"):
        generate_for_question(other, 3, client=LLMClient(LLMSettings.from_settings()))
    assert other.options.count() == 1  # nothing stored


def test_keyless_local_server_is_configured(settings):
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_BASE_URL = "http://127.0.0.1:1/v1"
    assert LLMSettings.from_settings().configured
    LLMClient(LLMSettings.from_settings())  # no error
