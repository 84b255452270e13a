// mock-web: serves a task's pages read-only, and nothing else of the task. Tolokaforge's mock-web
// served the whole task directory, grading.yaml included (reference/tolokaforge.md §1.5); this
// one refuses a task directory as a root, refuses any path that leaves its root (by '..', encoded
// or not, or by a symlink), refuses grading material by name even where pages are, and serves
// only page and asset file types. Its routes are docs/services.md's "mock-web".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/web_files.h"
#include "services/http_server.h"
#include "services/limits.h"
#include "services/mock_web_portal.h"

namespace forge::services {

struct MockWebOptions {
  std::size_t max_file = kMaxFileBytes;  // larger files get 413 (pages, not data sets)
  // Tolokaforge's task packs: <tasks_root>/<category>/<task_id>/ holds a task's own pages, served
  // at /task/<category>/<task_id>/… and looked up by /<name>.html. It need not exist yet (the
  // trial copies the pages in after mock-web starts). Empty: /task/<c>/<id>/<path> is <path>
  // under the root, whatever the category and id.
  std::string tasks_root;
  // The json-db portal's file (mock_web_portal.h), written by the trial once its browser runs;
  // read at each request. Empty, or no file there: no portal, pages served as they are.
  std::string portal_file;
  // Sends the portal's requests to json-db; empty: local_request.
  PortalSend portal_send;
};

inline constexpr std::size_t kMaxAppDataFile = 8u << 20;  // each file of an /api/app-data dataset

class MockWeb {
 public:
  // `root` must be an existing directory that is not itself a task directory (no task.yaml in
  // it): point it at the task's www/. So must `opts.tasks_root` be, if it exists.
  static Result<MockWeb> open(const std::string& root, MockWebOptions opts = {});

  // GET/HEAD /health, GET/HEAD of pages by the routes of docs/services.md (a directory serves its
  // index.html; only the file types of web_files.h are served), GET /api/app-data, and the json-db
  // portal under /api/json-db/trials/ (mock_web_portal.h).
  Response handle(const Request& req) const;
  // A handler calling handle() on this object, which must stay in place while it is in use.
  Handler handler() const;

  const std::string& root() const { return root_; }

 private:
  MockWeb(std::string root, MockWebOptions opts) : root_(std::move(root)), opts_(std::move(opts)) {}
  // `parts` under `base` (canonical), confined to it.
  // `assets_only`: a task directory's own files, outside its mock_web/: pages and static assets
  // only (core/web_files.h is_page_asset_type), as the host copies them.
  Response serve(const std::string& base, const std::vector<std::string>& parts, bool assets_only = false) const;
  // The page routes (after the portal, /health and /api/app-data).
  Response route(std::vector<std::string> parts, const Request& req) const;
  // /task/<category>/<task_id>/<rest>; <rest> not there falls back to the pack-shared
  // <tasks-root>/<category>/_assets/<rest> (static assets only), as Tolokaforge's does.
  Response task_route(const std::vector<std::string>& parts) const;
  // /<name>.html: www/, then each task directory, then its mock_web/.
  Response html_lookup(const std::string& name) const;
  // GET /api/app-data?app=&dataset=: Tolokaforge's shared dataset of <tasks-root>/mobile/_data/<dataset>/.
  Response app_data(std::string_view query) const;
  // The portal's file, read now; nullopt when there is none or it is unreadable.
  std::optional<PortalConfig> portal() const;
  // An HTML page gets window.__JSON_DB_BASE when the trial has a portal.
  Response with_db_base(Response r) const;

  std::string root_;  // canonical, no trailing '/'
  MockWebOptions opts_;
};

}  // namespace forge::services
