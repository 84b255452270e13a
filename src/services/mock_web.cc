// mock-web: a static file server confined to its roots; std::filesystem errors via error_code.
// What it serves is exactly what docs/services.md ("mock-web") lists.
#include "services/mock_web.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <vector>

#include "core/json.h"
#include "core/strings.h"
#include "services/local_client.h"
#include "services/mock_web_search.h"

namespace forge::services {

namespace fs = std::filesystem;

namespace {

bool inside(const std::string& path, const std::string& root) {
  return path == root ||
         (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
}

// The request-target's path: absolute-form ("http://host/p") is reduced to its path, as
// HTTP/1.1 servers must accept it; the query is dropped.
std::string_view target_path(std::string_view target) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (to_lower(target.substr(0, scheme.size())) != scheme) continue;
    auto slash = target.find('/', scheme.size());
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    break;
  }
  return target.substr(0, target.find('?'));
}

// Names nothing: neither the request nor anything on disk (Tolokaforge's 404 printed its roots).
Response not_found() { return json_error(404, "not found"); }

// A directory that may not contain task.yaml: a task directory is never a root.
Status refuse_task_dir(const fs::path& dir, const std::string& shown, const std::string& option) {
  std::error_code ec;
  for (const char* marker : {"task.yaml", "task.yml"})
    if (fs::exists(dir / marker, ec))
      return fail(Errc::kInvalid, "mock-web " + option + " '" + shown + "' holds " + marker +
                                      ": refusing to serve a task directory; point " + option + " at its www/");
  return {};
}

// The subdirectories of `dir` (no symlinks), sorted, at most kMaxTaskDirs.
std::vector<std::string> subdirs(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec) || !it->is_directory(ec)) continue;
    out.push_back(it->path().filename().string());
    if (out.size() == kMaxTaskDirs) break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Result<MockWeb> MockWeb::open(const std::string& root, MockWebOptions opts) {
  std::error_code ec;
  fs::path canon = fs::canonical(root, ec);
  if (ec) return fail(Errc::kNotFound, "mock-web root '" + root + "': " + ec.message());
  if (!fs::is_directory(canon, ec)) return fail(Errc::kInvalid, "mock-web root '" + root + "' is not a directory");
  // Every task directory has a task.yaml; grading files inside www/ are withheld by name instead.
  if (auto st = refuse_task_dir(canon, root, "--root"); !st) return st.fail();
  if (!opts.tasks_root.empty()) {
    const std::string shown = opts.tasks_root;
    opts.tasks_root = fs::absolute(opts.tasks_root, ec).lexically_normal().string();
    if (ec) return fail(Errc::kInvalid, "mock-web --tasks-root '" + shown + "': " + ec.message());
    if (opts.tasks_root.size() > 1 && opts.tasks_root.back() == '/') opts.tasks_root.pop_back();
    if (fs::exists(opts.tasks_root, ec)) {
      if (!fs::is_directory(opts.tasks_root, ec))
        return fail(Errc::kInvalid, "mock-web --tasks-root '" + shown + "' is not a directory");
      if (auto st = refuse_task_dir(opts.tasks_root, shown, "--tasks-root"); !st) return st.fail();
    }
  }
  return MockWeb(canon.string(), std::move(opts));
}

Handler MockWeb::handler() const {
  return [this](const Request& req) { return handle(req); };
}

