// Reads a task.yaml's `initial_state:` block strictly and normalises its json_db into tables.
#include "manifest/initial_state_parse.h"

#include <algorithm>
#include <filesystem>

#include "core/confined_dir.h"
#include "core/limits.h"
#include "manifest/files.h"
#include "manifest/task_reader.h"
#include "manifest/yaml_json.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kInitialStateKeys = {"json_db",        "filesystem",          "mock_web",
                                                    "rag",            "unstable_fields",     "device_overrides",
                                                    "initialization_actions", "system_prompt", "workspace"};

// Where the agent's files may be placed: its visible tree (Tolokaforge's file tools) and the
// runner's workdir (bash); nothing else in the runner is the task's to write.
const std::vector<std::string> kCopyRoots = {"/env/fs/agent-visible", "/work"};

std::string line_col(std::string_view text, std::size_t offset) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

std::optional<std::string> copy_target(YamlReader& r, const Field& f, const std::string& what) {
  auto to = r.string(f, what);
  if (!to) return std::nullopt;
  fs::path p = fs::path(*to).lexically_normal();
  bool under = false;
  for (const auto& root : kCopyRoots) {
    auto rel = p.lexically_relative(root);
    under = under || (!rel.empty() && *rel.begin() != ".." && rel != ".");
  }
  if (!fs::path(*to).is_absolute() || !under) {
    r.error(f, what + ": '" + *to + "' must be a file under /env/fs/agent-visible or /work",
            "the agent's file tools see /env/fs/agent-visible; bash starts in /work");
    return std::nullopt;
  }
  if (to->back() == '/') {
    r.error(f, what + ": '" + *to + "' names a directory; give the file's full path");
    return std::nullopt;
  }
  return p.string();
}

// A copied file is read whole at setup (and recorded in the trial's env.yaml): it has a limit.
bool copy_fits(YamlReader& r, const Field& f, const std::string& what, const std::string& dir, const std::string& rel) {
  auto d = open_task_files(dir);
  auto st = d ? d->stat(rel) : Result<ConfinedStat>(d.fail());
  if (st && st->size <= kTaskFileMax) return true;
  r.error(f, what + ": '" + rel + "' is " + (st ? std::to_string(st->size >> 20) + " MiB" : st.error().message) +
                 "; at most " + std::to_string(kTaskFileMax >> 20) + " MiB is copied");
  return false;
}

std::vector<FileCopy> read_filesystem(YamlReader& r, const Field& block, const std::string& dir) {
  std::vector<FileCopy> out;
  for (const auto& k : r.known_keys(r.mapping_or_null(block, "initial_state.filesystem"), "initial_state.filesystem", {"copy"})) {
    for (const auto& item : r.sequence(k, "initial_state.filesystem")) {
      std::string what = "initial_state.filesystem." + item.key;
      FileCopy c;
      c.where = r.location(item);
      bool has_from = false, has_to = false, ok = true;
      for (const auto& e : r.known_keys(r.mapping(item, what), what, {"from", "to"})) {
        if (e.key == "from") {
          has_from = true;
          auto from = r.string(e, what + ".from");
          if (from && is_grading_asset(*from)) {
            r.error(e, what + ".from: '" + *from + "' is a grading asset; it never enters a container during the agent phase");
            ok = false;
          } else if (!from || !task_path(r, e, what + ".from", dir, *from, PathKind::kFile, Reach::kAgent) ||
                     !copy_fits(r, e, what + ".from", dir, *from)) {
            ok = false;
          } else {
            c.from = fs::path(*from).lexically_normal().string();
          }
        } else {
          has_to = true;
          auto to = copy_target(r, e, what + ".to");
          if (to) c.to = *to;
          else ok = false;
        }
      }
      if (item.node.IsMap() && (!has_from || !has_to)) {
        r.error(item, what + " needs both 'from' and 'to'");
        ok = false;
      }
      if (ok) out.push_back(std::move(c));
    }
  }
  return out;
}

void read_json_db(YamlReader& r, const Field& f, const std::string& dir, InitialState& s) {
  if (f.is_null()) return;
  std::string text, file;
  if (f.node.IsScalar()) {
    auto rel = r.string(f, "initial_state.json_db");
    if (!rel) return;
    auto content = read_task_file(r, f, "initial_state.json_db", dir, *rel, kTaskFileMax, Reach::kAgent);
    if (!content) return;
    text = std::move(*content);
    file = (fs::path(dir) / *rel).lexically_normal().string();
    s.json_db_path = file;
  } else if (f.node.IsMap()) {
    auto json = yaml_to_json(r, f, "initial_state.json_db");
    if (!json) return;
    text = std::move(*json);
  } else {
    r.error(f, "initial_state.json_db must be a path to a JSON file or a mapping of tables");
    return;
  }
  json::Document doc;
  if (auto bad = json::parse_document(doc, text, limits::kMaxTaskFileBytes)) {
    r.error(f, "initial_state.json_db: '" + file + "' is not valid JSON at " + line_col(text, bad->offset) + ": " +
                   bad->reason);
    return;
  }
  auto tables = normalise_json_db(doc);
  if (!tables) {
    r.error(f, "initial_state.json_db" + (file.empty() ? std::string() : " ('" + file + "')") + ": " +
                   tables.error().message);
    return;
  }
  s.tables = std::move(*tables);
  s.json_db_json = json::to_string(doc);
}

