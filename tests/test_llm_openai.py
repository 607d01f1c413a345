"""The OpenAI-compatible backend against a fake server on 127.0.0.1 that the tests
start themselves (stdlib `http.server` in a thread)."""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memagent.core.deadline import deadline
from memagent.core.errors import DeadlineExceeded, InvalidInput, MemagentError
from memagent.llm import LLM, LLMError
from memagent.llm.openai_compat import OpenAICompatLLM

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}

# What the fake returns: (status, JSON body) or (200, [SSE text pieces]).
Reply = tuple[int, Any]
Responder = Callable[[dict[str, Any]], Reply]


def completion(text: str, *, prompt_tokens: int = 7, completion_tokens: int = 3) -> Reply:
    return 200, {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error(status: int, message: str) -> Reply:
    return status, {"error": {"message": message, "type": "invalid_request_error"}}


@dataclass
class RawBody:
    content_type: str
    data: bytes


def sse_event(piece: str | None, usage: dict[str, int] | None = None) -> bytes:
    chunk: dict[str, Any] = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "fake-model",
        "choices": [] if piece is None else [{"index": 0, "delta": {"content": piece}}],
    }
    if usage is not None:
        chunk["usage"] = {**usage, "total_tokens": sum(usage.values())}
    return f"data: {json.dumps(chunk)}\n\n".encode()


@dataclass
class SlowStream:
    """A long stream written chunk by chunk; after `cancel_after` chunks it sets
    `cancel` (as the memagent server does on a 504) and records whether the client
    closed the connection before the stream's end."""

    total: int = 2000
    cancel_after: int | None = None
    cancel: threading.Event | None = None
    sent: int = 0
    closed_by_client: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    def write(self, out: Any) -> None:
        try:
            for i in range(self.total):
                out.write(sse_event(f"t{i} "))
                out.flush()
                self.sent += 1
                if self.cancel is not None and self.sent == self.cancel_after:
                    self.cancel.set()
                time.sleep(0.005)
            out.write(b"data: [DONE]\n\n")
        except OSError:  # broken pipe / reset: the client hung up
            self.closed_by_client = True
        finally:
            self.done.set()


class FakeServer:
    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                body["_path"] = self.path
                body["_auth"] = self.headers.get("Authorization")
                fake.requests.append(body)
                status, payload = fake.responder(body)
                if isinstance(payload, SlowStream):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    payload.write(self.wfile)
                    return
                if isinstance(payload, RawBody):
                    self.send_response(status)
                    self.send_header("Content-Type", payload.content_type)
                    self.send_header("Content-Length", str(len(payload.data)))
                    self.end_headers()
                    self.wfile.write(payload.data)
                    return
                if isinstance(payload, list):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for piece in payload:
                        chunk = {
                            "id": "c",
                            "object": "chat.completion.chunk",
                            "created": 1,
                            "model": "fake-model",
                            "choices": [{"index": 0, "delta": {"content": piece}}],
                        }
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[[Responder], FakeServer]]:
    servers: list[FakeServer] = []

    def start(responder: Responder) -> FakeServer:
        servers.append(FakeServer(responder))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def client(server: FakeServer, **kw: Any) -> OpenAICompatLLM:
    return OpenAICompatLLM("fake-model", base_url=server.url, max_retries=0, **kw)


USER = [{"role": "user", "content": "Who is Ana?"}]


def test_plain_chat_sends_messages_and_reports_usage(serve: Any) -> None:
    server = serve(lambda body: completion("Ana is 31."))
    llm = client(server, api_key="sk-local")
    assert isinstance(llm, LLM)
    result = llm.chat(
        [{"role": "system", "content": "Be brief."}, *USER],
        stop=["\n\n"],
        max_tokens=50,
        temperature=0.3,
    )
    assert result.text == "Ana is 31."
    assert result.model == "fake-model"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (7, 3)
    assert result.usage.tokens_per_second is not None
    req = server.requests[0]
    assert req["_path"] == "/v1/chat/completions"
    assert req["_auth"] == "Bearer sk-local"
    assert req["model"] == "fake-model"
    assert req["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Who is Ana?"},
    ]
    assert (req["max_tokens"], req["temperature"], req["stop"]) == (50, 0.3, ["\n\n"])
    assert "response_format" not in req


def test_streaming_yields_pieces(serve: Any) -> None:
    server = serve(lambda body: (200, ["Ana ", "is ", "31."]))
    pieces = list(client(server).stream(USER))
    assert pieces == ["Ana ", "is ", "31."]
    assert server.requests[0]["stream"] is True


