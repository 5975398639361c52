"""The `llm` op: one engine round of the language-model engine (docs/engine.md), over an
OpenAI-compatible `/v1/chat/completions` endpoint, with the standard library only (the
tritonforge binary links no HTTP or TLS library; urllib does https here).

Arguments: endpoint, model, engine_input (EngineInput::toJson), feedback (what became of
earlier proposals: refused rewrites, compile errors, wrong results), max_requests (what
this call may send, retries and repairs included), timeout_s (one request), deadline_s
(the whole call), backoff_s (the first wait after a 429 or a 5xx; doubled each time, or
the server's Retry-After, never past the deadline).

Result: answer (the model's JSON object, checked for shape; null when none came),
requests (sent), usage (prompt_tokens, completion_tokens summed over the replies),
error (why there is no answer), events (one line per request: status, wait, repair).

The API key comes from $TRITONFORGE_LLM_API_KEY, else $OPENAI_API_KEY. It goes into the
Authorization header and nowhere else: every string this op returns is scrubbed of it.
Redirects are not followed: urllib would resend the Authorization header to whatever host a
redirect names (and turn the POST into a GET); the answer is an error naming the target,
so that the endpoint can be given as its final URL.
"""

import json
import os
import re
import socket
import time
import urllib.error
import urllib.request

ANSWER_FORMAT = """Answer with one JSON object and nothing else:
{"findings": [{"kind": KIND, "kernel": NAME, "severity": 0..1, "summary": "..."}],
 "proposals": [
   {"kind": "region", "region": {"TUNABLE_ID": [values from its domain]}, "share": 0..1,
    "findings": ["F1"], "rationale": "..."},
   {"kind": "pass", "pass": PASS, "kernel": NAME, "params": {...}, "rationale": "..."},
   {"kind": "rewrite", "source": "the whole module: kernels and launcher", "rationale": "..."}]}
KIND is one of: register-spills, uncoalesced-access, small-grid, tail-effect, low-occupancy,
no-tensor-cores, shared-bank-conflicts, poor-l2-reuse, long-stalls, memory-bound,
compute-bound, latency-bound. PASS is one of the input's "passes".
A rewrite must keep the launcher's name and parameters and launch a @triton.jit kernel of
the module; it may not compute results with torch (only allocate, reshape, take strides),
keep state across calls, import anything but torch, triton and math, read the reference or
the harness, or touch files, the network or processes. Every rewrite is compiled, verified
against the reference on every case and timed; a refused or failing one comes back to you
with its error."""

SYSTEM = ("You optimize Triton GPU kernels for an NVIDIA H200 (sm_90). You read a kernel, its "
          "launcher, the task's cases, a diagnosis and what was measured so far, and propose "
          "what to try next.\n" + ANSWER_FORMAT)

PROPOSAL_KINDS = ("region", "pass", "rewrite")


def api_key():
    return os.environ.get("TRITONFORGE_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY") or ""


def chat_url(endpoint):
    url = endpoint.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if url.endswith("/v1"):
        return url + "/chat/completions"
    return url + "/v1/chat/completions"


def build_messages(engine_input, feedback):
    # The history is long on long runs: the model needs the best and the latest tries.
    facts = dict(engine_input)
    history = facts.get("history") or []
    if len(history) > 24:
        facts["history"] = history[-24:]
        facts["history_omitted"] = len(history) - 24
    user = "What should be tried next? The kernel and what is known of it:\n" + json.dumps(facts, indent=1)
    if feedback:
        user += "\n\nWhat became of your earlier proposals (fix these if you propose them again):\n" + \
                json.dumps(feedback, indent=1)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def extract_json(content):
    """The JSON object in a reply: bare, or inside a ``` fence."""
    text = content.strip()
    fence = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.S)
    if fence:
        text = fence.group(1)
    elif not text.startswith("{") and "{" in text:
        text = text[text.index("{"):text.rindex("}") + 1]
    return json.loads(text)


def check_answer(answer):
    """Why `answer` is not an engine answer ('' when it is)."""
    if not isinstance(answer, dict):
        return "the answer is not a JSON object"
    for key in ("findings", "proposals"):
        if key in answer and not isinstance(answer[key], list):
            return f"'{key}' must be a list"
    for i, p in enumerate(answer.get("proposals") or []):
        if not isinstance(p, dict):
            return f"proposal {i + 1} is not an object"
        kind = p.get("kind")
        if kind not in PROPOSAL_KINDS:
            return f"proposal {i + 1}: kind {json.dumps(kind)} is not one of {', '.join(PROPOSAL_KINDS)}"
        if kind == "rewrite" and not (isinstance(p.get("source"), str) and p["source"].strip()):
            return f"proposal {i + 1}: a rewrite needs the whole module in 'source'"
        if kind == "region" and not isinstance(p.get("region"), dict):
            return f"proposal {i + 1}: a region proposal needs a 'region' object"
        if kind == "pass" and not isinstance(p.get("pass"), str):
            return f"proposal {i + 1}: a pass proposal needs a 'pass' name"
    return ""


