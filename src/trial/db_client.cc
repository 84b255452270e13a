// json-db from the host: over libcurl to a local bridge, or by exec in json-db's own container.
#include "trial/db_client.h"

#include <curl/curl.h>

#include <cstdlib>
#include <memory>

#include "core/json.h"
#include "core/strings.h"
#include "engine/exec.h"

namespace forge::trial {

namespace {

struct Sink {
  std::string out;
  bool too_large = false;
};

size_t collect(char* data, size_t size, size_t n, void* p) {
  auto* sink = static_cast<Sink*>(p);
  if (sink->out.size() + size * n > kMaxDbReplyBytes) {
    sink->too_large = true;
    return 0;  // libcurl stops with CURLE_WRITE_ERROR
  }
  sink->out.append(data, size * n);
  return size * n;
}

std::string what(const std::string& service, const DbRequest& r) { return service + " " + r.method + " " + r.path; }

// The last bytes of a stream, for an error message.
std::string tail(const std::string& s, std::size_t n = 400) {
  std::string t = trim(s);
  return t.size() > n ? "…" + t.substr(t.size() - n) : t;
}

}  // namespace

DbTransport direct_db_transport(std::string base_url, std::string service) {
  return [base = std::move(base_url), service = std::move(service)](const DbRequest& r) -> Result<DbReply> {
    std::unique_ptr<CURL, void (*)(CURL*)> c(curl_easy_init(), curl_easy_cleanup);
    if (!c) return fail(Errc::kIo, "libcurl could not create a handle");
    std::string url = base + r.path;
    curl_slist* list = curl_slist_append(nullptr, "Content-Type: application/json");
    list = curl_slist_append(list, "Expect:");  // no 100-continue wait on large bodies
    std::string auth = "Authorization: Bearer " + r.bearer;
    if (!r.bearer.empty()) list = curl_slist_append(list, auth.c_str());
    std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(list, curl_slist_free_all);
    Sink sink;
    curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(c.get(), CURLOPT_CUSTOMREQUEST, r.method.c_str());
    curl_easy_setopt(c.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c.get(), CURLOPT_NOPROXY, "*");  // the service is on a local bridge, never behind a proxy
    curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, 30000L);
    curl_easy_setopt(c.get(), CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    curl_easy_setopt(c.get(), CURLOPT_HTTPHEADER, headers.get());
    if (r.method != "GET" && r.method != "HEAD") {
      curl_easy_setopt(c.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(r.body.size()));
      curl_easy_setopt(c.get(), CURLOPT_POSTFIELDS, r.body.c_str());
    }
    if (r.method == "HEAD") curl_easy_setopt(c.get(), CURLOPT_NOBODY, 1L);
    curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &sink);
    CURLcode rc = curl_easy_perform(c.get());
    if (sink.too_large)
      return fail(Errc::kProtocol,
                  what(service, r) + ": the reply has more than " + std::to_string(kMaxDbReplyBytes) + " bytes");
    if (rc != CURLE_OK)
      return fail(rc == CURLE_OPERATION_TIMEDOUT ? Errc::kTimeout : Errc::kUnavailable,
                  what(service, r) + ": " + curl_easy_strerror(rc));
    long status = 0;
    curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &status);
    return DbReply{status, std::move(sink.out)};
  };
}