def test_schema_via_response_format(serve: Any) -> None:
    server = serve(lambda body: completion('{"name": "Ana", "age": 31}'))
    llm = client(server)
    result = llm.chat(USER, response_schema=SCHEMA)
    assert json.loads(result.text) == {"name": "Ana", "age": 31}
    rf = server.requests[0]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["schema"] == SCHEMA
    assert llm.supports_response_format is True
    assert len(server.requests) == 1


def test_schema_streaming_with_response_format(serve: Any) -> None:
    server = serve(lambda body: (200, ['{"name": ', '"Ana", "age": 31}']))
    text = "".join(client(server).stream(USER, response_schema=SCHEMA))
    assert json.loads(text) == {"name": "Ana", "age": 31}
    assert "response_format" in server.requests[0]


def test_streamed_reply_that_breaks_the_schema_is_an_error(serve: Any) -> None:
    server = serve(lambda body: (200, ['{"name": "Ana"}']))
    with pytest.raises(LLMError, match="does not fit the schema"):
        list(client(server).stream(USER, response_schema=SCHEMA))


def rejecting(replies: list[str]) -> Responder:
    """A server that refuses `response_format` and answers from `replies`."""

    def respond(body: dict[str, Any]) -> Reply:
        if "response_format" in body:
            return error(400, "response_format is not supported")
        return completion(replies.pop(0))

    return respond


def test_rejected_response_format_falls_back_to_prompt_and_repair(serve: Any) -> None:
    server = serve(rejecting(['Sure! Here it is: {"name": "Ana"}', '{"name": "Ana", "age": 31}']))
    llm = client(server)
    result = llm.chat(
        [{"role": "system", "content": "You extract."}, *USER], response_schema=SCHEMA
    )
    assert json.loads(result.text) == {"name": "Ana", "age": 31}
    assert result.usage.completion_tokens == 6  # both rounds counted
    assert llm.supports_response_format is False
    first, prompted, repair = server.requests
    assert "response_format" in first
    assert "response_format" not in prompted
    system = prompted["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You extract.")
    assert '"additionalProperties": false' in system["content"]  # the schema is in the prompt
    assert repair["messages"][-2] == {
        "role": "assistant",
        "content": 'Sure! Here it is: {"name": "Ana"}',
    }
    assert "'age' is a required property" in repair["messages"][-1]["content"]
    # Remembered: the next structured call goes straight to the prompt path.
    server.responder = rejecting(['```json\n{"name": "Bo", "age": 2}\n```'])
    assert json.loads(llm.chat(USER, response_schema=SCHEMA).text) == {"name": "Bo", "age": 2}
    assert "response_format" not in server.requests[-1]
    assert server.requests[-1]["messages"][0]["role"] == "system"


def test_fallback_streaming_yields_the_validated_reply(serve: Any) -> None:
    server = serve(rejecting(['{"name": "Ana", "age": 31}']))
    text = "".join(client(server).stream(USER, response_schema=SCHEMA))
    assert json.loads(text) == {"name": "Ana", "age": 31}


def test_reply_still_invalid_after_one_repair(serve: Any) -> None:
    server = serve(rejecting(["no json here", "still none"]))
    with pytest.raises(LLMError, match="even after one repair round"):
        client(server).chat(USER, response_schema=SCHEMA)
    assert len(server.requests) == 3  # rejected format, prompt, one repair — no more


def test_server_that_ignores_response_format_gets_repaired(serve: Any) -> None:
    replies = ["I think Ana is 31", '{"name": "Ana", "age": 31}']
    server = serve(lambda body: completion(replies.pop(0)))
    result = client(server).chat(USER, response_schema=SCHEMA)
    assert json.loads(result.text)["age"] == 31
    assert len(server.requests) == 2


