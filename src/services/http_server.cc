// The services' HTTP server on Poco::Net's TCPServer with our own connection loop, so that every
// refusal (limits, unparsable heads) is a JSON reply with the status that fits; Poco exceptions
// are caught here and become responses.
#include "services/http_server.h"

#include <Poco/Exception.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequestImpl.h>
#include <Poco/Net/HTTPServerResponseImpl.h>
#include <Poco/Net/HTTPServerSession.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/TCPServer.h>
#include <Poco/Net/TCPServerConnection.h>
#include <Poco/Net/TCPServerConnectionFactory.h>
#include <Poco/ThreadPool.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <exception>
#include <mutex>
#include <ostream>
#include <set>

#include "core/json.h"
#include "core/strings.h"

namespace forge::services {

Response json_error(int status, std::string_view message) {
  json::Writer w;
  w.begin_object().field("message", message).end_object();
  return Response{status, "application/json", w.take(), {}};
}

int http_status(Errc code) {
  switch (code) {
    case Errc::kNotFound:
      return 404;
    case Errc::kConflict:
      return 409;
    case Errc::kBadRequest:
    case Errc::kInvalid:
    case Errc::kProtocol:
      return 400;
    case Errc::kForbidden:
      return 403;
    case Errc::kUnsupported:
      return 501;
    case Errc::kUnavailable:
      return 503;
    case Errc::kServer:  // the services use it only for a storage allowance used up (json-db's kStorageFull)
      return 507;
    case Errc::kTimeout:
      return 408;
    default:
      return 500;
  }
}

Response error_response(const Error& e) { return json_error(http_status(e.code), e.what()); }

Response method_not_allowed(const Request& req, std::string_view allow) {
  Response r = json_error(
      405, "method " + req.method + " not allowed on " + req.path + " (allowed: " + std::string(allow) + ")");
  r.headers.emplace_back("Allow", std::string(allow));
  return r;
}

std::optional<std::string> percent_decode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::optional<std::vector<std::string>> path_segments(std::string_view path) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  std::vector<std::string> out;
  path.remove_prefix(1);
  for (;;) {
    auto slash = path.find('/');
    auto seg = percent_decode(path.substr(0, slash));
    if (!seg) return std::nullopt;
    out.push_back(std::move(*seg));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

std::optional<std::string> query_param(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    auto eq = pair.find('=');
    if (pair.substr(0, eq) != key) continue;
    return percent_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
  }
  return std::nullopt;
}

namespace {

namespace net = Poco::Net;

// What every connection of one server shares. Held by shared_ptr: Poco's factory may outlive us.
struct Shared {
  Handler handler;
  ServerOptions opts;
  net::HTTPServerParams::Ptr params;

  // Open connections' sockets, so stop() can abort them.
  std::mutex mu;
  std::set<net::StreamSocket*> open;
  std::atomic<bool> stopping{false};
};

// The status for a request head Poco's parser refused. Poco (1.11) signals every case with a
// MessageException and tells them apart only in the message.
int parse_error_status(const std::string& message) {
  if (message.find("URI") != std::string::npos) return 414;
  if (message.find("header field") != std::string::npos || message.find("ield name too long") != std::string::npos ||
      message.find("ield value too long") != std::string::npos)
    return 431;
  return 400;
}

std::string parse_error_message(int status) {
  if (status == 414) return "the request-target is too long";
  if (status == 431) return "the request's header fields are too large or too many";
  return "malformed request";
}

// Reads and discards the rest of a refused body, up to kMaxDrainBytes: closing a socket with
// unread input makes the kernel send a reset, which can destroy the error reply before the client
// reads it. True when the body ended (the connection may then be reused).
bool drain(std::istream& body) {
  char buf[64 * 1024];
  std::size_t total = 0;
  while (total < kMaxDrainBytes && (body.read(buf, sizeof buf) || body.gcount() > 0))
    total += static_cast<std::size_t>(body.gcount());
  return body.eof();
}

void write_response(net::HTTPServerResponse& resp, const Response& out, bool keep_alive) {
  resp.setStatusAndReason(static_cast<net::HTTPResponse::HTTPStatus>(out.status));  // "404 Not Found", not "404 OK"
  resp.setContentType(out.content_type);
  resp.setContentLength64(static_cast<Poco::Int64>(out.body.size()));
  for (const auto& [k, v] : out.headers) resp.set(k, v);
  if (!keep_alive) resp.setKeepAlive(false);
  resp.send().write(out.body.data(), static_cast<std::streamsize>(out.body.size()));
}

// One client connection: Poco's HTTPServerConnection loop, except that a request Poco cannot parse
// is answered with the status that fits it (414, 431, 400) and a JSON message, not a bare 400.
class Connection : public net::TCPServerConnection {
 public:
  Connection(const net::StreamSocket& socket, std::shared_ptr<Shared> shared)
      : net::TCPServerConnection(socket), shared_(std::move(shared)) {
    std::lock_guard lock(shared_->mu);
    shared_->open.insert(&this->socket());
    if (shared_->stopping) abort_socket(this->socket());  // accepted while stopping: end at once
  }
  ~Connection() override {
    std::lock_guard lock(shared_->mu);
    shared_->open.erase(&socket());
  }

