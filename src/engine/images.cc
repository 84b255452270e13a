// Image endpoints.
#include "engine/images.h"

#include <optional>

#include "core/strings.h"
#include "engine/errors.h"

namespace forge::engine {

Status ProgressParser::line(std::string_view l) {
  if (l.find_first_not_of(" \r\t") == std::string_view::npos) return {};
  auto doc = json::parse(l, "progress stream");
  if (!doc) return doc.fail();
  if (auto err = json::get_string(*doc, "error"); !err.empty()) {
    error_ = trim(err);
    return {};
  }
  if (auto* aux = json::get_object(*doc, "aux"); aux && !json::get_string(*aux, "ID").empty())
    aux_id_ = json::get_string(*aux, "ID");
  std::string text = json::get_string(*doc, "stream");
  if (text.empty()) text = json::get_string(*doc, "status");
  if (!text.empty()) {
    if (on_text_) on_text_(text);
    texts_.push_back(std::move(text));
  }
  return {};
}

Status ProgressParser::feed(std::string_view bytes) {
  pending_.append(bytes);
  std::size_t start = 0, nl;
  while ((nl = pending_.find('\n', start)) != std::string::npos) {
    if (auto st = line(std::string_view(pending_).substr(start, nl - start)); !st) return st;
    start = nl + 1;
  }
  pending_.erase(0, start);
  return {};
}

Status ProgressParser::finish() {
  std::string rest;
  rest.swap(pending_);
  return line(rest);
}

namespace {

std::string labels_json(const std::map<std::string, std::string>& m) {
  json::Writer w;
  w.begin_object();
  for (const auto& [k, v] : m) w.field(k, v);
  w.end_object();
  return w.take();
}

// Runs a streamed image call whose errors arrive inside a 200 body.
Result<ProgressParser> stream_progress(Client& c, Request req, const std::string& what,
                                       const std::function<void(std::string_view)>& progress) {
  ProgressParser parser(progress);
  std::optional<Error> parse_error;
  auto resp = c.transport().stream(req, [&](std::string_view chunk) {
    if (auto st = parser.feed(chunk); !st) {
      parse_error = st.error();
      return false;
    }
    return true;
  });
  if (!resp) return resp.fail_with(what);
  if (auto st = check_status(*resp, {200}, std::string(method_name(req.method)) + " " + req.target.substr(0, req.target.find('?')));
      !st)
    return st.fail_with(what);
  if (parse_error) return fail(parse_error->with_context(what));
  if (auto st = parser.finish(); !st) return st.fail_with(what);
  if (!parser.error().empty()) return fail(Errc::kServer, what + ": " + parser.error());
  return parser;
}

}  // namespace

std::string build_query(const BuildSpec& s) {
  std::string q = "/build?rm=1&forcerm=1&networkmode=" + url_encode(s.network_mode) + "&dockerfile=" + url_encode(s.dockerfile);
  for (const auto& t : s.tags) q += "&t=" + url_encode(t);
  if (!s.labels.empty()) q += "&labels=" + url_encode(labels_json(s.labels));
  if (!s.build_args.empty()) q += "&buildargs=" + url_encode(labels_json(s.build_args));
  if (s.no_cache) q += "&nocache=1";
  if (s.memory > 0) q += "&memory=" + std::to_string(s.memory);
  if (s.memswap != 0) q += "&memswap=" + std::to_string(s.memswap);
  if (s.cpu_period > 0) q += "&cpuperiod=" + std::to_string(s.cpu_period);
  if (s.cpu_quota > 0) q += "&cpuquota=" + std::to_string(s.cpu_quota);
  if (!s.ulimits.empty()) {
    json::Writer w;
    w.begin_array();
    for (const auto& u : s.ulimits)
      w.begin_object().field("Name", u.name).field("Soft", u.soft).field("Hard", u.hard).end_object();
    w.end_array();
    q += "&ulimits=" + url_encode(w.take());
  }
  return q;
}

Result<std::string> build_image(Client& c, const BuildSpec& s, const std::function<void(std::string_view)>& progress) {
  std::string q = build_query(s);
  std::string what = "building image " + (s.tags.empty() ? std::string("(untagged)") : s.tags.front());
  auto parser = stream_progress(c, Request{Method::kPost, c.versioned(q), s.context_tar, "application/x-tar", s.timeout},
                                what, progress);
  if (!parser) return parser.fail();
  if (!parser->aux_id().empty()) return parser->aux_id();
  // Older builders report only "Successfully built <short id>"; ask the daemon for the full id.
  if (!s.tags.empty()) {
    auto img = inspect_image(c, s.tags.front());
    if (img) return img->id;
  }
  return fail(Errc::kProtocol, what + ": the daemon did not report an image id");
}

static ImageInfo parse_image(const json::Value& v) {
  ImageInfo i;
  i.id = json::get_string(v, "Id");
  i.repo_tags = json::get_strings(v, "RepoTags");
  i.repo_digests = json::get_strings(v, "RepoDigests");
  i.size = json::get_int(v, "Size");
  i.created = json::get_string(v, "Created");
  // The list endpoint gives unix seconds where inspect gives RFC 3339 text.
  if (i.created.empty())
    if (auto secs = json::get_int(v, "Created"); secs > 0) i.created = std::to_string(secs);
  if (auto* cfg = json::get_object(v, "Config")) {
    i.labels = json::get_string_map(*cfg, "Labels");
    i.working_dir = json::get_string(*cfg, "WorkingDir");
    i.user = json::get_string(*cfg, "User");
  } else i.labels = json::get_string_map(v, "Labels");  // the list endpoint has them at the top
  return i;
}

Result<ImageInfo> inspect_image(Client& c, std::string_view name) {
  auto doc = c.get_json("/images/" + std::string(name) + "/json");
  if (!doc) return doc.fail_with("inspecting image '" + std::string(name) + "'");
  return parse_image(*doc);
}

Result<std::vector<ImageInfo>> list_images(Client& c, const Filters& filters) {
  auto doc = c.get_json("/images/json?filters=" + encode_filters(filters));
  if (!doc) return doc.fail_with("listing images");
  std::vector<ImageInfo> out;
  if (doc->IsArray())
    for (const auto& v : doc->GetArray()) out.push_back(parse_image(v));
  return out;
}

Status tag_image(Client& c, std::string_view source, std::string_view repo, std::string_view tag) {
  auto resp = c.expect({201, 200}, Method::kPost,
                       "/images/" + std::string(source) + "/tag?repo=" + url_encode(repo) + "&tag=" + url_encode(tag));
  if (!resp) return resp.fail_with("tagging image '" + std::string(source) + "'");
  return {};
}

Status remove_image(Client& c, std::string_view name, bool force) {
  auto resp = c.expect({200}, Method::kDelete, "/images/" + std::string(name) + (force ? "?force=1" : ""));
  if (!resp) return resp.fail_with("removing image '" + std::string(name) + "'");
  return {};
}

std::string commit_query(const CommitSpec& spec) {
  std::string q = "container=" + url_encode(spec.container) + "&pause=false";
  if (!spec.repo.empty()) q += "&repo=" + url_encode(spec.repo) + "&tag=" + url_encode(spec.tag);
  if (!spec.comment.empty()) q += "&comment=" + url_encode(spec.comment);
  return q;
}

Result<std::string> commit_container(Client& c, const CommitSpec& spec) {
  json::Writer w;
  w.begin_object().key("Labels").begin_object();
  for (const auto& [k, v] : spec.labels) w.field(k, v);
  w.end_object().end_object();
  const std::string what = "committing container '" + spec.container + "'";
  auto resp = c.expect({201, 200}, Method::kPost, "/commit?" + commit_query(spec), w.take());
  if (!resp) return resp.fail_with(what);
  auto doc = json::parse(resp->body, "commit reply");
  if (!doc) return doc.fail_with(what);
  std::string id = json::get_string(*doc, "Id");
  if (id.empty()) return fail(Errc::kProtocol, what + ": the reply names no image id");
  return id;
}

Result<std::string> save_images(Client& c, const std::vector<std::string>& names) {
  std::string q = "/images/get?";
  for (std::size_t i = 0; i < names.size(); ++i) q += (i ? "&names=" : "names=") + url_encode(names[i]);
  auto resp = c.expect({200}, Method::kGet, q, {}, Millis(600000));
  if (!resp) return resp.fail_with("saving images " + join(names, ", "));
  return std::move(resp->body);
}

Result<std::vector<std::string>> load_images(Client& c, std::string tar) {
  auto parser = stream_progress(c, Request{Method::kPost, c.versioned("/images/load?quiet=1"), std::move(tar),
                                           "application/x-tar", Millis(600000)},
                                "loading images", {});
  if (!parser) return parser.fail();
  std::vector<std::string> names;
  for (const auto& t : parser->texts()) {
    for (std::string_view prefix : {"Loaded image: ", "Loaded image ID: "}) {
      if (starts_with(t, prefix)) names.push_back(trim(std::string_view(t).substr(prefix.size())));
    }
  }
  return names;
}

Result<std::pair<std::string, std::string>> parse_digest_reference(std::string_view ref) {
  auto at = ref.find('@');
  std::string r(ref);
  if (at == std::string_view::npos)
    return fail(Errc::kInvalid, "image reference '" + r + "' is not pinned: use repo@sha256:<digest>, never a tag");
  std::string repo(ref.substr(0, at)), digest(ref.substr(at + 1));
  if (repo.empty()) return fail(Errc::kInvalid, "image reference '" + r + "' has no repository");
  bool hex = digest.size() == 7 + 64 && starts_with(digest, "sha256:");
  for (std::size_t i = 7; hex && i < digest.size(); ++i) hex = std::isxdigit((unsigned char)digest[i]) && !std::isupper((unsigned char)digest[i]);
  if (!hex) return fail(Errc::kInvalid, "image reference '" + r + "': the digest must be sha256: and 64 lower-case hex digits");
  return std::pair{repo, digest};
}

Result<std::string> pull_image_by_digest(Client& c, std::string_view reference, Millis timeout) {
  auto parts = parse_digest_reference(reference);
  if (!parts) return parts.fail();
  std::string what = "pulling image '" + std::string(reference) + "'";
  std::string q = "/images/create?fromImage=" + url_encode(parts->first) + "&tag=" + url_encode(parts->second);
  auto resp = c.request(Method::kPost, q, {}, {}, timeout);
  if (!resp) return resp.fail_with(what);
  if (resp->status != 200) {
    Error e = error_from_status(resp->status, resp->body, "POST /images/create");
    // "Get https://…: dial tcp: lookup …", "connection refused", "Client.Timeout exceeded": no registry here.
    auto msg = daemon_message(resp->body);
    auto lower = to_lower(msg);
    bool offline = false;
    for (const char* needle : {"dial tcp", "lookup", "timeout", "connection refused", "context deadline exceeded",
                               "no route to host", "network is unreachable", "request canceled"})
      offline = offline || lower.find(needle) != std::string::npos;
    if (resp->status >= 500 && offline)
      e = make_error(Errc::kUnavailable, "no registry is reachable (" + msg +
                                             "); build the image locally with 'forgectl images build' or load it with docker load");
    return fail(e.with_context(what));
  }
  ProgressParser parser;
  if (auto st = parser.feed(resp->body); !st) return st.fail_with(what);
  if (auto st = parser.finish(); !st) return st.fail_with(what);
  if (!parser.error().empty()) return fail(Errc::kUnavailable, what + ": " + parser.error());
  auto img = inspect_image(c, reference);
  if (!img) return img.fail_with(what);
  return img->id;
}

}  // namespace forge::engine
