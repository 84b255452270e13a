// Puts a task's initial state in place before the agent starts: json-db fixtures, files copied
// into the runner's workspace, and mock-web's pages — never anything meant for grading.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/client.h"
#include "manifest/task_config.h"
#include "trial/db_client.h"

namespace forge::trial {

// The body of POST /trials/{id}/init for the task's tables and unstable fields.
std::string db_init_body(const manifest::InitialState& s);

// One filesystem.copy entry, read from the task directory: where it goes, relative to the
// workspace, as the task wrote it (for env.yaml), and its bytes.
struct InitialFile {
  std::string rel, to, content;
};

// The task's filesystem.copy entries for a workspace at `workspace` ("/work"): `to` mapped into it
// as the file tools map paths (tools::workspace_relative), `from` read from the task directory.
Result<std::vector<InitialFile>> read_initial_files(const manifest::TaskConfig& task, const std::string& workspace);

// Who the copied files belong to: the workspace's owner (TrialRun::workspace_owner), the agent's uid.
struct FileOwner {
  unsigned uid = 0, gid = 0;
};

// Copies filesystem.copy entries into the runner's workspace, owned by `owner`; returns
// path → content for env.yaml.
Result<std::map<std::string, std::string>> copy_initial_files(engine::Client& c, const std::string& runner,
                                                              const std::string& workspace, const manifest::TaskConfig& task,
                                                              FileOwner owner = {});

// The tar of the task's www/ pages (nullopt: it has none), read beneath the task directory and
// filtered on the host (manifest/task_pages.h: page types only, no withheld name): a www/ or an
// entry of it that is a symlink out of the task is refused (kForbidden), its target never read.
Result<std::optional<std::string>> www_tar(const manifest::TaskConfig& task);
// The tar of the task directory's own pages as task/<category>/<task_id>/… (nullopt: none, or a
// category or task_id that cannot name a directory), filtered as www_tar's.
Result<std::optional<std::string>> task_pages_tar(const manifest::TaskConfig& task);
// Tolokaforge's pack-shared files, when the task directory is <pack>/<category>/<task_id>/: the
// static assets of <pack>/<category>/_assets/ as task/<category>/_assets/…, and the nine data files
// of each <pack>/mobile/_data/<dataset>/ (/api/app-data) as task/mobile/_data/…; nullopt: none.
Result<std::optional<std::string>> pack_shared_tar(const manifest::TaskConfig& task);
// Copies the task's www/ pages (if any) into mock-web's document root, /srv/www.
Status copy_www(engine::Client& c, const std::string& mock_web, const manifest::TaskConfig& task);
// copy_www, the task directory's pages into /srv/task/<category>/<task_id>/ (the --tasks-root
// of full.yaml's mock-web), and pack_shared_tar's files beside them.
Status copy_mock_web(engine::Client& c, const std::string& mock_web, const manifest::TaskConfig& task);

// The address of `container` on its first network, for host-side calls ("http://10.231.0.3:8000").
Result<std::string> service_url(engine::Client& c, const std::string& container, int port);

}  // namespace forge::trial