  static void abort_socket(net::StreamSocket& s) {
    try {
      s.shutdown();
    } catch (const Poco::Exception&) {
      // Already closed.
    }
  }

  void run() override {
    net::HTTPServerSession session(socket(), shared_->params);
    while (!shared_->stopping && session.hasMoreRequests()) {
      try {
        net::HTTPServerResponseImpl resp(session);
        net::HTTPServerRequestImpl req(resp, session, shared_->params);
        resp.setVersion(req.getVersion());
        resp.setKeepAlive(shared_->params->getKeepAlive() && req.getKeepAlive() && session.canKeepAlive());
        resp.set("Server", "forgectl");
        serve(req, resp);
        session.setKeepAlive(shared_->params->getKeepAlive() && resp.getKeepAlive() && session.canKeepAlive());
      } catch (const net::NoMessageException&) {
        break;  // the client closed a kept-alive connection
      } catch (const net::MessageException& e) {
        refuse_head(session, parse_error_status(e.message()));
        break;
      } catch (const Poco::Exception&) {
        break;  // the peer went away or stalled past the timeout
      }
    }
  }

 private:
  void serve(net::HTTPServerRequestImpl& req, net::HTTPServerResponseImpl& resp) {
    auto started = std::chrono::steady_clock::now();
    Request in;
    Response out;
    bool keep_alive = true;
    try {
      in.method = req.getMethod();
      in.target = req.getURI();
      in.peer = req.clientAddress().host().toString();
      out = read_and_handle(req, resp, in, keep_alive);
    } catch (const Poco::TimeoutException&) {
      out = json_error(408, "timed out reading the request");
      keep_alive = false;
    } catch (const Poco::Exception& e) {
      out = json_error(400, "bad request: " + e.displayText());
      keep_alive = false;
    } catch (const std::exception& e) {
      out = json_error(500, std::string("internal error: ") + e.what());
    }
    try {
      write_response(resp, out, keep_alive);
    } catch (const Poco::Exception&) {
      // The peer went away; nothing is left to tell it.
    } catch (const std::exception&) {
    }
    if (shared_->opts.log) {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
      shared_->opts.log(in.method + " " + in.target.substr(0, 256) + " " + std::to_string(out.status) + " " +
                        std::to_string(ms.count()) + "ms");
    }
  }

  Response read_and_handle(net::HTTPServerRequestImpl& req, net::HTTPServerResponseImpl& resp, Request& in,
                           bool& keep_alive) {
    const ServerOptions& o = shared_->opts;
    std::istream& body = req.stream();
    // The head is read; refuse it whole before any of the body is.
    if (in.target.size() > o.max_target) {
      keep_alive = drain(body);
      return json_error(414, "the request-target is " + std::to_string(in.target.size()) +
                                 " bytes, over the limit of " + std::to_string(o.max_target));
    }
    std::size_t header_bytes = 0;
    for (const auto& [name, value] : req) {
      header_bytes += name.size() + value.size();
      in.headers.emplace_back(name, value);
    }
    if (in.headers.size() > o.max_headers || header_bytes > o.max_header_bytes) {
      keep_alive = drain(body);
      return json_error(431, "the request has " + std::to_string(in.headers.size()) + " header fields of " +
                                 std::to_string(header_bytes) + " bytes; the limits are " +
                                 std::to_string(o.max_headers) + " fields and " + std::to_string(o.max_header_bytes) +
                                 " bytes");
    }
    auto q = in.target.find('?');
    in.path = in.target.substr(0, q);
    if (q != std::string::npos) in.query = in.target.substr(q + 1);

    std::string limit = std::to_string(o.max_body) + " bytes";
    if (req.hasContentLength() && req.getContentLength64() > static_cast<Poco::Int64>(o.max_body)) {
      keep_alive = drain(body);
      return json_error(
          413, "request body of " + std::to_string(req.getContentLength64()) + " bytes exceeds the limit of " + limit);
    }
    // Only now, when the body will be read, does a client waiting on "Expect: 100-continue" get it.
    if (req.getExpectContinue()) resp.sendContinue();
    // A request with neither Content-Length nor chunked encoding has no body (RFC 9112 6.3); Poco
    // would read one until the peer closes, which a browser's CORS preflight (OPTIONS) never does.
    if (!req.hasContentLength() && !req.getChunkedTransferEncoding()) return shared_->handler(in);
    char buf[64 * 1024];
    while (body.read(buf, sizeof buf) || body.gcount() > 0) {
      in.body.append(buf, static_cast<std::size_t>(body.gcount()));
      if (in.body.size() > o.max_body) {
        keep_alive = drain(body);
        return json_error(413, "request body exceeds the limit of " + limit);
      }
    }
    return shared_->handler(in);
  }

