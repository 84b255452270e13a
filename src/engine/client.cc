// Client: versioned calls, status mapping, retry of idempotent calls, version negotiation.
#include "engine/client.h"

#include <cstdlib>

#include "core/strings.h"
#include "engine/curl_transport.h"
#include "engine/errors.h"

namespace forge::engine {

int compare_api_versions(std::string_view a, std::string_view b) {
  auto parts = [](std::string_view v) {
    std::string s(v);
    long major = std::strtol(s.c_str(), nullptr, 10);
    auto dot = s.find('.');
    long minor = dot == std::string::npos ? 0 : std::strtol(s.c_str() + dot + 1, nullptr, 10);
    return std::pair{major, minor};
  };
  auto pa = parts(a), pb = parts(b);
  if (pa == pb) return 0;
  return pa < pb ? -1 : 1;
}

std::string encode_filters(const Filters& f) {
  json::Writer w;
  w.begin_object();
  for (const auto& [k, v] : f) w.field(k, v);
  w.end_object();
  return url_encode(w.take());
}

Result<std::unique_ptr<Client>> Client::connect(const DockerHost& host) {
  auto client = std::make_unique<Client>(std::make_shared<CurlTransport>(host));
  if (auto st = client->negotiate(host.api_version); !st) return st.fail();
  return client;
}

Client::Client(std::shared_ptr<Transport> transport, std::string api_version)
    : transport_(std::move(transport)), api_version_(std::move(api_version)) {}

static bool valid_version(std::string_view v) {
  auto dot = v.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == v.size()) return false;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (i != dot && (v[i] < '0' || v[i] > '9')) return false;
  return true;
}

Status Client::negotiate(std::string_view wanted) {
  if (!wanted.empty()) {
    if (!valid_version(wanted))
      return fail(Errc::kInvalid, "DOCKER_API_VERSION '" + std::string(wanted) + "' is not a version like 1.41");
    if (compare_api_versions(wanted, kMinApiVersion) < 0)
      return fail(Errc::kUnsupported, "DOCKER_API_VERSION " + std::string(wanted) + " is below " + kMinApiVersion +
                                          ", the oldest Engine API forgectl supports");
  }
  auto resp = request(Method::kHead, "/_ping", {}, {}, Millis(10000));
  if (!resp) return resp.fail();
  if (auto st = check_status(*resp, {200}, "HEAD /_ping"); !st) return st.fail();
  server_api_version_ = resp->header("api-version");
  if (server_api_version_.empty()) {
    // Very old daemons omit the header; /version always has it.
    auto v = request(Method::kGet, "/version");
    if (v && v->status == 200)
      if (auto doc = json::parse(v->body, "GET /version"); doc) server_api_version_ = json::get_string(*doc, "ApiVersion");
  }
  if (server_api_version_.empty())
    return fail(Errc::kProtocol, "the docker daemon at " + transport_->describe() + " did not say its API version");
  if (compare_api_versions(server_api_version_, kMinApiVersion) < 0)
    return fail(Errc::kUnsupported, "the docker daemon at " + transport_->describe() + " speaks Engine API " +
                                        server_api_version_ + "; forgectl needs " + kMinApiVersion +
                                        " or newer (Docker Engine 20.10+)");
  std::string chosen = wanted.empty() ? kMinApiVersion : std::string(wanted);
  if (compare_api_versions(chosen, server_api_version_) > 0) {
    if (!wanted.empty())
      return fail(Errc::kUnsupported, "DOCKER_API_VERSION " + chosen + " is newer than the daemon's " +
                                          server_api_version_);
    chosen = server_api_version_;
  }
  api_version_ = chosen;
  return {};
}

Result<Response> Client::request(Method m, std::string_view path, std::string body, std::string_view content_type,
                                 Millis timeout) {
  Request req{m, path.starts_with("/_ping") ? std::string(path) : versioned(path), std::move(body),
              std::string(content_type), timeout};
  auto resp = transport_->send(req);
  if (!resp && resp.error().code == Errc::kUnavailable && (m == Method::kGet || m == Method::kHead))
    resp = transport_->send(req);
  return resp;
}

Result<Response> Client::expect(std::initializer_list<long> ok, Method m, std::string_view path, std::string body,
                                Millis timeout) {
  std::string_view ctype = body.empty() ? std::string_view{} : std::string_view("application/json");
  auto resp = request(m, path, std::move(body), ctype, timeout);
  if (!resp) return resp.fail();
  std::string what = std::string(method_name(m)) + " " + std::string(path.substr(0, path.find('?')));
  if (auto st = check_status(*resp, ok, what); !st) return st.fail();
  return resp;
}

Result<json::Document> Client::get_json(std::string_view path, Millis timeout) {
  auto resp = expect({200}, Method::kGet, path, {}, timeout);
  if (!resp) return resp.fail();
  return json::parse(resp->body, "response to GET " + std::string(path.substr(0, path.find('?'))));
}

}  // namespace forge::engine
