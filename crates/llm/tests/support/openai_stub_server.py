#!/usr/bin/env python3
"""A small real HTTP server (Python stdlib only) speaking the OpenAI chat/completions protocol,
used by crates/llm/tests/openai_errors.rs for the error paths a real model server rarely shows
on demand. It binds 127.0.0.1 on a free port, prints `PORT <n>` on stdout, and serves until
killed (or for at most --lifetime seconds).

Modes (--mode):
  echo     200: the completion is "echo: " + the last message's content (or the prompt),
           cut before the first stop string; usage counts are word counts.
  error500 always HTTP 500 with a JSON error body.
  garbage  200 with a body that is not JSON.
  nochoice 200 with JSON lacking `choices`.
  slow     sleeps --delay seconds before answering like `echo`.
  flaky    answers HTTP 503 to the first --failures requests, then like `echo`.
  ratelimit answers HTTP 429 (Retry-After: 0) to the first --failures requests, then `echo`.
  badreq   always HTTP 400 with a JSON error body.
Every request is appended to --log (one JSON line: path, body) when given.
"""
import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--mode", default="echo")
ap.add_argument("--delay", type=float, default=5.0)
ap.add_argument("--failures", type=int, default=2)
ap.add_argument("--lifetime", type=float, default=120.0)
ap.add_argument("--log", default=None)
a = ap.parse_args()

state = {"n": 0}
lock = threading.Lock()


class H(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, code, body, ctype="application/json", headers=()):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        with lock:
            state["n"] += 1
            count = state["n"]
        if a.log:
            with open(a.log, "a") as f:
                f.write(json.dumps({"path": self.path, "body": raw.decode("utf-8", "replace")}) + "\n")
        mode = a.mode
        if mode == "error500":
            return self.send(500, json.dumps({"error": {"message": "model crashed: out of memory", "type": "server_error"}}))
        if mode == "badreq":
            return self.send(400, json.dumps({"error": {"message": "unknown model 'nope'", "type": "invalid_request_error"}}))
        if mode == "garbage":
            return self.send(200, "<html>this is not json</html>", "text/html")
        if mode == "nochoice":
            return self.send(200, json.dumps({"id": "x", "object": "chat.completion"}))
        if mode == "flaky" and count <= a.failures:
            return self.send(503, json.dumps({"error": {"message": f"warming up ({count})"}}))
        if mode == "ratelimit" and count <= a.failures:
            return self.send(429, json.dumps({"error": {"message": "rate limited"}}), headers=[("Retry-After", "0")])
        if mode == "slow":
            time.sleep(a.delay)
        try:
            req = json.loads(raw)
        except ValueError:
            return self.send(400, json.dumps({"error": {"message": "request body is not JSON"}}))
        chat = self.path.endswith("/chat/completions")
        src = req["messages"][-1]["content"] if chat else req.get("prompt", "")
        text = "echo: " + src
        for s in req.get("stop") or []:
            i = text.find(s)
            if i >= 0:
                text = text[:i]
        choice = {"index": 0, "finish_reason": "stop"}
        if chat:
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        body = {"id": f"cmpl-{count}", "object": "chat.completion" if chat else "text_completion",
                "model": req.get("model"), "choices": [choice],
                "usage": {"prompt_tokens": len(src.split()), "completion_tokens": len(text.split())}}
        return self.send(200, json.dumps(body))


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
print(f"PORT {srv.server_address[1]}", flush=True)
threading.Timer(a.lifetime, srv.shutdown).start()
srv.serve_forever()
sys.exit(0)
