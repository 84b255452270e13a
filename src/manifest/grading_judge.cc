// Reads grading.yaml's llm_judge and custom_checks blocks strictly.
#include <algorithm>
#include <filesystem>

#include "core/json.h"
#include "manifest/files.h"
#include "core/confined_dir.h"
#include "manifest/grading_reader.h"
#include "manifest/python_server.h"
#include "manifest/task_dir.h"
#include "manifest/task_reader.h"
#include "manifest/yaml_json.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

// Tolokaforge's in-process Python checks (custom_checks.file = checks.py), run by forgectl's
// checks driver; and the keys of a test script, which do not apply to them.
const std::vector<std::string> kPythonCheckKeys = {"file", "interface_version", "relative_imports"};
const std::vector<std::string> kScriptOnlyKeys = {"dir", "command", "image", "reward_file"};
const std::vector<std::string> kCustomCheckKeys = {"enabled", "dir",         "command", "image",        "timeout_seconds",
                                                   "reward_file", "weight", "fail_on_error"};

// Why `schema` cannot constrain a judge's answer, or "" when it can: the answer is a JSON object.
std::string object_schema_problem(const json::Document& schema) {
  if (!schema.IsObject()) return "must be a JSON Schema object";
  auto type = schema.FindMember("type");
  if (type == schema.MemberEnd() || !type->value.IsString() || std::string(type->value.GetString()) != "object")
    return "must have \"type\": \"object\" (the judge answers with a JSON object)";
  auto props = schema.FindMember("properties");
  if (props != schema.MemberEnd() && !props->value.IsObject()) return "'properties' must be a mapping";
  auto req = schema.FindMember("required");
  if (req == schema.MemberEnd()) return "";
  if (!req->value.IsArray()) return "'required' must be a list of property names";
  for (const auto& n : req->value.GetArray()) {
    if (!n.IsString()) return "'required' must be a list of property names";
    if (props == schema.MemberEnd() || !props->value.HasMember(n.GetString()))
      return std::string("'required' names '") + n.GetString() + "', which is not among its properties";
  }
  return "";
}

void read_output_schema(YamlReader& r, const Field& k, LlmJudge& j) {
  std::optional<std::string> text;
  if (k.node.IsMap()) text = yaml_to_json(r, k, "llm_judge.output_schema");
  else if (k.node.IsScalar()) text = r.string(k, "llm_judge");  // a JSON document written as a string
  else r.error(k, "llm_judge.output_schema must be a mapping (a JSON Schema)");
  if (!text) return;
  json::Document doc;
  auto bad = json::parse_document(doc, *text);
  std::string problem = bad ? "is not valid JSON (" + bad->reason + ")" : object_schema_problem(doc);
  if (!problem.empty()) r.error(k, "llm_judge.output_schema " + problem);
  else j.output_schema_json = json::to_string(doc);
}

}  // namespace

LlmJudge read_llm_judge(YamlReader& r, const Field& block) {
  LlmJudge j;
  const std::string w = "llm_judge";
  for (const auto& k : r.known_keys(r.mapping_or_null(block, w), w,
                                    {"model_ref", "rubric", "output_schema", "system_prompt", "agentic", "tool_packs"})) {
    if (k.is_null()) continue;
    if (k.key == "model_ref") {
      if (auto v = r.string(k, w)) j.model_ref = *v;
    } else if (k.key == "rubric") {
      if (auto v = r.string(k, w)) j.rubric = *v;
    } else if (k.key == "system_prompt") {
      if (auto v = r.string(k, w)) j.system_prompt = *v;
    } else if (k.key == "output_schema") {
      read_output_schema(r, k, j);
    } else if (k.key == "agentic") {
      auto v = r.boolean(k, w);
      if (v && *v)
        r.error(k, "llm_judge.agentic is not supported yet",
                "drop it: the judge reads the transcript and the final state");
    } else if (auto v = r.strings(k, w)) {
      j.tool_packs = *v;
    }
  }
  if (!block.is_null() && block.node.IsMap() && j.rubric.empty())
    r.error(block, "llm_judge needs a 'rubric'", {}, At::kKey);
  j.present = !j.rubric.empty();
  return j;
}