  // Answers a request whose head could not be parsed, then drains what the client still sends, so
  // the reply is not lost to a reset (see drain()).
  void refuse_head(net::HTTPServerSession& session, int status) {
    try {
      {
        net::HTTPServerResponseImpl resp(session);
        resp.setVersion(net::HTTPMessage::HTTP_1_1);
        write_response(resp, json_error(status, parse_error_message(status)), false);
      }  // the response's stream flushes when it goes, so only then may the sending side close
      session.setKeepAlive(false);
      socket().shutdownSend();
      socket().setReceiveTimeout(Poco::Timespan(1, 0));
      char buf[16 * 1024];
      std::size_t total = 0;
      for (int n; total < kMaxDrainBytes && (n = socket().receiveBytes(buf, sizeof buf)) > 0;)
        total += static_cast<std::size_t>(n);
    } catch (const Poco::Exception&) {
      // The peer went away, or stopped sending without closing: the reply was sent either way.
    }
  }

  std::shared_ptr<Shared> shared_;
};

class ConnectionFactory : public net::TCPServerConnectionFactory {
 public:
  explicit ConnectionFactory(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  net::TCPServerConnection* createConnection(const net::StreamSocket& socket) override {
    return new Connection(socket, shared_);  // Poco owns and deletes it
  }

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace

std::vector<std::string_view> Request::header_values(std::string_view name) const {
  std::vector<std::string_view> out;
  for (const auto& [k, v] : headers)
    if (k.size() == name.size() && to_lower(k) == to_lower(name)) out.emplace_back(v);
  return out;
}

struct HttpServer::Impl {
  // Declared before the server: the server must stop before its pool goes away.
  Poco::ThreadPool pool;
  std::shared_ptr<Shared> shared;
  std::unique_ptr<net::TCPServer> server;
  bool stopped = false;
  explicit Impl(int threads) : pool(1, threads + 1, 60) {}  // +1: the connection dispatcher
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl, std::uint16_t port) : impl_(std::move(impl)), port_(port) {}

HttpServer::~HttpServer() { stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::start(const ServerOptions& opts, Handler handler) {
  // Poco writes to sockets without MSG_NOSIGNAL: a client that hangs up must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  std::string where = opts.host + ":" + std::to_string(opts.port);
  try {
    net::ServerSocket socket;
    socket.bind(net::SocketAddress(opts.host, opts.port), true);
    socket.listen(64);
    auto port = socket.address().port();
    auto params = Poco::AutoPtr<net::HTTPServerParams>(new net::HTTPServerParams);
    params->setMaxThreads(opts.max_threads);
    params->setMaxQueued(64);
    params->setTimeout(Poco::Timespan(30, 0));  // a client that stalls mid-request is dropped
    params->setKeepAlive(true);
    params->setKeepAliveTimeout(Poco::Timespan(10, 0));
    params->setServerName("forgectl");
    auto impl = std::make_unique<Impl>(opts.max_threads);
    impl->shared = std::make_shared<Shared>();
    impl->shared->handler = std::move(handler);
    impl->shared->opts = opts;
    impl->shared->params = params;
    net::TCPServerConnectionFactory::Ptr factory(new ConnectionFactory(impl->shared));
    impl->server =
        std::make_unique<net::TCPServer>(factory, impl->pool, socket, net::TCPServerParams::Ptr(params.get(), true));
    impl->server->start();
    return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl), port));
  } catch (const Poco::Exception& e) {
    return fail(Errc::kUnavailable, "cannot listen on " + where + ": " + e.displayText());
  } catch (const std::exception& e) {
    return fail(Errc::kIo, "cannot listen on " + where + ": " + e.what());
  }
}

void HttpServer::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  try {
    impl_->server->stop();  // no new connections; queued ones are dropped
    {
      std::lock_guard lock(impl_->shared->mu);
      impl_->shared->stopping = true;
      for (auto* s : impl_->shared->open) Connection::abort_socket(*s);
    }
    impl_->pool.joinAll();
  } catch (const Poco::Exception&) {
    // Stopping is best effort; the destructors release what is left.
  }
}

}  // namespace forge::services