def test_server_down_is_a_clear_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAICompatLLM("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    with pytest.raises(LLMError, match=r"cannot reach openai:m at http://127\.0\.0\.1") as info:
        llm.chat(USER)
    assert isinstance(info.value, MemagentError)
    with pytest.raises(LLMError, match="is the server running"):
        list(llm.stream(USER))


@pytest.mark.parametrize(
    ("status", "match"),
    [
        (401, "refused the API key"),
        (404, "is the model name right"),
        (500, "answered 500: boom"),
        (429, "answered 429"),
    ],
)
def test_server_errors_are_clear(serve: Any, status: int, match: str) -> None:
    server = serve(lambda body: error(status, "boom"))
    with pytest.raises(LLMError, match=match):
        client(server).chat(USER)


def test_non_format_400_is_not_mistaken_for_missing_support(serve: Any) -> None:
    server = serve(lambda body: error(400, "context too long"))
    llm = client(server)
    with pytest.raises(LLMError, match="context too long"):
        llm.chat(USER)
    # With a schema a 400 means "try without response_format"; a second 400 surfaces.
    with pytest.raises(LLMError, match="context too long"):
        llm.chat(USER, response_schema=SCHEMA)


def test_timeout_is_a_clear_error(serve: Any) -> None:
    def slow(body: dict[str, Any]) -> Reply:
        time.sleep(1.0)
        return completion("late")

    server = serve(slow)
    with pytest.raises(LLMError, match="did not answer in time"):
        client(server, timeout_s=0.2).chat(USER)


@pytest.mark.parametrize(
    "raw",
    [
        RawBody("text/plain", b"hello"),
        RawBody("application/json", b"not json"),
        RawBody("application/json", b"[1, 2]"),
        RawBody("application/json", b'{"unexpected": true}'),
        RawBody("application/json", b'{"choices": [{"message": null}]}'),
        RawBody("application/json", b'{"choices": "x"}'),
        RawBody("text/event-stream", b"data: garbage\n\n"),
        RawBody("application/json", b"\xff\xfe\x00"),
    ],
)
def test_malformed_server_bodies_are_clear_errors(serve: Any, raw: RawBody) -> None:
    server = serve(lambda body: (200, raw))
    with pytest.raises(LLMError, match=r"malformed|no choices|no stream events"):
        client(server).chat(USER)
    with pytest.raises(LLMError, match=r"malformed|no stream events"):
        list(client(server).stream(USER))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"messages": []}, "at least one message"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "bad message"),
        ({"messages": [{"role": "user"}]}, "bad message"),
        ({"response_schema": {"type": "bogus"}}, "not a valid JSON Schema"),
        ({"response_schema": ["not", "a", "dict"]}, "JSON Schema object"),
        ({"stop": "END"}, "list of strings"),
        ({"stop": [""]}, "non-empty strings"),
        ({"stop": ["x"] * 100}, "at most"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": 10**9}, "max_tokens"),
        ({"temperature": 9.0}, "temperature"),
    ],
)
def test_bad_requests_rejected_before_any_call(
    serve: Any, kwargs: dict[str, Any], match: str
) -> None:
    server = serve(lambda body: completion("never"))
    messages = kwargs.pop("messages", USER)
    with pytest.raises(InvalidInput, match=match):
        client(server).chat(messages, **kwargs)
    with pytest.raises(InvalidInput, match=match):
        client(server).stream(messages, **kwargs)  # raised at the call, not on iteration
    assert server.requests == []


def test_oversized_reply_is_passed_through_not_crashing(serve: Any) -> None:
    big = "x" * 2_000_000
    server = serve(lambda body: completion(big))
    assert len(client(server).chat(USER).text) == len(big)


# -- under a request's budget the whole reply is read as a stream -----------------------


def test_under_a_deadline_chat_streams_and_keeps_usage(serve: Any) -> None:
    events = sse_event("Ana ") + sse_event("is 31.") + sse_event(None, {"prompt_tokens": 7})
    events = events.replace(b'"prompt_tokens": 7', b'"prompt_tokens": 7, "completion_tokens": 2')
    server = serve(lambda body: (200, RawBody("text/event-stream", events + b"data: [DONE]\n\n")))
    llm = client(server)
    with deadline(30.0):
        result = llm.chat(USER, max_tokens=50)
    assert result.text == "Ana is 31."
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (7, 2)
    req = server.requests[0]
    assert req["stream"] is True
    assert req["stream_options"] == {"include_usage": True}
    assert llm.supports_stream_usage is True


def test_server_rejecting_stream_options_is_asked_without_them(serve: Any) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        if "stream_options" in body:
            return error(400, "unknown field stream_options")
        return 200, ["Ana ", "is ", "31."]

    server = serve(respond)
    llm = client(server)
    with deadline(30.0):
        first = llm.chat(USER)
        second = llm.chat(USER)
    assert first.text == second.text == "Ana is 31."
    assert first.usage.completion_tokens == 3  # no usage chunk: one token per chunk
    assert llm.supports_stream_usage is False
    assert ["stream_options" in r for r in server.requests] == [True, False, False]