namespace {

// reward_file is the verifier's channel: only /logs/verifier is closed to the agent's programs.
bool under_verifier_logs(const std::string& path) {
  auto rel = fs::path(path).lexically_normal().lexically_relative("/logs/verifier");
  return !rel.empty() && *rel.begin() != ".." && rel != ".";
}

// The tests are at /tests in the grader, not in the workspace where the command starts: a word
// like "tests/test.sh" would find nothing there (or a file the agent left).
void check_command_paths(YamlReader& r, const Field& f, const TestScripts& t) {
  if (t.dir.empty() || t.dir == ".") return;
  const std::string prefix = t.dir + "/";
  std::size_t pos = 0;
  while (pos < t.command.size()) {
    std::size_t end = t.command.find_first_of(" \t\n;|&()", pos);
    if (end == std::string::npos) end = t.command.size();
    std::string word = t.command.substr(pos, end - pos);
    if (word.size() >= 2 && (word.front() == '"' || word.front() == '\'')) word = word.substr(1);
    if (word.rfind(prefix, 0) == 0 || word.rfind("./" + prefix, 0) == 0) {
      r.error(
          f, "custom_checks.command: '" + word + "' is relative to the workspace copy, where the tests are not",
          "the grader has custom_checks.dir at /tests: write /tests/" + word.substr(word.find(prefix) + prefix.size()));
      return;
    }
    pos = end + 1;
  }
}

// The directory tree `rel` (relative to `root`) as the checks' container gets it.
bool check_python_tree(YamlReader& r, const Field& f, const std::string& what, const std::string& root,
                       const std::string& rel) {
  auto d = ConfinedDir::open(root, "the checks' directory");
  Status st = d ? d->walk(rel, kTestsLimits, [](const TreeEntry&) { return Status(); }) : Status(d.fail());
  if (!st) r.error(f, what + ": " + st.error().message);
  return st.has_value();
}

// `file`, `interface_version` and `relative_imports` (the test script's keys refused beside them),
// with the directory tree the checks' container gets: the task directory, or the project
// directory holding it and the imports.
void read_python_checks(YamlReader& r, const Field& block, const std::vector<Field>& python_keys,
                        const std::vector<Field>& others, const std::string& dir, bool has_timeout, TestScripts& t) {
  const std::string w = "custom_checks";
  t.dir.clear();
  t.command.clear();
  if (!has_timeout) t.timeout_s = 30;  // Tolokaforge's default for checks
  if (t.timeout_s > 3600) r.error(block, "custom_checks.timeout_seconds must be at most 3600 for Python checks", {}, At::kKey);
  for (const auto& k : others)
    if (std::find(kScriptOnlyKeys.begin(), kScriptOnlyKeys.end(), k.key) != kScriptOnlyKeys.end())
      r.error(k, "custom_checks." + k.key + " is a test script's key; these checks are a Python file",
              "give either 'file' (checks.py) or 'command'/'dir' (a test script)", At::kKey);
  std::string file = "checks.py";
  std::optional<Field> file_field;
  std::vector<std::pair<std::string, Field>> imports;
  for (const auto& k : python_keys) {
    if (k.key == "file") {
      file_field = k;
      auto v = r.string(k, w);
      if (v && (v->empty() || fs::path(*v).is_absolute() || v->size() < 4 || v->compare(v->size() - 3, 3, ".py") != 0))
        r.error(k, "custom_checks.file must be a Python file relative to the task directory, got '" + *v + "'");
      else if (v)
        file = *v;
    } else if (k.key == "interface_version") {
      if (auto v = r.string(k, w)) t.interface_version = *v;
    } else if (auto v = r.strings(k, w)) {
      for (const auto& rel : *v) {
        if (rel.empty() || fs::path(rel).is_absolute())
          r.error(k, "custom_checks.relative_imports: '" + rel + "' must be a directory relative to the task directory");
        else
          imports.emplace_back(rel, k);
      }
    }
  }
  const Field& at = file_field ? *file_field : block;
  std::vector<std::string> abs{(fs::path(dir) / file).lexically_normal().string()};
  for (const auto& [rel, f] : imports) abs.push_back((fs::path(dir) / rel).lexically_normal().string());
  auto root = python_root(dir, abs);
  if (!root) {
    r.error(at, "custom_checks: " + root.error().message);
    return;
  }
  t.checks_root = *root;
  auto rel_to_root = [&](const std::string& p) { return fs::path(p).lexically_relative(t.checks_root).string(); };
  auto d = ConfinedDir::open(t.checks_root, "the checks' directory");
  auto st = d ? d->stat(rel_to_root(abs[0])) : Result<ConfinedStat>(d.fail());
  if (!st || st->kind != EntryKind::kFile) {
    r.error(at, "custom_checks.file: " + (st ? "'" + file + "' is not a file" : st.error().message));
    return;
  }
  bool ok = check_python_tree(r, at, "custom_checks", t.checks_root, rel_to_root(dir));
  for (std::size_t i = 0; i < imports.size(); ++i) {
    auto s = d->stat(rel_to_root(abs[i + 1]));
    if (!s || s->kind != EntryKind::kDirectory) {
      r.error(imports[i].second, "custom_checks.relative_imports: " +
                                     (s ? "'" + imports[i].first + "' is not a directory" : s.error().message));
      ok = false;
    } else {
      ok = check_python_tree(r, imports[i].second, "custom_checks.relative_imports", t.checks_root,
                             rel_to_root(abs[i + 1])) && ok;
    }
  }
  if (!ok) return;
  t.checks_file = fs::path(file).lexically_normal().string();
  for (const auto& [rel, f] : imports) t.relative_imports.push_back(rel);
  t.present = !block.is_null() && t.enabled;
}

}  // namespace

