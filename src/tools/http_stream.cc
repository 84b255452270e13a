// HTTP replies read as they arrive, over libcurl's multi interface.
#include "tools/http_stream.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>

#include "core/limits.h"
#include "core/strings.h"

namespace forge::tools {

struct HttpStream::Handles {
  std::unique_ptr<CURLM, CURLMcode (*)(CURLM*)> multi{nullptr, curl_multi_cleanup};
  std::unique_ptr<CURL, void (*)(CURL*)> easy{nullptr, curl_easy_cleanup};
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers{nullptr, curl_slist_free_all};
  std::string body;  // libcurl reads the request body from here while the transfer runs
  ~Handles() {
    if (multi && easy) curl_multi_remove_handle(multi.get(), easy.get());
  }
};

HttpStream::~HttpStream() = default;

size_t HttpStream::on_header(char* data, size_t size, size_t n, void* p) {
  auto* s = static_cast<HttpStream*>(p);
  const std::string_view line(data, size * n);
  s->header_bytes_ += line.size();
  if (s->header_bytes_ > limits::kMaxMcpHeaderBytes) return 0;  // libcurl stops with a write error
  const std::string text = trim(std::string(line));
  if (text.rfind("HTTP/", 0) == 0) {  // a status line: a 1xx reply's headers are not the reply's
    s->headers_.clear();
    const auto sp = text.find(' ');
    s->status_ = sp == std::string::npos ? 0 : std::atol(text.c_str() + sp + 1);
  } else if (text.empty()) {
    if (s->status_ >= 200) s->headers_done_ = true;
  } else if (auto colon = text.find(':'); colon != std::string::npos) {
    std::string name = text.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    s->headers_[name] = trim(text.substr(colon + 1));
  }
  return line.size();
}

size_t HttpStream::on_body(char* data, size_t size, size_t n, void* p) {
  auto* s = static_cast<HttpStream*>(p);
  s->headers_done_ = true;
  s->body_total_ += size * n;
  if (s->body_total_ > s->max_body_) {
    s->too_large_ = true;
    return 0;
  }
  s->body_.append(data, size * n);
  return size * n;
}

Result<std::unique_ptr<HttpStream>> HttpStream::open(const HttpStreamRequest& r, Deadline deadline) {
  std::unique_ptr<HttpStream> s(new HttpStream());
  s->url_ = r.method + " " + r.url;
  s->max_body_ = r.max_body_bytes;
  s->h_ = std::make_unique<Handles>();
  Handles& h = *s->h_;
  h.multi.reset(curl_multi_init());
  h.easy.reset(curl_easy_init());
  if (!h.multi || !h.easy) return fail(Errc::kIo, "libcurl could not create a handle");
  curl_slist* list = curl_slist_append(nullptr, "Expect:");  // no 100-continue round trip
  for (const auto& line : r.headers) list = curl_slist_append(list, line.c_str());
  h.headers.reset(list);
  h.body = r.body;
  CURL* e = h.easy.get();
  curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http");
  curl_easy_setopt(e, CURLOPT_NOPROXY, "*");  // a bridge of this host, never behind a proxy
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::max<long long>(1, deadline.remaining().count())));
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, h.headers.get());
  if (r.method == "POST") {
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, static_cast<long>(h.body.size()));
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, h.body.c_str());
  } else if (r.method != "GET") {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  }
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, s.get());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, s.get());
  if (curl_multi_add_handle(h.multi.get(), e) != CURLM_OK) return fail(Errc::kIo, "libcurl could not start " + s->url_);
  if (auto st = s->pump(deadline, &HttpStream::headers_done); !st) return st.fail();
  if (!s->headers_done_) return fail(Errc::kProtocol, s->url_ + ": the connection ended before a reply");
  return s;
}

Status HttpStream::pump(Deadline deadline, bool (HttpStream::*ready)() const) {
  CURLM* m = h_->multi.get();
  for (;;) {
    if ((this->*ready)() || done_) break;
    int running = 0;
    if (CURLMcode mc = curl_multi_perform(m, &running); mc != CURLM_OK)
      return fail(Errc::kIo, url_ + ": " + curl_multi_strerror(mc));
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(m, &left))
      if (msg->msg == CURLMSG_DONE) {
        done_ = true;
        curl_result_ = msg->data.result;
      }
    if ((this->*ready)() || done_) break;
    if (deadline.expired()) return fail(Errc::kTimeout, url_ + ": no answer in time");
    const long long wait = std::min<long long>(deadline.remaining().count(), 500);
    curl_multi_poll(m, nullptr, 0, static_cast<int>(std::max<long long>(wait, 1)), nullptr);
  }
  if (!done_ || curl_result_ == CURLE_OK) return {};
  const auto rc = static_cast<CURLcode>(curl_result_);
  if (too_large_)
    return fail(Errc::kProtocol, url_ + ": the reply has more than " + std::to_string(max_body_) + " bytes");
  if (header_bytes_ > limits::kMaxMcpHeaderBytes)
    return fail(Errc::kProtocol,
                url_ + ": the reply's headers pass " + std::to_string(limits::kMaxMcpHeaderBytes) + " bytes");
  return fail(rc == CURLE_OPERATION_TIMEDOUT ? Errc::kTimeout : Errc::kUnavailable,
              url_ + ": " + curl_easy_strerror(rc));
}

std::string HttpStream::header(const std::string& lower_name) const {
  auto it = headers_.find(lower_name);
  return it == headers_.end() ? std::string() : it->second;
}

Result<std::string> HttpStream::read(Deadline deadline) {
  if (body_.empty())
    if (auto st = pump(deadline, &HttpStream::has_body); !st) return st.fail();
  std::string out;
  out.swap(body_);
  return out;
}

Result<std::string> HttpStream::read_all(Deadline deadline) {
  std::string all;
  while (!ended()) {
    auto more = read(deadline);
    if (!more) return more.fail();
    all += *more;
  }
  return all;
}

}  // namespace forge::tools
