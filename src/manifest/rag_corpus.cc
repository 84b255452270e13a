// Reading a task's knowledge base: a confined walk of corpus_dir (core/confined_dir.h) that skips
// what is not a document and withholds what a grader reads, before any file is opened.
#include "manifest/rag_corpus.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/limits.h"
#include "core/strings.h"
#include "core/web_files.h"
#include "manifest/project.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

constexpr TreeLimits kCorpusWalk{limits::kMaxTaskFiles, limits::kMaxTaskBytes, 32};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string last_name(const std::string& rel) { return rel.substr(rel.find_last_of('/') + 1); }

bool under(const std::string& rel, const std::string& top) {
  return rel == top || (rel.size() > top.size() && rel.compare(0, top.size(), top) == 0 && rel[top.size()] == '/');
}

// At most `cap` bytes of the open file `fd`, from its start.
Result<std::string> read_up_to(int fd, std::size_t cap, const std::string& shown) {
  std::string out;
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(Errc::kIo, "cannot read '" + shown + "': " + std::strerror(errno));
    if (n == 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > cap) return out;
  }
}

// Why an entry of the corpus is withheld, or nullopt. `in_task` is its path from the task
// directory, `path` its path on disk.
class Withholding {
 public:
  Withholding(const TaskConfig& t, const std::string& corpus_dir) : inputs_(named_inputs(t)) {
    std::erase_if(inputs_, [](const TaskInput& i) { return i.key == "initial_state.rag.corpus_dir"; });
    std::error_code ec;
    real_corpus_ = fs::canonical(corpus_dir, ec);
  }

  std::optional<std::string> why(const std::string& in_task, const fs::path& path) const {
    if (auto rule = withheld_name_rule(last_name(in_task))) return *rule;
    if (auto key = input(in_task)) return "the task names it in " + *key;
    std::error_code ec;
    if (!fs::is_symlink(path, ec)) return std::nullopt;
    // A link is judged by where it lands too: "notes.md -> ../grading.yaml" is grading.yaml.
    fs::path target = fs::canonical(path, ec);
    std::string inside = ec ? std::string() : target.lexically_relative(real_corpus_).generic_string();
    if (real_corpus_.empty() || inside.empty() || inside == "." || inside.rfind("..", 0) == 0)
      return std::string("a symlink that leaves corpus_dir");
    for (const auto& part : fs::path(inside))
      if (auto rule = withheld_name_rule(part.string())) return "a symlink to '" + inside + "': " + *rule;
    return std::nullopt;
  }

 private:
  std::optional<std::string> input(const std::string& in_task) const {
    for (const auto& i : inputs_)
      if (under(in_task, i.rel)) return i.key;
    return std::nullopt;
  }
  std::vector<TaskInput> inputs_;
  fs::path real_corpus_;
};

}  // namespace

bool is_corpus_document(const std::string& name) {
  std::string low = lower(name);
  return (low.size() > 3 && low.ends_with(".md")) || (low.size() > 4 && low.ends_with(".txt"));
}

Result<RagCorpus> load_rag_corpus(const TaskConfig& t) {
  const std::string& dir = t.initial_state.rag_corpus_dir;
  if (dir.empty()) return fail(Errc::kNotFound, "the task has no initial_state.rag.corpus_dir");
  std::string rel =
      fs::path(dir).lexically_normal().lexically_relative(fs::path(t.dir).lexically_normal()).generic_string();
  while (rel.size() > 1 && rel.back() == '/') rel.pop_back();
  const std::string shown = "initial_state.rag.corpus_dir '" + rel + "'";
  if (rel.empty()) return fail(Errc::kInvalid, shown + " is not below the task's directory");
  auto files = open_task_files(t.dir);
  if (!files) return files.fail_with(shown);
  auto in_task = [&](const std::string& e) { return rel == "." ? e : rel + "/" + e; };

  RagCorpus out;
  std::string task_file;  // a task.yaml found in the corpus
  const Withholding withholding(t, dir);
  auto skip = [&](const std::string& e, EntryKind kind) {
    const std::string low = lower(last_name(e));
    if (low == "task.yaml" || low == "task.yml") {
      if (task_file.empty()) task_file = in_task(e);
      return true;
    }
    if (auto why = withholding.why(in_task(e), fs::path(dir) / e)) {
      bool d = kind == EntryKind::kDirectory;
      out.left_out.push_back({in_task(e) + (d ? "/" : ""), d ? *why + ", with everything in it" : *why});
      return true;
    }
    return kind != EntryKind::kDirectory && !is_corpus_document(last_name(e));
  };
  Status walked = files->walk(rel, kCorpusWalk, skip, [&](const TreeEntry& e) -> Status {
    if (e.kind == EntryKind::kDirectory) return {};
    if (out.documents.size() == limits::kMaxRagDocuments)
      return fail(Errc::kInvalid, "it holds more than " + std::to_string(limits::kMaxRagDocuments) +
                                      " documents (.md and .txt files), the limit");
    const std::size_t room = limits::kMaxRagCorpusBytes - out.bytes;
    auto text = read_up_to(e.fd, room, in_task(e.rel));
    if (!text) return text.fail();
    if (text->size() > room)
      return fail(Errc::kInvalid, "its documents add up to more than " + human_bytes(limits::kMaxRagCorpusBytes) +
                                      ", the limit (reached at '" + e.rel + "')");
    if (invalid_utf8(*text) != std::string::npos || text->find('\0') != std::string::npos)
      return fail(Errc::kInvalid, "'" + e.rel + "' is not UTF-8 text; a document is a .md or .txt file of UTF-8 text");
    if (trim(*text).empty()) {
      out.left_out.push_back({in_task(e.rel), "it holds nothing but whitespace"});
      return {};
    }
    out.bytes += text->size();
    out.documents.push_back({e.rel, last_name(e.rel), std::move(*text)});
    return {};
  });
  if (!walked) return walked.fail_with(shown);
  if (!task_file.empty())
    return fail(Errc::kInvalid, shown + " holds a task's own files ('" + task_file +
                                    "'): a corpus is a directory of documents; move them into one of its own");
  if (out.documents.empty())
    return fail(Errc::kInvalid,
                shown + " holds no documents: a document is a .md or .txt file with text" +
                    (out.left_out.empty() ? std::string() : " (" + std::to_string(out.left_out.size()) + " left out)"));
  return out;
}

}  // namespace forge::manifest
