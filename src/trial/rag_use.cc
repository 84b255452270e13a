// The knowledge base of a task: its rag service, its preflight, its per-trial load and route.
#include "trial/rag_use.h"

#include <algorithm>

#include "core/json.h"
#include "core/limits.h"
#include "core/service_token.h"
#include "manifest/rag_corpus.h"
#include "manifest/stacks.h"
#include "trial/db_client.h"
#include "trial/json_db_use.h"
#include "trial/local_trial.h"
#include "trial/trial_setup.h"

namespace forge::trial {

namespace {

constexpr const char* kService = "rag";
constexpr int kPort = 8001;
// Warnings of what a corpus leaves out, at most this many (then a count): one per file would bury
// the run's other output under a large corpus's.
constexpr std::size_t kMaxLeftOutWarnings = 10;

// Whether `tool` is in a tools block's enabled lists (not merely a built-in of a task without one).
bool listed(const manifest::ToolsConfig& t, const std::string& tool) {
  for (const auto* list : {&t.agent_enabled, &t.user_enabled})
    if (std::find(list->begin(), list->end(), tool) != list->end()) return true;
  return false;
}

// The rag service's index request: Tolokaforge's IndexRequest (documents of doc_id, text, source).
std::string index_body(const manifest::RagCorpus& corpus, const manifest::TaskConfig& task) {
  json::Writer w;
  w.begin_object().field("domain_name", task.category.empty() ? std::string("default") : task.category);
  w.key("documents").begin_array();
  for (const auto& d : corpus.documents)
    w.begin_object().field("doc_id", d.doc_id).field("source", d.source).field("text", d.text).end_object();
  w.end_array().end_object();
  return w.take();
}

DbTransport rag_transport(engine::Client& c, bool engine_is_local, const std::string& rag) {
  if (!engine_is_local) return exec_db_transport(c, rag, kPort, kService);
  return [&c, rag](const DbRequest& req) -> Result<DbReply> {
    auto url = service_url(c, rag, kPort);
    if (!url) return url.fail_with("finding rag's address");
    return direct_db_transport(*url, kService)(req);
  };
}

}  // namespace

bool has_rag_service(const manifest::TaskConfig& t) { return t.environment.compose.find(kService) != nullptr; }

Result<bool> add_rag(manifest::TaskConfig& t) {
  auto& env = t.environment;
  if (t.initial_state.rag_corpus_dir.empty() || runs_locally(t) || !env.manifest.compose_file.empty() ||
      env.manifest.stack != "core" || has_rag_service(t))
    return false;
  // full.yaml's service itself, so there is one definition of how rag runs.
  auto full = manifest::builtin_stack("full");
  if (!full) return full.fail_with("adding rag to task " + t.task_id);
  const manifest::ComposeService* svc = full->find(kService);
  if (!svc) return fail(Errc::kNotFound, "the built-in stack 'full' has no " + std::string(kService) + " service");
  env.compose.services.push_back(*svc);
  return true;
}

std::vector<Problem> check_rag(const manifest::TaskConfig& t) {
  std::vector<Problem> out;
  const auto& env = t.environment;
  const std::string& corpus = t.initial_state.rag_corpus_dir;
  if (corpus.empty()) {
    if (env.tools.declared && listed(env.tools, "search_kb") && !env.tools.mcp_server)
      out.push_back({location(env.tools.where, t.path),
                     "tool 'search_kb' searches the task's knowledge base, and the task gives none: add "
                     "initial_state.rag.corpus_dir, a directory of .md and .txt documents"});
    return out;
  }
  if (runs_locally(t)) return out;  // check_local refuses it
  const std::string where = location(t.initial_state.rag_where, t.path);
  if (!env.manifest.compose_file.empty() && !has_rag_service(t))
    out.push_back({where, "initial_state.rag.corpus_dir: the compose file '" + env.manifest.compose_file +
                              "' has no service named rag, so nothing would serve the knowledge base; add forgectl's "
                              "rag to it (manifests/stacks/full.yaml's definition), or drop compose_file to use the "
                              "built-in stack, which adds it"});
  else if (env.manifest.compose_file.empty() && env.manifest.stack == "none")
    out.push_back({where,
                   "initial_state.rag.corpus_dir: `stack: none` starts no services, so nothing would serve the "
                   "knowledge base; use the built-in core stack (the default), which adds rag, or `stack: full`"});
  auto loaded = manifest::load_rag_corpus(t);
  if (!loaded) {
    out.push_back({where, loaded.error().what()});
    return out;
  }
  const auto& left = loaded->left_out;
  for (std::size_t i = 0; i < left.size() && i < kMaxLeftOutWarnings; ++i)
    out.push_back(
        {where, "the knowledge base leaves out '" + left[i].path + "' (" + left[i].reason + ")", Severity::kWarning});
  if (left.size() > kMaxLeftOutWarnings)
    out.push_back(
        {where,
         "and " + std::to_string(left.size() - kMaxLeftOutWarnings) + " more files the knowledge base leaves out",
         Severity::kWarning});
  return out;
}

Status load_rag_index(engine::Client& c, bool engine_is_local, const stack::UpResult& up,
                      const std::string& stack_token, const std::string& trial_id, const manifest::TaskConfig& task) {
  if (task.initial_state.rag_corpus_dir.empty()) return {};
  const std::string what = "loading the knowledge base into rag";
  auto it = up.containers.find(kService);
  if (it == up.containers.end())
    return fail(Errc::kInvalid, what + ": the task has initial_state.rag.corpus_dir and its stack no rag service");
  // Read again now: the trial indexes the corpus as it is when the trial starts.
  auto corpus = manifest::load_rag_corpus(task);
  if (!corpus) return corpus.fail_with(what);
  std::string body = index_body(*corpus, task);
  if (body.size() > limits::kMaxServiceRequestBytes)
    return fail(Errc::kInvalid, what + ": the corpus as JSON is " + std::to_string(body.size()) +
                                    " bytes, over the rag service's request limit of " +
                                    std::to_string(limits::kMaxServiceRequestBytes));
  DbClient rag(rag_transport(c, engine_is_local, it->second), service_control_token(stack_token, kService), trial_id);
  const std::string path = trial_path(trial_id) + "/index";
  auto reply = rag.exchange("POST", path, body);
  if (!reply) return reply.fail_with(what);
  if (reply->status < 200 || reply->status >= 300)
    return fail(DbClient::reply_error("POST", path, *reply, kService).with_context(what));
  return {};
}

tools::RagRoute rag_route(const manifest::TaskConfig& task, const stack::UpResult& up, const std::string& stack_token,
                          const std::string& trial_id) {
  tools::RagRoute route;
  if (task.initial_state.rag_corpus_dir.empty() || !up.containers.count(kService) ||
      !tool_enabled(task.environment.tools, "search_kb"))
    return route;
  route.trial = trial_id;
  route.token = agent_token(service_control_token(stack_token, kService), trial_id, TokenPermission::kRead);
  return route;
}

}  // namespace forge::trial
