// The services' HTTP server on Poco::Net: Poco exceptions are caught here and become responses.
#include "services/http_server.h"

#include <Poco/Exception.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/ThreadPool.h>

#include <chrono>
#include <csignal>
#include <exception>
#include <ostream>

#include "core/json.h"

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
    case Errc::kTimeout:
      return 408;
    default:
      return 500;
  }
}

Response error_response(const Error& e) { return json_error(http_status(e.code), e.what()); }

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

struct Shared {
  Handler handler;
  std::size_t max_body;
  std::function<void(std::string_view)> log;
};

class RequestHandler : public net::HTTPRequestHandler {
 public:
  explicit RequestHandler(const Shared& shared) : shared_(shared) {}

  void handleRequest(net::HTTPServerRequest& req, net::HTTPServerResponse& resp) override {
    auto started = std::chrono::steady_clock::now();
    Request in;
    Response out;
    bool keep_alive = true;
    try {
      in.method = req.getMethod();
      in.target = req.getURI();
      auto q = in.target.find('?');
      in.path = in.target.substr(0, q);
      if (q != std::string::npos) in.query = in.target.substr(q + 1);
      out = read_and_handle(req, in, keep_alive);
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
      resp.setStatus(static_cast<net::HTTPResponse::HTTPStatus>(out.status));
      resp.setContentType(out.content_type);
      resp.setContentLength64(static_cast<Poco::Int64>(out.body.size()));
      for (const auto& [k, v] : out.headers) resp.set(k, v);
      if (!keep_alive) resp.setKeepAlive(false);
      resp.send().write(out.body.data(), static_cast<std::streamsize>(out.body.size()));
    } catch (const Poco::Exception&) {
      // The peer went away; nothing is left to tell it.
    } catch (const std::exception&) {
    }
    if (shared_.log) {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
      shared_.log(in.method + " " + in.target + " " + std::to_string(out.status) + " " + std::to_string(ms.count()) +
                  "ms");
    }
  }

 private:
  Response read_and_handle(net::HTTPServerRequest& req, Request& in, bool& keep_alive) {
    std::string limit = std::to_string(shared_.max_body) + " bytes";
    std::istream& body = req.stream();
    if (req.hasContentLength() && req.getContentLength64() > static_cast<Poco::Int64>(shared_.max_body)) {
      keep_alive = drain(body);
      return json_error(
          413, "request body of " + std::to_string(req.getContentLength64()) + " bytes exceeds the limit of " + limit);
    }
    char buf[64 * 1024];
    while (body.read(buf, sizeof buf) || body.gcount() > 0) {
      in.body.append(buf, static_cast<std::size_t>(body.gcount()));
      if (in.body.size() > shared_.max_body) {
        keep_alive = drain(body);
        return json_error(413, "request body exceeds the limit of " + limit);
      }
    }
    return shared_.handler(in);
  }

  // Reads and discards the rest of a refused body, up to kDrainCap: closing a socket with unread
  // input makes the kernel send a reset, which can destroy the 413 before the client reads it.
  // True when the body ended (the connection may then be reused).
  static bool drain(std::istream& body) {
    constexpr std::size_t kDrainCap = 64u << 20;
    char buf[64 * 1024];
    std::size_t total = 0;
    while (total < kDrainCap && (body.read(buf, sizeof buf) || body.gcount() > 0))
      total += static_cast<std::size_t>(body.gcount());
    return body.eof();
  }

  const Shared& shared_;
};

class HandlerFactory : public net::HTTPRequestHandlerFactory {
 public:
  explicit HandlerFactory(Shared shared) : shared_(std::move(shared)) {}
  net::HTTPRequestHandler* createRequestHandler(const net::HTTPServerRequest&) override {
    return new RequestHandler(shared_);  // Poco owns and deletes it
  }

 private:
  Shared shared_;
};

}  // namespace

struct HttpServer::Impl {
  // Declared before the server: the server must stop before its pool goes away.
  Poco::ThreadPool pool;
  std::unique_ptr<net::HTTPServer> server;
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
    net::HTTPRequestHandlerFactory::Ptr factory(
        new HandlerFactory(Shared{std::move(handler), opts.max_body, opts.log}));
    impl->server = std::make_unique<net::HTTPServer>(factory, impl->pool, socket, params);
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
    impl_->server->stopAll(true);
    impl_->pool.joinAll();
  } catch (const Poco::Exception&) {
    // Stopping is best effort; the destructors release what is left.
  }
}

}  // namespace forge::services
