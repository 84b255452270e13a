// A task's knowledge base (initial_state.rag.corpus_dir) as forgectl hands it to the rag service:
// one document per .md or .txt file, read on the host beneath the task directory, with grading
// material withheld, so the service never holds what a grader reads (docs/task.md, "initial_state").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/result.h"
#include "manifest/task_config.h"
#include "manifest/task_pages.h"

namespace forge::manifest {

struct CorpusDocument {
  std::string doc_id;  // its path below corpus_dir: "policies/refunds.md"
  std::string source;  // its file name: "refunds.md" (Tolokaforge's `source`)
  std::string text;
};

struct RagCorpus {
  std::vector<CorpusDocument> documents;  // in path order
  std::size_t bytes = 0;                  // of all documents' text
  // Left out, with why (paths relative to the task directory; a directory ends in '/'): withheld
  // names (core/web_files.h: grading.yaml, expected*, *solution*, tests/, …), what the task names as
  // another input of forgectl (its grading file, checks, solution), symlinks that leave corpus_dir,
  // and files with nothing but whitespace. Files of other types are not documents and not listed.
  std::vector<WithheldPage> left_out;
};

// Every document of the task's corpus. kInvalid, naming the file or directory, when corpus_dir is or
// holds a task directory (a task.yaml), a document is not UTF-8 text (invalid UTF-8 or a NUL), there
// are more than limits::kMaxRagDocuments documents or more than limits::kMaxRagCorpusBytes of
// them, or none at all; the walk's own errors (a link out of the task directory, a device) as they
// come. kNotFound when the task has no corpus_dir.
Result<RagCorpus> load_rag_corpus(const TaskConfig& task);

// Whether `name` is a document by its extension: .md or .txt, in any case.
bool is_corpus_document(const std::string& name);

}  // namespace forge::manifest
