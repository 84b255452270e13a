// A small HTTP server for the built-in services: Poco::Net underneath, plain structs on top, so
// that handlers are functions of a request and no Poco type leaves this file pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "services/limits.h"

namespace forge::services {

struct Request {
  std::string method;  // "GET", "POST", …
  std::string target;  // the raw request-target: path and query, still percent-encoded
  std::string path;    // target up to '?', still percent-encoded
  std::string query;   // after '?', still percent-encoded
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // as received, in order
  std::string peer;  // the client's IP address ("10.0.0.3"): the TCP peer, never a header

  // The values of header `name` (case-insensitive), in the order received.
  std::vector<std::string_view> header_values(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

using Handler = std::function<Response(const Request&)>;

// {"message": …} with `status`: every error the services send has this shape.
Response json_error(int status, std::string_view message);
// The HTTP status an error code stands for (kNotFound → 404, kConflict → 409, …).
int http_status(Errc code);
Response error_response(const Error& e);
// 405 for `req`, with an Allow header of `allow` ("GET, HEAD").
Response method_not_allowed(const Request& req, std::string_view allow);

// Percent-decoding; nullopt on a malformed escape. '+' stays '+' (paths, not forms).
std::optional<std::string> percent_decode(std::string_view s);
// Splits "/a/b%2Fc" into {"a", "b/c"}, each segment decoded on its own (an encoded '/' stays inside
// its segment); nullopt on a bad escape or a path not starting with '/'.
std::optional<std::vector<std::string>> path_segments(std::string_view path);
// The value of `key` in a query string ("a=1&tables=x,y"), decoded; nullopt when absent.
std::optional<std::string> query_param(std::string_view query, std::string_view key);

// Requests over a limit are answered before the handler sees them: 413 (body), 414 (target), 431
// (header count or size), each with a JSON message; so are requests Poco's parser refuses.
struct ServerOptions {
  std::string host = "0.0.0.0";
  std::uint16_t port = 0;                          // 0: an ephemeral port (tests)
  std::size_t max_body = kMaxBodyBytes;            // larger bodies get 413 before they are read
  std::size_t max_target = kMaxTargetBytes;        // longer request-targets get 414
  std::size_t max_headers = kMaxHeaderCount;       // more header fields get 431
  std::size_t max_header_bytes = kMaxHeaderBytes;  // more header bytes (names + values) get 431
  int max_threads = 16;                            // concurrent connections served
  std::function<void(std::string_view)> log;  // one line per request; empty: silent
};

class HttpServer {
 public:
  // Binds, listens and starts serving `handler` on a pool of threads. The handler must be
  // thread-safe and must not throw (a throw becomes a 500).
  static Result<std::unique_ptr<HttpServer>> start(const ServerOptions& opts, Handler handler);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  std::uint16_t port() const { return port_; }
  // Stops accepting, aborts open connections and joins the threads; idempotent.
  void stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl, std::uint16_t port);
  std::unique_ptr<Impl> impl_;
  std::uint16_t port_ = 0;
};

}  // namespace forge::services
