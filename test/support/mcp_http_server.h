// A small MCP server over HTTP in Python's standard library, for tests: the SSE transport or
// streamable HTTP, run on the host (unit tests) or as a compose service in forgectl/python:local
// (docker tests) with `python3 -c kHttpMcpServer MODE PORT HOST PREFIX`.
#pragma once

namespace forge::test {

inline constexpr const char* kHttpMcpServer = R"PY(# A small MCP server over HTTP (Python stdlib): argv mode ("sse" | "streamable"), port, the Host
# header it expects, and a prefix for its tool names. Tools: <p>add, <p>whoami, <p>calls (the
# tools/call names it received), <p>fail (isError), <p>flood (1100 notifications first), <p>big
# (n bytes of text); "hidden" answers too but is never listed.
import json, queue, sys, threading, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE, PORT, HOST, P = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
CALLS, SESSIONS, LOCK = [], {}, threading.Lock()
INT = {"type": "integer"}
TOOLS = [
    {"name": P + "add", "description": "a+b", "inputSchema": {"type": "object", "properties": {"a": INT, "b": INT}, "required": ["a", "b"]}},
    {"name": P + "whoami", "description": "the transport", "inputSchema": {"type": "object", "properties": {}}},
    {"name": P + "calls", "description": "tools called", "inputSchema": {"type": "object", "properties": {}}},
    {"name": P + "fail", "description": "fails", "inputSchema": {"type": "object", "properties": {}}},
    {"name": P + "flood", "description": "noisy", "inputSchema": {"type": "object", "properties": {}}},
    {"name": P + "big", "description": "n bytes", "inputSchema": {"type": "object", "properties": {"n": INT}, "required": ["n"]}},
]

def text(t, error=False):
    return {"content": [{"type": "text", "text": t}], "isError": error}

def call(name, args):
    with LOCK:
        CALLS.append(name)
    n = name[len(P):] if name.startswith(P) else name
    if name == "hidden": return text("HIDDEN-REACHED")
    if n == "add": return text(str(args["a"] + args["b"]))
    if n == "whoami": return text("served over " + MODE)
    if n == "calls":
        with LOCK: return text(",".join(CALLS))
    if n == "fail": return text("it broke", True)
    if n == "big": return text("x" * args["n"])
    return text(n)

def answer(msg):
    """The reply to one JSON-RPC message (None for a notification), and notifications to send first."""
    if "id" not in msg: return None, []
    m, i = msg.get("method"), msg["id"]
    if m == "initialize":
        return {"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}}, []
    if m == "tools/list": return {"jsonrpc": "2.0", "id": i, "result": {"tools": TOOLS}}, []
    if m == "tools/call":
        p = msg["params"]
        noise = [{"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": k}} for k in range(1100 if p["name"] == P + "flood" else 1)]
        return {"jsonrpc": "2.0", "id": i, "result": call(p["name"], p.get("arguments", {}))}, noise
    return {"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "no method " + str(m)}}, []

class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def plain(self, status, body=b"", ctype="text/plain", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers: self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
    def body(self):
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
    def host_ok(self):
        if self.headers.get("Host") == HOST: return True
        self.plain(421, ("wrong Host: %s" % self.headers.get("Host")).encode())
        return False

    def do_GET(self):
        if not self.host_ok(): return
        if MODE != "sse" or self.path != "/sse": return self.plain(404)
        sid, q = uuid.uuid4().hex, queue.Queue()
        SESSIONS[sid] = q
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write((": hello\r\n\r\nevent: endpoint\r\ndata: /messages?session_id=%s\r\n\r\n" % sid).encode())
        self.wfile.flush()
        while True:
            try:
                m = q.get(timeout=5)
                self.wfile.write(b"event: message\ndata: " + json.dumps(m).encode() + b"\n\n")
            except queue.Empty:
                self.wfile.write(b": ping\n\n")
            except (BrokenPipeError, ConnectionResetError):
                return
            self.wfile.flush()

    def do_POST(self):
        if not self.host_ok(): return
        if MODE == "sse":
            q = SESSIONS.get(self.path.partition("session_id=")[2])
            if not self.path.startswith("/messages") or q is None: return self.plain(404)
            reply, noise = answer(self.body())
            self.plain(202, b"Accepted")
            for m in noise + ([reply] if reply else []): q.put(m)
            return
        if self.path != "/mcp": return self.plain(404)
        if "text/event-stream" not in self.headers.get("Accept", "") or "application/json" not in self.headers.get("Accept", ""):
            return self.plain(406, b"Accept both")
        msg = self.body()
        if msg.get("method") == "initialize":
            sid = uuid.uuid4().hex
            SESSIONS[sid] = True
            reply, _ = answer(msg)
            return self.plain(200, json.dumps(reply).encode(), "application/json", [("Mcp-Session-Id", sid)])
        if self.headers.get("Mcp-Session-Id") not in SESSIONS: return self.plain(400, b"no session")
        if not self.headers.get("MCP-Protocol-Version"): return self.plain(400, b"no MCP-Protocol-Version")
        reply, noise = answer(msg)
        if reply is None: return self.plain(202)
        if msg.get("method") != "tools/call":
            return self.plain(200, json.dumps(reply).encode(), "application/json")
        self.send_response(200)  # a call's reply is a stream: its notifications, then the result
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for m in noise + [reply]:
            self.wfile.write(b"event: message\r\ndata: " + json.dumps(m).encode() + b"\r\n\r\n")
        self.wfile.flush()

ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("0.0.0.0", PORT), H).serve_forever()
)PY";

}  // namespace forge::test
