"""A scripted OpenAI-compatible server for the language-model engine's tests, on 127.0.0.1
at a free port (printed as the first line on stdout).

    python scripted_llm_server.py SCRIPT.json LOG.jsonl [PORTFILE]

SCRIPT.json is a list of replies, served in order (the last one again once the list is
spent). A reply:
    {"content": "..."}                       a chat completion whose message is `content`
    {"usage": {"prompt_tokens": 10, "completion_tokens": 5}}   its usage (default 100 / 50)
    {"status": 429, "headers": {"Retry-After": "0"}}            an error status, its headers
    {"raw": "not json"}                       a body that is no chat completion
    {"delay_s": 30}                           sleep before answering (a hanging server)
    {"status": 302, "headers": {"Location": "http://..."}}      a redirect
A GET (what a followed redirect of a POST becomes) is logged too, with "method": "GET", and
answered 404.
PORTFILE, when given, gets the port too (written whole, for tests that cannot read a pipe).
LOG.jsonl gets one line per request: the path, the model, the messages, and `auth`: whether
an Authorization header came (never its value).
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    script = json.load(open(sys.argv[1]))
    log_path = sys.argv[2]
    lock = threading.Lock()
    state = {"n": 0}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            with lock:
                with open(log_path, "a") as f:
                    f.write(json.dumps({"method": "GET", "path": self.path,
                                        "auth": "Authorization" in self.headers}) + "\n")
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            with lock:
                i = state["n"]
                state["n"] += 1
                with open(log_path, "a") as f:
                    f.write(json.dumps({"path": self.path, "model": body.get("model"),
                                        "messages": body.get("messages"),
                                        "auth": "Authorization" in self.headers}) + "\n")
            reply = script[min(i, len(script) - 1)]
            if reply.get("delay_s"):
                time.sleep(reply["delay_s"])
            status = reply.get("status", 200)
            if "raw" in reply:
                data = reply["raw"].encode()
            elif status == 200:
                data = json.dumps({"id": f"r{i}", "object": "chat.completion",
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": reply.get("content", "")}}],
                                   "usage": reply.get("usage", {"prompt_tokens": 100, "completion_tokens": 50})}).encode()
            else:
                data = json.dumps({"error": {"message": "scripted error"}}).encode()
            try:
                self.send_response(status)
                for k, v in reply.get("headers", {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    if len(sys.argv) > 3:
        import os
        tmp = sys.argv[3] + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(port))
        os.replace(tmp, sys.argv[3])
    print(port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