DbTransport exec_db_transport(engine::Client& c, std::string json_db, int port, std::string service) {
  return [&c, json_db = std::move(json_db), port, service = std::move(service)](const DbRequest& r) -> Result<DbReply> {
    // The services image has no exec helper, so the client mode keeps its own 30 s per step and the
    // exec's deadline is only the backstop.
    engine::ExecOptions o{{"/usr/local/bin/forgectl", "serve", "http-request", "--port", std::to_string(port),
                           "--timeout", "30", r.method, r.path}};
    o.stdin_data = r.bearer + "\n" + r.body;
    o.timeout = Millis(75000);
    o.output_cap = kMaxDbReplyBytes + 16;
    auto x = engine::exec_run(c, json_db, o);
    if (!x)
      return x.fail_with(what(service, r) + " by exec in " + service +
                         "'s container (it must run forgectl's services image)");
    if (x->timed_out)
      return fail(Errc::kTimeout, what(service, r) + ": no answer in time, by exec in " + service + "'s container");
    if (x->out_truncated)
      return fail(Errc::kProtocol,
                  what(service, r) + ": the reply has more than " + std::to_string(kMaxDbReplyBytes) + " bytes");
    if (x->exit_code != 0)
      return fail(x->exit_code == 2 ? Errc::kProtocol : Errc::kUnavailable,
                  what(service, r) + ": forgectl serve http-request in " + service + "'s container exited " +
                      std::to_string(x->exit_code) + ": " + tail(x->err));
    auto nl = x->out.find('\n');
    bool digits = nl != std::string::npos && nl >= 1 && nl <= 3;
    for (std::size_t i = 0; digits && i < nl; ++i) digits = x->out[i] >= '0' && x->out[i] <= '9';
    if (!digits) return fail(Errc::kProtocol, what(service, r) + ": no status line from forgectl serve http-request");
    return DbReply{std::strtol(x->out.substr(0, nl).c_str(), nullptr, 10), x->out.substr(nl + 1)};
  };
}

Errc db_status_code(long status) {
  switch (status) {
    case 400: return Errc::kBadRequest;
    case 404: return Errc::kNotFound;
    case 409: return Errc::kConflict;
    case 413:
    case 414:
    case 431: return Errc::kInvalid;
    case 401:
    case 403:
    case 405: return Errc::kProtocol;
    default: return status >= 500 && status < 600 ? Errc::kServer : Errc::kProtocol;
  }
}

std::string trial_path(const std::string& ns) { return "/trials/" + url_encode(ns); }

Error DbClient::reply_error(const char* method, const std::string& path, const DbReply& reply,
                            const std::string& service) {
  auto doc = json::parse(reply.body, service + " error");
  std::string msg = doc && doc->IsObject() ? json::get_string(*doc, "message", reply.body) : reply.body;
  if (msg.size() > 400) msg = msg.substr(0, 400) + "…";
  std::string why;
  if (reply.status == 401)
    why = " (" + service +
          " does not accept forgectl's control token: the stack was started without it or with another one)";
  else if (reply.status == 403 || reply.status == 405)
    why = " (forgectl's control token is never refused a route: a bug in forgectl or " + service + ")";
  else if (reply.status == 507)
    why = " (" + service + "'s storage is used up)";
  return make_error(db_status_code(reply.status), service + " " + std::string(method) + " " + path + ": HTTP " +
                                                      std::to_string(reply.status) + ": " + msg + why);
}

Result<DbReply> DbClient::exchange(const char* method, const std::string& path, const std::string& body) {
  return transport_(DbRequest{method, path, body, token_});
}

Result<std::string> DbClient::call(const char* method, const std::string& path, const std::string& body) {
  auto r = exchange(method, path, body);
  if (!r) return r.fail();
  if (r->status < 200 || r->status >= 300) return fail(reply_error(method, path, *r));
  return std::move(r->body);
}

Status DbClient::init(const std::string& body) {
  auto r = call("POST", trial_path(ns_) + "/init", body);
  if (!r) return r.fail();
  return {};
}

Status DbClient::drop() {
  auto r = call("DELETE", trial_path(ns_), "");
  if (!r) return r.fail();
  return {};
}

Result<std::string> DbClient::state_json() {
  auto r = call("GET", trial_path(ns_) + "/state", "");
  if (!r) return r.fail();
  auto doc = json::parse(*r, "json-db state");
  if (!doc) return doc.fail();
  const auto* data = json::get_object(*doc, "data");
  if (!data) return fail(Errc::kProtocol, "json-db state of trial '" + ns_ + "' has no 'data' object");
  return json::to_string(*data);
}

Result<DbClient::Stable> DbClient::stable_state() {
  auto r = call("GET", trial_path(ns_) + "/state/stable", "");
  if (!r) return r.fail();
  auto doc = json::parse(*r, "json-db stable state");
  if (!doc) return doc.fail();
  const auto* data = json::get_object(*doc, "data");
  std::string hash = json::get_string(*doc, "stable_hash");
  if (!data || hash.empty())
    return fail(Errc::kProtocol, "json-db stable state of trial '" + ns_ + "' has no 'data' object or 'stable_hash'");
  return Stable{json::to_string(*data), std::move(hash)};
}

}  // namespace forge::trial