def test_server_ignoring_stream_flag_still_answers(serve: Any) -> None:
    server = serve(lambda body: completion("Ana is 31."))
    with deadline(30.0):
        result = client(server).chat(USER, response_schema=None)
    assert result.text == "Ana is 31."
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (7, 3)


def test_schema_rejection_under_a_deadline_still_falls_back(serve: Any) -> None:
    server = serve(rejecting(['{"name": "Ana", "age": 31}']))
    llm = client(server)
    with deadline(30.0):
        result = llm.chat(USER, response_schema=SCHEMA)
    assert json.loads(result.text) == {"name": "Ana", "age": 31}
    assert llm.supports_response_format is False


def test_cancel_stops_a_non_streamed_call_and_closes_the_connection(serve: Any) -> None:
    cancel = threading.Event()
    stream = SlowStream(cancel_after=3, cancel=cancel)
    server = serve(lambda body: (200, stream))
    with pytest.raises(DeadlineExceeded, match="cancelled"), deadline(None, cancel=cancel):
        client(server).chat(USER, max_tokens=4000)
    assert stream.done.wait(30.0)
    assert stream.closed_by_client  # the server saw the hang-up and stopped generating
    assert stream.sent < stream.total
    assert server.requests[0]["stream"] is True


def test_running_out_of_time_stops_a_non_streamed_call(serve: Any) -> None:
    stream = SlowStream()
    server = serve(lambda body: (200, stream))
    with pytest.raises(DeadlineExceeded, match="ran out of time"), deadline(0.3):
        client(server).chat(USER, max_tokens=4000)
    assert stream.done.wait(30.0)
    assert stream.closed_by_client
    assert stream.sent < stream.total


@pytest.mark.slow
def test_a_real_llama_cpp_server_takes_our_response_format() -> None:
    """The embedded engine is llama.cpp's own server, listening on loopback: the same
    protocol that Ollama/vLLM/llama-server speak, with no fake in between."""
    from memagent.llm import embedded
    from memagent.llm.models import GEMMA_270M

    embedded.EmbeddedLLM(model="gemma-270m").load()
    url = embedded._engine(GEMMA_270M, 4096, 2, None).server.listening_address
    assert url.startswith("http://127.0.0.1:")
    llm = OpenAICompatLLM("gemma", base_url=f"{url}/v1", max_retries=0)
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 30},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
        },
        "required": ["name", "age"],
        "additionalProperties": False,
    }
    result = llm.chat(
        [{"role": "user", "content": "Ana is 31."}], response_schema=schema, max_tokens=40
    )
    assert set(json.loads(result.text)) == {"name", "age"}
    assert llm.supports_response_format is True
    assert result.usage.completion_tokens > 0
    assert "".join(llm.stream(USER, max_tokens=8))


def with_logprobs(top: list[tuple[str, float]] | None) -> Reply:
    status, body = completion(top[0][0] if top else "Yes", completion_tokens=1)
    if top is not None:
        alternatives = [{"token": t, "logprob": lp, "bytes": None} for t, lp in top]
        body["choices"][0]["logprobs"] = {
            "content": [{**alternatives[0], "top_logprobs": alternatives}]
        }
    return status, body


def test_yes_probability_reads_the_first_tokens_logprobs(serve: Any) -> None:
    server = serve(lambda body: with_logprobs([("No", -0.2), ("Yes", -1.8), ("The", -3.0)]))
    got = client(server).yes_probability([{"role": "system", "content": "S"}, *USER])
    assert got.p_yes == pytest.approx(math.exp(-1.8) / (math.exp(-1.8) + math.exp(-0.2)))
    assert got.usage is not None and got.usage.prompt_tokens > 0  # the server's count
    req = server.requests[0]
    assert req["logprobs"] is True and req["top_logprobs"] == 20 and req["max_tokens"] == 1


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (with_logprobs(None), "no token probabilities"),  # a server that ignores logprobs
        (with_logprobs([("Sure", -0.1)]), "neither yes nor no"),
        (error(400, "logprobs are not supported"), "400"),
    ],
)
def test_yes_probability_without_a_verdict_is_an_error(
    serve: Any, reply: Reply, match: str
) -> None:
    server = serve(lambda body: reply)
    with pytest.raises(LLMError, match=match):
        client(server).yes_probability(USER)
