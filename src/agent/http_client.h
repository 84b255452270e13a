// A small libcurl JSON POST client for the host's calls to LLM providers (not the Docker transport).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace forge::agent {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string url;
  HttpHeaders headers;  // sent as given; may hold keys, so never logged
  std::string body;     // JSON
  Deadline deadline = Deadline::never();
  Millis connect_timeout{10000};  // capped by the deadline
};

struct HttpResponse {
  long status = 0;
  HttpHeaders headers;  // names lower-cased, values trimmed
  std::string body;
  // The first header named `name` (lower case), if any.
  std::optional<std::string> header(std::string_view name) const;
};

// POSTs JSON over HTTP or HTTPS. Proxies come from the environment as libcurl reads them
// (https_proxy, http_proxy, no_proxy). Safe to share between threads: each call takes an idle
// keep-alive handle from a small pool.
// Errors: kTimeout when the deadline passed; kUnavailable when the connection could not be made
// or broke (both transient); kUnsupported for TLS failures; kIo otherwise. Any HTTP status is a
// response, not an error: the caller classifies it.
class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  Result<HttpResponse> post(const HttpRequest& req);

 private:
  struct Handle;
  std::unique_ptr<Handle> acquire();
  void release(std::unique_ptr<Handle> h);

  std::mutex mu_;
  std::vector<std::unique_ptr<Handle>> idle_;
};

}  // namespace forge::agent
