// Adding mock-web to a core-stack task that asks for it, and refusing stacks that cannot have it.
#include "trial/mock_web_use.h"

#include "core/web_files.h"
#include "manifest/stacks.h"
#include "manifest/task_pages.h"
#include "trial/local_trial.h"

namespace forge::trial {

namespace {

constexpr const char* kService = "mock-web";

}  // namespace

Result<bool> add_mock_web(manifest::TaskConfig& t) {
  auto& env = t.environment;
  if (t.initial_state.mock_web_base_url.empty() || runs_locally(t) || !env.manifest.compose_file.empty() ||
      env.manifest.stack != "core" || manifest::has_mock_web_service(t))
    return false;
  // full.yaml's service itself, so there is one definition of how mock-web runs.
  auto full = manifest::builtin_stack("full");
  if (!full) return full.fail_with("adding mock-web to task " + t.task_id);
  const manifest::ComposeService* svc = full->find(kService);
  if (!svc) return fail(Errc::kNotFound, "the built-in stack 'full' has no " + std::string(kService) + " service");
  env.compose.services.push_back(*svc);
  return true;
}

std::vector<Problem> check_mock_web(const manifest::TaskConfig& t) {
  std::vector<Problem> out;
  if (t.initial_state.mock_web_base_url.empty() || runs_locally(t)) return out;
  const auto& env = t.environment;
  const std::string where = location(t.initial_state.mock_web_where, t.path);
  const std::string what = "initial_state.mock_web.base_url '" + t.initial_state.mock_web_base_url + "': ";
  if (!env.manifest.compose_file.empty() && !manifest::has_mock_web_service(t))
    out.push_back(
        {where, what + "the compose file '" + env.manifest.compose_file +
                    "' has no service named mock-web, so nothing would serve the task's pages; add forgectl's "
                    "mock-web to it (manifests/stacks/full.yaml's definition), or drop compose_file to use "
                    "the built-in stack, which adds it"});
  else if (env.manifest.compose_file.empty() && env.manifest.stack == "none")
    out.push_back({where, what + "`stack: none` starts no services, so nothing would serve the task's pages; use the "
                                 "built-in core stack (the default), which adds mock-web, or `stack: full`"});
  for (const auto& [key, value] : {std::pair{"category", &t.category}, std::pair{"task_id", &t.task_id}})
    if (!is_route_segment(*value))
      out.push_back({where, what + std::string(key) + " '" + *value +
                                "' cannot name the task's directory in mock-web's /task/<category>/<task_id>/ route "
                                "(it is empty, '.' or '..', longer than 255 bytes, or holds '/', '\\' or NUL)"});
  return out;
}

}  // namespace forge::trial