def retry_after(headers, fallback):
    value = headers.get("Retry-After") if headers else None
    if value is None:
        return fallback
    try:
        return max(0.0, float(value))
    except ValueError:
        return fallback  # an HTTP date: not worth parsing, the backoff stands


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Refuses every redirect: the request (with its key) goes to the endpoint given, only."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise urllib.error.HTTPError(req.full_url, code, f"redirect to {newurl} not followed", headers, fp)


_OPENER = urllib.request.build_opener(_NoRedirects)


class Client:
    def __init__(self, args, sleep=time.sleep, clock=time.monotonic):
        self.url = chat_url(args["endpoint"])
        self.model = args["model"]
        self.max_requests = int(args.get("max_requests", 4))
        self.timeout_s = float(args.get("timeout_s", 60))
        self.backoff_s = float(args.get("backoff_s", 1.0))
        self.max_backoff_s = float(args.get("max_backoff_s", 30.0))
        self.sleep = sleep
        self.clock = clock
        self.deadline = clock() + float(args.get("deadline_s", 300))
        self.requests = 0
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0}
        self.events = []

    def left(self):
        return self.deadline - self.clock()

    def post(self, messages):
        """One request: (content, None) or (None, (error, retryable, wait_s))."""
        body = json.dumps({"model": self.model, "messages": messages, "temperature": 0}).encode()
        headers = {"Content-Type": "application/json"}
        key = api_key()
        if key:
            headers["Authorization"] = "Bearer " + key
        req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        self.requests += 1
        timeout = max(0.1, min(self.timeout_s, self.left()))
        try:
            with _OPENER.open(req, timeout=timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            if 300 <= exc.code < 400:
                target = exc.headers.get("Location", "?") if exc.headers else "?"
                return None, (f"the endpoint answered HTTP {exc.code}, a redirect to {target}; not followed, so that "
                              "the API key goes nowhere else: give the final URL as the endpoint", False, None)
            retryable = exc.code == 429 or 500 <= exc.code < 600
            wait = retry_after(exc.headers, None)
            return None, (f"HTTP {exc.code}", retryable, wait)
        except (socket.timeout, TimeoutError):
            return None, (f"no reply within {timeout:.0f} s", True, None)
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                return None, (f"no reply within {timeout:.0f} s", True, None)
            return None, (f"cannot reach the endpoint ({reason})", True, None)
        except OSError as exc:
            return None, (f"connection failed ({exc})", True, None)
        try:
            reply = json.loads(raw)
            content = reply["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            return None, ("the reply is not a chat completion", False, None)
        usage = reply.get("usage") or {}
        for k in self.usage:
            if isinstance(usage.get(k), int):
                self.usage[k] += usage[k]
        return content if isinstance(content, str) else "", None

    def run(self, messages):
        """The answer object, or None with the error; retries and repairs within the caps."""
        waited = 0
        error = "no request was allowed (max_requests 0)"
        while self.requests < self.max_requests:
            if self.left() <= 0:
                return None, "the engine's time ran out"
            content, failure = self.post(messages)
            if failure:
                error, retryable, wait = failure
                self.events.append(f"request {self.requests}: {error}")
                if not retryable:
                    if error.startswith("HTTP 4"):
                        # 401, 403, 404, 400: the key, the URL or the model is wrong; asking
                        # again spends requests on the same answer.
                        return None, error
                    continue  # a garbled reply: another request may answer properly
                if self.requests >= self.max_requests:
                    break
                delay = wait if wait is not None else min(self.max_backoff_s, self.backoff_s * (2 ** waited))
                waited += 1
                if delay >= self.left():
                    return None, f"{error}; the next try would pass the engine's time"
                self.events.append(f"waiting {delay:.1f} s")
                self.sleep(delay)
                continue
            try:
                answer = extract_json(content)
                why = check_answer(answer)
            except ValueError as exc:
                answer, why = None, f"the answer is not valid JSON ({exc})"
            if not why:
                self.events.append(f"request {self.requests}: answered")
                return answer, ""
            error = why
            self.events.append(f"request {self.requests}: malformed answer: {why}")
            # A repair: the model sees its answer and what is wrong with it.
            messages = messages + [{"role": "assistant", "content": content[:20000]},
                                   {"role": "user", "content": f"That answer cannot be used: {why}. "
                                                               "Answer again with only the JSON object."}]
        return None, f"{error} (after {self.requests} requests, the most allowed)"


def scrub(obj, secret):
    if not secret:
        return obj
    if isinstance(obj, str):
        return obj.replace(secret, "***")
    if isinstance(obj, list):
        return [scrub(x, secret) for x in obj]
    if isinstance(obj, dict):
        return {k: scrub(v, secret) for k, v in obj.items()}
    return obj


def op_llm(args, sleep=time.sleep):
    client = Client(args, sleep=sleep)
    messages = build_messages(args.get("engine_input") or {}, args.get("feedback") or [])
    answer, error = client.run(messages)
    out = {"answer": answer, "requests": client.requests, "usage": client.usage,
           "error": error or None, "events": client.events}
    return scrub(out, api_key())
