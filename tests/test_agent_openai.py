"""The agent on the OpenAI-compatible backend, against a fake server on 127.0.0.1
that the test starts itself: the step schema goes out as `response_format`, the
full JSON prompt set is used, and streamed replies reach the caller."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memagent.agent import Agent
from memagent.core import MemoryHome
from memagent.llm.openai_compat import OpenAICompatLLM


class Fake:
    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                text = fake.replies.pop(0)
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for i in range(0, len(text), 5):
                        delta = {"content": text[i : i + 5]}
                        chunk = {
                            "id": "c",
                            "object": "chat.completion.chunk",
                            "created": 1,
                            "model": "m",
                            "choices": [{"index": 0, "delta": delta}],
                        }
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
                data = json.dumps(
                    {
                        "id": "c",
                        "object": "chat.completion",
                        "created": 1,
                        "model": "m",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def fake() -> Iterator[Fake]:
    server = Fake([])
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_agent_turn_over_an_openai_compatible_server(home: MemoryHome, fake: Fake) -> None:
    fake.replies += [
        json.dumps(
            {
                "think": "note it",
                "actions": [
                    {"action": "append_file", "path": "user.md", "content": "- Likes tea\n"}
                ],
            }
        ),
        json.dumps({"reply": "Noted: you like tea."}),
        json.dumps({"think": "from memory", "reply": "You like tea."}),
    ]
    llm = OpenAICompatLLM("m", base_url=fake.url, api_key="k", max_retries=0)
    with Agent(home, llm, learn_profile=False, embeddings=False) as agent:
        first = agent.turn("I like tea.")
        pieces: list[str] = []
        second = agent.turn("What do I like to drink?", on_text=pieces.append)
    assert first.ok and first.reply == "Noted: you like tea." and first.steps == 2
    assert first.usage.prompt_tokens == 100 and first.usage.completion_tokens == 18
    assert (home.layout.vault / "user.md").read_text().endswith("- Likes tea\n")
    request = fake.requests[0]
    schema = request["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]) == {"think", "actions", "reply"}
    system = request["messages"][0]["content"]
    assert "recall(query: str, k: int = 5)" in system and "search_tools" in system
    assert "<result>" in fake.requests[1]["messages"][-1]["content"]
    assert "".join(pieces) == second.reply == "You like tea."
    assert fake.requests[2]["stream"] is True
    assert "Likes tea" in fake.requests[2]["messages"][-1]["content"]
