// One HTTP/1.1 exchange whose reply body is read as it arrives, within a caller's deadline
// (libcurl's multi interface): the host's connections to a task's MCP servers over HTTP, where
// a reply may be an event stream that stays open for the trial.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace forge::tools {

struct HttpStreamRequest {
  std::string method = "GET";        // GET, POST or DELETE
  std::string url;                   // http://ADDRESS:PORT/path: an address, never a name to resolve
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::size_t max_body_bytes = 0;  // the reply's body, all of it; more is kProtocol
};

class HttpStream {
 public:
  // Sends the request and waits for the reply's status line and headers. kUnavailable when
  // nothing answers, kTimeout at the deadline, kProtocol for headers past the limit.
  static Result<std::unique_ptr<HttpStream>> open(const HttpStreamRequest& r, Deadline deadline);
  ~HttpStream();
  HttpStream(const HttpStream&) = delete;
  HttpStream& operator=(const HttpStream&) = delete;

  long status() const { return status_; }
  // The last value of a header, by its lower-case name; "" when absent.
  std::string header(const std::string& lower_name) const;
  // The body's next bytes, waiting for some until the deadline (kTimeout); "" once it has ended.
  Result<std::string> read(Deadline deadline);
  bool ended() const { return done_ && body_.empty(); }
  // The rest of the body, until it ends (bounded by max_body_bytes).
  Result<std::string> read_all(Deadline deadline);

 private:
  HttpStream() = default;
  // Runs the transfer until `ready()` or the transfer ends, or the deadline passes.
  Status pump(Deadline deadline, bool (HttpStream::*ready)() const);
  bool headers_done() const { return headers_done_; }
  bool has_body() const { return !body_.empty(); }
  static size_t on_header(char* data, size_t size, size_t n, void* self);
  static size_t on_body(char* data, size_t size, size_t n, void* self);

  struct Handles;
  std::unique_ptr<Handles> h_;
  std::string url_;  // for messages
  std::size_t max_body_ = 0, body_total_ = 0, header_bytes_ = 0;
  long status_ = 0;
  std::map<std::string, std::string> headers_;
  std::string body_;
  bool headers_done_ = false, done_ = false, too_large_ = false;
  int curl_result_ = 0;
};

}  // namespace forge::tools
