"""The language-model engine's client (python/tritonforge_worker/llm_client.py) against the
scripted OpenAI-compatible server of tests/support/scripted_llm_server.py: answers, usage,
malformed answers repaired, 429 storms with backoff, hangs, and the key kept secret."""

import json
import os
import subprocess
import sys

import pytest

from tritonforge_worker import llm_client

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SERVER = os.path.join(ROOT, "tests", "support", "scripted_llm_server.py")
GOOD = {"proposals": [{"kind": "region", "region": {"add_kernel.BLOCK": [256, 512]}, "share": 0.3,
                       "rationale": "larger blocks"}]}


@pytest.fixture
def server(tmp_path):
    procs = []

    def start(script):
        n = len(procs)  # each server its own script and log
        (tmp_path / f"script{n}.json").write_text(json.dumps(script))
        log = tmp_path / ("log.jsonl" if n == 0 else f"log{n}.jsonl")
        p = subprocess.Popen([sys.executable, SERVER, str(tmp_path / f"script{n}.json"), str(log)],
                             stdout=subprocess.PIPE, text=True)
        procs.append(p)
        port = int(p.stdout.readline())
        return f"http://127.0.0.1:{port}", log

    yield start
    for p in procs:
        p.kill()
        p.wait()


def call(endpoint, **kw):
    sleeps = []
    args = {"endpoint": endpoint, "model": "scripted", "engine_input": {"round": 1, "source": "x"},
            "max_requests": 4, "timeout_s": 5, "deadline_s": 30, "backoff_s": 0.5}
    args.update(kw)
    out = llm_client.op_llm(args, sleep=sleeps.append)
    return out, sleeps


def requests_of(log):
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_an_answer_and_its_usage(server, monkeypatch):
    monkeypatch.setenv("TRITONFORGE_LLM_API_KEY", "sk-test-secret-123")
    endpoint, log = server([{"content": "```json\n" + json.dumps(GOOD) + "\n```",
                             "usage": {"prompt_tokens": 321, "completion_tokens": 45}}])
    out, _ = call(endpoint)
    assert out["answer"] == GOOD
    assert out["requests"] == 1 and out["error"] is None
    assert out["usage"] == {"prompt_tokens": 321, "completion_tokens": 45}
    reqs = requests_of(log)
    assert reqs[0]["path"] == "/v1/chat/completions" and reqs[0]["model"] == "scripted" and reqs[0]["auth"]
    assert "sk-test-secret-123" not in json.dumps(reqs[0]["messages"])


def test_malformed_json_is_repaired_within_the_cap(server):
    endpoint, log = server([{"content": "I think {bigger blocks"}, {"content": json.dumps(GOOD)}])
    out, _ = call(endpoint)
    assert out["answer"] == GOOD and out["requests"] == 2
    repair = requests_of(log)[1]["messages"]
    assert repair[-2]["role"] == "assistant" and "cannot be used" in repair[-1]["content"]
    assert out["usage"]["prompt_tokens"] == 200


def test_malformed_forever_gives_up_at_the_cap(server):
    endpoint, _ = server([{"content": json.dumps({"proposals": [{"kind": "magic"}]})}])
    out, _ = call(endpoint, max_requests=3)
    assert out["answer"] is None and out["requests"] == 3
    assert "kind \"magic\"" in out["error"] and "3 requests" in out["error"]


def test_a_429_storm_backs_off_then_gives_up(server):
    endpoint, log = server([{"status": 429}])
    out, sleeps = call(endpoint, max_requests=4)
    assert out["answer"] is None and out["requests"] == 4 and len(requests_of(log)) == 4
    assert sleeps == [0.5, 1.0, 2.0]  # exponential, and no wait after the last request
    assert "HTTP 429" in out["error"]


def test_retry_after_is_honoured_and_5xx_retried(server):
    endpoint, _ = server([{"status": 429, "headers": {"Retry-After": "3"}}, {"status": 503},
                          {"content": json.dumps(GOOD)}])
    out, sleeps = call(endpoint)
    assert out["answer"] == GOOD and out["requests"] == 3
    assert sleeps == [3.0, 1.0]


def test_a_client_error_is_not_retried(server):
    endpoint, log = server([{"status": 401}])
    out, sleeps = call(endpoint)
    assert out["answer"] is None and out["requests"] == 1 and sleeps == []
    assert out["error"] == "HTTP 401" and len(requests_of(log)) == 1


def test_a_hanging_server_times_out(server):
    endpoint, _ = server([{"delay_s": 30, "content": json.dumps(GOOD)}])
    out, sleeps = call(endpoint, max_requests=2, timeout_s=0.5)
    assert out["answer"] is None and out["requests"] == 2
    assert "no reply within" in out["error"]


def test_no_server_is_an_error_value():
    out, _ = call("http://127.0.0.1:9", max_requests=1)
    assert out["answer"] is None and "cannot reach" in out["error"]


def test_the_key_is_scrubbed_from_everything_returned(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-echoed-key-987")
    monkeypatch.delenv("TRITONFORGE_LLM_API_KEY", raising=False)
    # A server that echoes the key in its answer: it does not come back.
    endpoint, log = server([{"content": "sk-echoed-key-987 is not json"}])
    out, _ = call(endpoint, max_requests=1)
    assert requests_of(log)[0]["auth"]
    assert "sk-echoed-key-987" not in json.dumps(out)


def test_a_redirect_is_not_followed_and_the_key_stays(server, monkeypatch):
    # A redirect to another host: urllib's default handler would resend the Authorization
    # header there (as a GET). The client refuses it and says where it pointed.
    monkeypatch.setenv("TRITONFORGE_LLM_API_KEY", "sk-test-secret-123")
    other, other_log = server([{"content": json.dumps(GOOD)}])
    other_host = other.replace("127.0.0.1", "localhost")
    for code in (301, 302, 303, 307, 308):
        endpoint, log = server([{"status": code, "headers": {"Location": other_host + "/v1/chat/completions"}}])
        out, _ = call(endpoint, max_requests=1)
        assert out["answer"] is None
        assert "redirect" in out["error"] and "localhost" in out["error"], out["error"]
        assert len(requests_of(log)) == 1
    assert not other_log.exists() or requests_of(other_log) == []


def test_chat_url_forms():
    assert llm_client.chat_url("http://h:1") == "http://h:1/v1/chat/completions"
    assert llm_client.chat_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert llm_client.chat_url("https://h/v1/chat/completions") == "https://h/v1/chat/completions"