void unsupported(YamlReader& r, const Field& k, const std::string& hint) {
  r.error(k, "initial_state." + k.key + " is not supported", hint, At::kKey);
}

}  // namespace

Result<Tables> normalise_json_db(const json::Value& db) {
  if (!db.IsObject()) return fail(Errc::kInvalid, "the database must be a JSON object whose keys are tables");
  Tables out;
  for (const auto& m : db.GetObject()) {
    std::string table(m.name.GetString(), m.name.GetStringLength());
    if (table == "unstable_fields")
      return fail(Errc::kInvalid, "'unstable_fields' would be a table here; list unstable fields under initial_state.unstable_fields");
    std::vector<std::string>& records = out[table];
    const json::Value& v = m.value;
    bool dict_of_dicts = v.IsObject() && v.MemberCount() > 0;
    if (dict_of_dicts)
      for (const auto& e : v.GetObject()) dict_of_dicts = dict_of_dicts && e.value.IsObject();
    if (v.IsArray()) {
      for (const auto& e : v.GetArray()) records.push_back(json::to_string(e));
    } else if (dict_of_dicts) {
      for (const auto& e : v.GetObject()) records.push_back(json::to_string(e.value));
    } else {
      records.push_back(json::to_string(v));
    }
  }
  return out;
}

Result<Tables> normalise_json_db(std::string_view json_text) {
  json::Document doc;
  if (auto bad = json::parse_document(doc, json_text, limits::kMaxTaskFileBytes))
    return fail(Errc::kInvalid, "invalid JSON at " + line_col(json_text, bad->offset) + ": " + bad->reason);
  return normalise_json_db(static_cast<const json::Value&>(doc));
}

InitialState read_initial_state(YamlReader& r, const Field& block, const std::string& dir) {
  InitialState s;
  for (const auto& k : r.known_keys(r.mapping_or_null(block, "initial_state"), "initial_state", kInitialStateKeys)) {
    if (k.key == "json_db") {
      read_json_db(r, k, dir, s);
    } else if (k.key == "filesystem") {
      s.filesystem_copy = read_filesystem(r, k, dir);
    } else if (k.key == "mock_web") {
      for (const auto& e : r.known_keys(r.mapping_or_null(k, "initial_state.mock_web"), "initial_state.mock_web", {"base_url"})) {
        auto url = r.string(e, "initial_state.mock_web");
        if (url && url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0)
          r.error(e, "initial_state.mock_web.base_url: '" + *url + "' is not an http(s) URL");
        else if (url) {
          s.mock_web_base_url = *url;
          s.mock_web_where = r.location(e);
        }
      }
    } else if (k.key == "rag") {
      for (const auto& e : r.known_keys(r.mapping_or_null(k, "initial_state.rag"), "initial_state.rag", {"corpus_dir"})) {
        auto rel = r.string(e, "initial_state.rag");
        if (!rel) continue;
        if (auto p = task_path(r, e, "initial_state.rag.corpus_dir", dir, *rel, PathKind::kDirectory, Reach::kAgent)) {
          s.rag_corpus_dir = *p;
          s.rag_where = r.location(e);
        }
      }
    } else if (k.key == "unstable_fields") {
      if (auto v = r.strings(k, "initial_state")) {
        for (const auto& name : *v) {
          bool ok = !name.empty() && name.front() != '.' && name.back() != '.' &&
                    std::count(name.begin(), name.end(), '.') <= 1 && name.find(' ') == std::string::npos;
          if (ok) s.unstable_fields.push_back(name);
          else r.error(k, "initial_state.unstable_fields: '" + name + "' is not 'field' or 'table.field'");
        }
      }
    } else if (k.key == "device_overrides") {
      unsupported(r, k, "τ²-telecom device patches applied on Tolokaforge's host; put the device state in json_db");
    } else if (k.key == "initialization_actions") {
      unsupported(r, k, "seed the state through json_db (Tolokaforge's native adapter cannot run these either)");
    } else if (k.key == "system_prompt") {
      r.warning(k, "initial_state.system_prompt has no effect: Tolokaforge never read it either",
                "set the top-level 'system_prompt' instead");
    } else if (k.key == "workspace") {
      // Tolokaforge's model has no such key and drops it: the files listed here never existed.
      r.warning(k, "initial_state.workspace has no effect: Tolokaforge ignores it, and so does forgectl",
                "put the files in the task directory and copy them with initial_state.filesystem.copy");
    }
  }
  return s;
}

}  // namespace forge::manifest
