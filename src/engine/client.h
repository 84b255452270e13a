// A connection to one Docker daemon at a pinned API version; the endpoint functions take it.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "engine/docker_host.h"
#include "engine/transport.h"

namespace forge::engine {

// Engine 20.10 (Debian 12's docker.io). Pinning one version keeps request and response shapes
// stable: newer daemons still serve it (their minimum is 1.24).
inline constexpr const char* kMinApiVersion = "1.41";

// Compares "1.41"-style versions numerically: <0, 0, >0.
int compare_api_versions(std::string_view a, std::string_view b);

// Filters for list and events endpoints: {"label": ["k=v", "k2"], "type": ["container"]}.
using Filters = std::map<std::string, std::vector<std::string>>;
std::string encode_filters(const Filters& f);  // URL-encoded JSON, for "?filters="

class Client {
 public:
  // Opens the real transport for `host` and negotiates the API version.
  static Result<std::unique_ptr<Client>> connect(const DockerHost& host);

  explicit Client(std::shared_ptr<Transport> transport, std::string api_version = kMinApiVersion);

  // HEAD /_ping; refuses daemons below kMinApiVersion. `wanted` (DOCKER_API_VERSION) overrides
  // the pinned version when the daemon supports it.
  Status negotiate(std::string_view wanted = "");

  const std::string& api_version() const { return api_version_; }
  const std::string& server_api_version() const { return server_api_version_; }
  Transport& transport() { return *transport_; }
  std::string versioned(std::string_view path) const { return "/v" + api_version_ + std::string(path); }

  // One call; the status is not mapped. GET and HEAD are retried once when the connection broke
  // (a keep-alive connection can be closed under us); other methods never are.
  Result<Response> request(Method m, std::string_view path, std::string body = {},
                           std::string_view content_type = {}, Millis timeout = Millis(0));
  // One call whose status must be one of `ok`; a JSON body gets its Content-Type.
  Result<Response> expect(std::initializer_list<long> ok, Method m, std::string_view path, std::string body = {},
                          Millis timeout = Millis(0));
  // GET returning JSON (200).
  Result<json::Document> get_json(std::string_view path, Millis timeout = Millis(0));

 private:
  std::shared_ptr<Transport> transport_;
  std::string api_version_;
  std::string server_api_version_;
};

}  // namespace forge::engine
