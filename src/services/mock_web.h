// mock-web: serves a task's pages read-only, and nothing else of the task. Tolokaforge's mock-web
// served the whole task directory, grading.yaml included (reference/tolokaforge.md §1.5); this
// one refuses a task directory as a root, refuses any path that leaves its root (by '..', encoded
// or not, or by a symlink), refuses grading material by name even where pages are, and serves
// only page and asset file types. Its routes are docs/services.md's "mock-web".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/web_files.h"
#include "services/http_server.h"
#include "services/limits.h"

namespace forge::services {

struct MockWebOptions {
  std::size_t max_file = kMaxFileBytes;  // larger files get 413 (pages, not data sets)
  // Tolokaforge's task packs: <tasks_root>/<category>/<task_id>/ holds a task's own pages, served
  // at /task/<category>/<task_id>/… and looked up by /<name>.html. It need not exist yet (the
  // trial copies the pages in after mock-web starts). Empty: /task/<c>/<id>/<path> is <path>
  // under the root, whatever the category and id.
  std::string tasks_root;
};

class MockWeb {
 public:
  // `root` must be an existing directory that is not itself a task directory (no task.yaml in
  // it): point it at the task's www/. So must `opts.tasks_root` be, if it exists.
  static Result<MockWeb> open(const std::string& root, MockWebOptions opts = {});

  // GET/HEAD /health, and GET/HEAD of pages by the routes of docs/services.md; a directory
  // serves its index.html. Only the file types of web_files.h are served.
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
  // /task/<category>/<task_id>/<rest>.
  Response task_route(const std::vector<std::string>& parts) const;
  // /<name>.html: www/, then each task directory, then its mock_web/.
  Response html_lookup(const std::string& name) const;

  std::string root_;  // canonical, no trailing '/'
  MockWebOptions opts_;
};

}  // namespace forge::services
