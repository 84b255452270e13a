"""A scripted OpenAI-compatible model for bench/scale.sh: scale_llm.py PORT_FILE DELAY_S TURNS.

Listens on 127.0.0.1 (an ephemeral port, written to PORT_FILE once it listens) and answers every
POST .../chat/completions after DELAY_S seconds, from a script that depends only on how many
assistant messages the request already holds, so it keeps no state per trial and serves any
number of trials at once (a thread per request). For examples/tasks/files-basic, turn by turn:

  1: read_file problem.txt            2: write_file submissions/answer.md ("The value is 42.")
  3 … TURNS-1: list_dir .             TURNS: "The answer is 42. analysis complete" (the user stops)

TURNS is at least 3. Prints one line per 1000 requests to stderr; SIGTERM stops it.
"""
import http.server
import json
import os
import signal
import socketserver
import sys
import threading
import time

DELAY = 0.0
TURNS = 3
count = 0
lock = threading.Lock()


def tool_call(turn, name, args):
    return {"id": f"call_{turn}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def reply_for(turn):
    if turn >= TURNS:
        return {"role": "assistant", "content": "The answer is 42. analysis complete"}
    if turn == 1:
        call = tool_call(turn, "read_file", {"path": "problem.txt"})
    elif turn == 2:
        call = tool_call(turn, "write_file", {"path": "submissions/answer.md", "content": "# Answer\n\nThe value is 42.\n"})
    else:
        call = tool_call(turn, "list_dir", {"path": "."})
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send(200, {"object": "list", "data": [{"id": "scale-bench", "object": "model"}]})

    def do_POST(self):
        global count
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        turn = 1 + sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        time.sleep(DELAY)
        with lock:
            count += 1
            if count % 1000 == 0:
                print(f"scale_llm.py: {count} requests", file=sys.stderr, flush=True)
        message = reply_for(turn)
        self.send(200, {
            "id": f"chatcmpl-{count}", "object": "chat.completion", "created": int(time.time()), "model": "scale-bench",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        })

    def send(self, status, doc):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 512


def main():
    global DELAY, TURNS
    if len(sys.argv) != 4:
        sys.exit("usage: scale_llm.py PORT_FILE DELAY_S TURNS")
    DELAY, TURNS = float(sys.argv[2]), max(3, int(sys.argv[3]))
    server = Server(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
