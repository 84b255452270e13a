// What of a task a trial copies into mock-web (docs/services.md, "What a trial copies"): its www/
// and its own page files, filtered on the host before anything is copied, so that mock-web's
// container never holds a grading file whatever its server would answer.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/confined_dir.h"
#include "manifest/task_config.h"

namespace forge::manifest {

using PageVisit = std::function<Status(const TreeEntry&)>;

// A file (or directory, with everything in it) of the task's www/ or mock_web/ that mock-web
// never gets, and why: an agent the task sends there gets a 404, so validate and run warn of it.
struct WithheldPage {
  std::string path;    // relative to the task directory: "www/grade.json"; a directory ends in '/'
  std::string reason;  // "the task names it in grading", "its name starts with 'expected'"
};
using WithheldVisit = std::function<void(const WithheldPage&)>;

// A path the task names as forgectl's input, task-directory-relative, and the key that names it.
struct TaskInput {
  std::string rel;
  std::string key;  // "grading", "solution.script", "initial_state.rag.corpus_dir"
};
// Task-directory-relative forms of the paths the task names as forgectl's inputs: as written, and
// as resolved through symlinks (grading: g/grade.json with g -> www is www/grade.json). Paths
// outside the task directory (a project's) are not listed.
std::vector<TaskInput> named_inputs(const TaskConfig& task);

// kForbidden, naming it, when the task's `part` ("www" or "mock_web") is a symlink: `www ->
// tests` would serve another part of the task under the web's rules; one that leads out of the
// task directory is refused as ConfinedDir refuses it. Fine when it is absent.
Status check_web_dir(const ConfinedDir& task_dir, const std::string& part);

// Every page file under the task's www/ (`rel` relative to www/): a page or asset type
// (core/web_files.h page_content_type) with no withheld component, and nothing the task names as
// an input (walk_task_pages' list: a named directory with everything under it). A symlink is also
// judged by where it lands: inside www/, by the same rules; elsewhere in the task directory it is
// left out; outside it the walk refuses it. kNotFound when there is no www/; check_web_dir's
// error when www is a symlink. `withheld`, when given, hears of each entry left out.
Status walk_www_pages(const TaskConfig& task, const ConfinedDir& task_dir, const PageVisit& visit,
                      const WithheldVisit& withheld = nullptr);

// Every page file of the task directory outside www/ (`rel` relative to the task directory): in
// mock_web/, filtered as www/'s are (links must stay in mock_web/); elsewhere, pages and static
// assets only (is_page_asset_type: no data types), and nothing at all when the task directory
// lies in a Python tool server's tree. Whatever the task names as an input of forgectl (its
// grading file, test scripts and checks with their imports, json_db, rag corpus, filesystem
// copies, system prompt, solution script, tool server script and files) is left out whatever its
// name or type, here and in www/ and mock_web/. Directories are not visited. check_web_dir's error
// when mock_web is a symlink. `withheld`, when given, hears of each entry of mock_web/ left out.
Status walk_task_pages(const TaskConfig& task, const ConfinedDir& task_dir, const PageVisit& visit,
                       const WithheldVisit& withheld = nullptr);

// Whether the task's category and task_id can name its directory under mock-web's tasks root
// (core/web_files.h's is_route_segment); a Harbor task never has one.
bool has_task_pages_route(const TaskConfig& task);

// Whether the task's stack has a service named mock-web (where a trial copies the pages).
bool has_mock_web_service(const TaskConfig& task);

}  // namespace forge::manifest