TestScripts read_custom_checks(YamlReader& r, const Field& block, const std::string& dir,
                               std::optional<std::pair<double, Field>>& weight) {
  TestScripts t;
  const std::string w = "custom_checks";
  std::vector<Field> known;
  std::vector<Field> python_keys;
  for (const auto& e : r.mapping_or_null(block, w)) {
    if (e.key == "timeout_s")  // the name docs/custom_checks.md used, which Tolokaforge ignored
      r.error(e, "custom_checks: unsupported key 'timeout_s'", "did you mean 'timeout_seconds'?", At::kKey);
    else if (e.key == "checks_file")  // likewise
      r.error(e, "custom_checks: unsupported key 'checks_file'", "did you mean 'file'?", At::kKey);
    else if (std::find(kPythonCheckKeys.begin(), kPythonCheckKeys.end(), e.key) != kPythonCheckKeys.end())
      python_keys.push_back(e);
    else
      known.push_back(e);
  }
  bool has_timeout = false;
  bool has_command = false, has_dir = false;
  std::optional<Field> dir_field, command_field, fail_on_error_field;
  for (const auto& k : r.known_keys(known, w, kCustomCheckKeys)) {
    if (k.key == "enabled") {
      if (auto v = r.boolean(k, w)) t.enabled = *v;
    } else if (k.key == "dir") {
      has_dir = true;
      dir_field = k;
      if (auto v = r.string(k, w)) t.dir = fs::path(*v).lexically_normal().string();
    } else if (k.key == "command") {
      has_command = true;
      command_field = k;
      auto v = r.string(k, w);
      if (v && v->empty()) r.error(k, "custom_checks.command is empty");
      else if (v) t.command = *v;
    } else if (k.key == "image") {
      if (auto v = r.string(k, w)) t.image = *v;
    } else if (k.key == "timeout_seconds") {
      has_timeout = true;
      auto v = r.number(k, w);
      if (v && *v <= 0) r.error(k, "custom_checks.timeout_seconds must be positive");
      else if (v) t.timeout_s = *v;
    } else if (k.key == "reward_file") {
      auto v = r.string(k, w);
      if (v && !fs::path(*v).is_absolute()) r.error(k, "custom_checks.reward_file must be an absolute path in the grader");
      else if (v && !under_verifier_logs(*v))
        r.error(k, "custom_checks.reward_file must be a file under /logs/verifier, the verifier's own directory",
                "the agent's programs cannot write there: e.g. /logs/verifier/reward.txt");
      else if (v)
        t.reward_file = fs::path(*v).lexically_normal().string();
    } else if (k.key == "weight") {
      auto v = r.number(k, w);
      if (v && *v < 0) r.error(k, "custom_checks.weight must not be negative");
      else if (v) weight = std::make_pair(*v, k);
    } else if (auto v = r.boolean(k, w)) {
      t.fail_on_error = *v;
      fail_on_error_field = k;
    }
  }
  // Tolokaforge's form: its keys, or nothing that names a test script and a checks.py to run.
  const bool implicit_python = python_keys.empty() && !has_command && !has_dir &&
                               file_kind(fs::path(dir) / "tests" / "test.sh") != FileKind::kFile &&
                               file_kind(fs::path(dir) / "checks.py") == FileKind::kFile;
  if (!python_keys.empty() || implicit_python) {
    read_python_checks(r, block, python_keys, known, dir, has_timeout, t);
    return t;
  }
  if (fail_on_error_field && !t.fail_on_error)
    r.error(*fail_on_error_field, "custom_checks.fail_on_error: false is not supported for a test script",
            "a test script that fails to run scores 0; catch errors inside the script to decide otherwise");
  // Without `dir`, tests/ is copied in when the task has one; without `command`, the script
  // in it runs.
  if (!has_dir) t.dir = file_kind(fs::path(dir) / "tests") == FileKind::kDirectory ? "tests" : "";
  if (!has_command) t.command = t.dir.empty() ? "" : "sh /tests/test.sh";
  t.present = !block.is_null() && t.enabled;
  if (!t.present) return t;

  // The default tests/ is checked like a named dir (size and count limits), at the block.
  bool dir_ok = has_dir ? task_path(r, *dir_field, "custom_checks.dir", dir, t.dir, PathKind::kDirectory, Reach::kGrader).has_value()
                        : t.dir.empty() || task_path(r, block, "custom_checks", dir, t.dir, PathKind::kDirectory, Reach::kGrader).has_value();
  // The tree is copied into the grader: every entry must stay inside the task.
  if (dir_ok && !t.dir.empty())
    dir_ok = check_task_tree(r, has_dir ? *dir_field : block, "custom_checks.dir", dir, t.dir, kTestsLimits);
  if (has_command && command_field) check_command_paths(r, *command_field, t);
  if (dir_ok && !has_command && (t.dir.empty() || file_kind(fs::path(dir) / t.dir / "test.sh") != FileKind::kFile)) {
    r.error(block,
            "custom_checks: no 'command', and no " + (t.dir.empty() ? std::string("tests") : t.dir) + "/test.sh to run",
            "set 'command' to what runs the checks, or 'file' to a checks.py", At::kKey);
  }
  return t;
}

}  // namespace forge::manifest