Response MockWeb::handle(const Request& req) const {
  std::string_view raw = target_path(req.target.empty() ? req.path : req.target);
  if (raw.empty() || raw.front() != '/') return json_error(400, "the request path must start with '/'");

  // Each segment is decoded on its own and checked after decoding: "%2e%2e" and "..%2f" are
  // refused like "..", never normalised into something that may escape. Withheld names are
  // checked where a route knows which segments name files (serve()).
  std::vector<std::string> parts;
  for (std::string_view rest = raw.substr(1);;) {
    auto slash = rest.find('/');
    auto seg = percent_decode(rest.substr(0, slash));
    if (!seg) return json_error(400, "malformed percent-encoding in the request path");
    if (*seg == "..") return json_error(400, "the request path may not contain '..'");
    if (seg->find_first_of(std::string_view("/\\\0", 3)) != std::string::npos)
      return json_error(400, "a path segment may not contain '/', '\\' or NUL");
    if (!seg->empty() && *seg != ".") parts.push_back(std::move(*seg));
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  // The json-db portal takes the methods of json-db's routes; everything else is read-only.
  if (parts.size() >= 3 && parts[0] == "api" && parts[1] == "json-db" && parts[2] == "trials") {
    auto c = portal();
    if (!c) return json_error(404, "this trial has no json-db portal (no browser, or no json-db)");
    PortalSend send = opts_.portal_send ? opts_.portal_send : PortalSend(local_request);
    return portal_handle(req, std::vector<std::string>(parts.begin() + 3, parts.end()), *c, send);
  }
  if (req.method != "GET" && req.method != "HEAD") {
    Response r = json_error(405, "mock-web serves GET and HEAD only");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  if (parts == std::vector<std::string>{"health"}) {
    json::Writer w;
    w.begin_object().field("status", "healthy").field("service", "mock-web").end_object();
    return Response{200, "application/json", w.take(), {}};
  }
  if (parts == std::vector<std::string>{"api", "app-data"}) {
    std::string_view target = req.target;
    const auto q = target.find('?');
    return app_data(req.query.empty() && q != std::string_view::npos ? target.substr(q + 1) : req.query);
  }
  return with_db_base(route(parts, req));
}

Response MockWeb::route(std::vector<std::string> parts, const Request& req) const {
  const bool task_packs = !opts_.tasks_root.empty();
  if (parts.size() >= 3 && parts[0] == "task") {
    if (task_packs) return task_route(parts);
    // Without task packs one mock-web serves one task's www/: /task/<c>/<id>/<path> is <path>.
    // The category and id name nothing here, so a withheld name there proves nothing: refused.
    if (is_withheld_name(parts[1]) || is_withheld_name(parts[2])) return not_found();
    parts.erase(parts.begin(), parts.begin() + 3);
  } else if (task_packs && parts.size() == 1 && parts[0].size() > 5 && parts[0].ends_with(".html")) {
    return html_lookup(parts[0]);
  }
  if (parts == std::vector<std::string>{"search"}) {
    // A task's own /search page wins; otherwise the built-in one searches the served pages.
    Response own = serve(root_, parts);
    if (own.status != 404) return own;
    std::string_view target = req.target;
    const auto q = target.find('?');
    return search_page(root_, req.query.empty() && q != std::string_view::npos ? target.substr(q + 1) : req.query,
                       opts_.max_file);
  }
  return serve(root_, parts);
}

Response MockWeb::task_route(const std::vector<std::string>& parts) const {
  std::vector<std::string> rest(parts.begin() + 3, parts.end());
  // The task's www/ is not copied twice: /task/<c>/<id>/www/<path> is <path> of the www/ root.
  if (!rest.empty() && rest[0] == "www") return serve(root_, std::vector<std::string>(rest.begin() + 1, rest.end()));
  std::error_code ec;
  fs::path tasks = fs::canonical(opts_.tasks_root, ec);
  if (ec) return not_found();
  // Only the directory of this category and id exists (another task's are not there): 404.
  fs::path base = fs::canonical(tasks / parts[1] / parts[2], ec);
  if (ec || !fs::is_directory(base, ec) || !inside(base.string(), tasks.string()) || base == tasks) return not_found();
  // The host copies only pages and static assets from the task directory itself (data types only
  // from mock_web/ and www/); the server holds to the same, whatever else lands there.
  // The pack-shared _assets/ (/task/<category>/_assets/<path>) is static assets only, whatever it holds.
  const bool assets_only = rest.empty() || rest[0] != "mock_web" || parts[2] == "_assets";
  Response own = serve(base.string(), rest, assets_only);
  if (own.status != 404 || rest.empty() || parts[2] == "_assets") return own;
  fs::path shared = fs::canonical(tasks / parts[1] / "_assets", ec);
  if (ec || !fs::is_directory(shared, ec) || !inside(shared.string(), tasks.string())) return own;
  Response r = serve(shared.string(), rest, true);
  return r.status == 404 ? own : r;
}

std::optional<PortalConfig> MockWeb::portal() const {
  if (opts_.portal_file.empty()) return std::nullopt;
  auto c = read_portal_config(opts_.portal_file);
  return c ? *c : std::nullopt;
}

Response MockWeb::with_db_base(Response r) const {
  if (r.status != 200 || r.content_type.rfind("text/html", 0) != 0) return r;
  if (auto c = portal()) r.body = inject_db_base(r.body, *c);
  return r;
}

Response MockWeb::app_data(std::string_view query) const {
  const auto dataset = query_param(query, "dataset").value_or("v1");
  const auto app = query_param(query, "app");
  auto plain = [](const std::string& s) {
    if (s.empty() || s.size() > 64) return false;
    for (unsigned char c : s)
      if (!std::isalnum(c) && c != '-' && c != '_' && c != '.') return false;
    return s != "." && s != ".." && !is_withheld_name(s);
  };
  if (!plain(dataset)) return json_error(400, "dataset must be 1-64 letters, digits, '-', '_' or '.'");
  if (app && !plain(*app)) return json_error(400, "app must be 1-64 letters, digits, '-', '_' or '.'");
  const std::string missing = "dataset not found: " + dataset;
  if (opts_.tasks_root.empty()) return json_error(404, missing);
  std::error_code ec;
  fs::path tasks = fs::canonical(opts_.tasks_root, ec);
  if (ec) return json_error(404, missing);
  fs::path dir = fs::canonical(tasks / "mobile" / "_data" / dataset, ec);
  if (ec || !fs::is_directory(dir, ec) || !inside(dir.string(), tasks.string())) return json_error(404, missing);
  json::Writer w;
  w.begin_object().key("app");
  app ? w.str(*app) : w.null();
  w.field("dataset", dataset);
  // Tolokaforge's nine files; a missing one is [].
  for (const char* name : {"places", "menus", "hours", "reviews", "reservations", "grocery_items", "coffee_menu",
                           "events", "notes"}) {
    w.key(name);
    fs::path file = fs::canonical(dir / (std::string(name) + ".json"), ec);
    if (ec || !fs::is_regular_file(file, ec) || !inside(file.string(), dir.string())) {
      w.begin_array().end_array();
      continue;
    }
    auto size = fs::file_size(file, ec);
    if (ec || size > kMaxAppDataFile)
      return json_error(413, std::string(name) + ".json is larger than " + human_bytes(kMaxAppDataFile));
    std::ifstream in(file, std::ios::binary);
    std::string text(std::istreambuf_iterator<char>(in), {});
    auto doc = json::parse(text, std::string(name) + ".json of dataset " + dataset, kMaxAppDataFile);
    if (!doc) return json_error(500, doc.error().message);
    w.raw_value(text);
  }
  Response r{200, "application/json", w.end_object().take(), {}};
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

Response MockWeb::html_lookup(const std::string& name) const {
  Response r = serve(root_, {name});
  if (r.status != 404) return r;
  std::error_code ec;
  fs::path tasks = fs::canonical(opts_.tasks_root, ec);
  if (ec) return r;
  for (const auto& category : subdirs(tasks))
    for (const auto& id : subdirs(tasks / category))
      for (const char* sub : {"", "mock_web"}) {
        fs::path dir = tasks / category / id;
        if (*sub) dir /= sub;
        fs::path canon = fs::canonical(dir, ec);
        if (ec || !inside(canon.string(), tasks.string())) continue;
        Response found = serve(canon.string(), {name});
        if (found.status != 404) return found;
      }
  return r;
}

Response MockWeb::serve(const std::string& base, const std::vector<std::string>& parts, bool assets_only) const {
  fs::path wanted(base);
  for (const auto& p : parts) {
    if (is_withheld_name(p)) return not_found();
    wanted /= p;
  }
  std::error_code ec;
  fs::path real = fs::canonical(wanted, ec);
  if (ec) return not_found();
  // A directory serves its index.html and is never listed.
  if (fs::is_directory(real, ec)) real = fs::canonical(real / "index.html", ec);
  if (ec) return not_found();
  // Symlinks are followed only while they stay inside the base.
  if (!inside(real.string(), base)) return json_error(403, "the path leaves the served directory");
  for (const auto& part : fs::path(real.string().substr(base.size())))
    if (is_withheld_name(part.string())) return not_found();
  auto type = page_content_type(real.filename().string());
  if (!type || !fs::is_regular_file(real, ec)) return not_found();
  if (assets_only && !is_page_asset_type(real.filename().string())) return not_found();
  auto size = fs::file_size(real, ec);
  if (ec) return not_found();
  if (size > opts_.max_file) return json_error(413, "the file is larger than " + human_bytes(opts_.max_file));

  std::ifstream in(real, std::ios::binary);
  if (!in) return json_error(403, "cannot read the file");
  Response r{200, *type, std::string(std::istreambuf_iterator<char>(in), {}), {}};
  if (in.bad()) return json_error(500, "error reading the file");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace forge::services
