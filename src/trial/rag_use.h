// A task's knowledge base (initial_state.rag.corpus_dir, the search_kb tool): on the built-in core
// stack it gets full.yaml's rag service, as mock-web is added; preflight refuses what cannot work;
// each trial's setup loads the corpus into that trial's index from the host with rag's own control
// token, and search_kb gets only the trial's read token (docs/services.md, "rag").
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "engine/client.h"
#include "manifest/task_config.h"
#include "stack/up.h"
#include "tools/builtin_tools.h"
#include "trial/preflight.h"

namespace forge::trial {

// Whether the task's stack has a service named rag.
bool has_rag_service(const manifest::TaskConfig& task);

// A task with initial_state.rag.corpus_dir on the built-in core stack (no compose file) that has no
// rag service gets full.yaml's; true when it did. Tasks on the local executor are left alone.
Result<bool> add_rag(manifest::TaskConfig& task);

// The problems of a task's knowledge base: search_kb enabled without a corpus_dir; a corpus_dir on a
// stack that can have no rag (`stack: none`, a compose file without a service named rag); a corpus
// that cannot be loaded (manifest/rag_corpus.h: empty, too large, not text, a task's own files) —
// and, as warnings, what of it is withheld or left out.
std::vector<Problem> check_rag(const manifest::TaskConfig& task);

// Indexes the task's corpus for trial `trial_id` in the stack's rag service, with rag's control
// token (derived from `stack_token`), from the host: directly on a local engine, by exec in rag's
// container on a remote one. Nothing to do without a corpus; kInvalid when the task has one and the
// stack no rag. A corpus that no longer loads, or a refusal of the service, is an error whose code
// says whose fault it is (db_client.h: db_status_code).
Status load_rag_index(engine::Client& c, bool engine_is_local, const stack::UpResult& up,
                      const std::string& stack_token, const std::string& trial_id, const manifest::TaskConfig& task);

// search_kb's route for the trial: its index and read token when the task has a corpus and the
// stack a rag container (load_rag_index made the index); empty (no search_kb) otherwise.
tools::RagRoute rag_route(const manifest::TaskConfig& task, const stack::UpResult& up, const std::string& stack_token,
                          const std::string& trial_id);

}  // namespace forge::trial
