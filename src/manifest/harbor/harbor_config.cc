// task.toml's top level: the schema version, [task] / [metadata], [solution], artifacts, the
// multi-step keys and [[steps]] (read last, over copies of the task's [agent] and [verifier]).
#include <regex>
#include <sstream>

#include "core/json.h"
#include "manifest/harbor/harbor_reader.h"

namespace forge::manifest {

namespace {

const std::vector<std::string> kTopKeys = {
    "schema_version", "version",     "task",     "metadata", "verifier",
    "agent",          "environment", "solution", "source",   "multi_step_reward_strategy",
    "steps",          "artifacts"};
const std::regex kPackageName("^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$");
const std::regex kStepName("^[A-Za-z0-9][A-Za-z0-9._-]*$");
constexpr int kMaxJsonDepth = 32;

void to_json(const toml::node& n, json::Writer& w, int depth) {
  if (depth > kMaxJsonDepth) {
    w.null();
  } else if (const auto* t = n.as_table()) {
    w.begin_object();
    for (const auto& [k, v] : *t) {
      w.key(k.str());
      to_json(v, w, depth + 1);
    }
    w.end_object();
  } else if (const auto* a = n.as_array()) {
    w.begin_array();
    for (const auto& v : *a) to_json(v, w, depth + 1);
    w.end_array();
  } else if (const auto* s = n.as_string()) {
    w.str(s->get());
  } else if (const auto* i = n.as_integer()) {
    w.i64(i->get());
  } else if (const auto* d = n.as_floating_point()) {
    w.num(d->get());
  } else if (const auto* b = n.as_boolean()) {
    w.boolean(b->get());
  } else {
    std::ostringstream text;  // dates and times, as TOML writes them
    if (const auto* dt = n.as_date_time())
      text << *dt;
    else if (const auto* dd = n.as_date())
      text << *dd;
    else if (const auto* tt = n.as_time())
      text << *tt;
    w.str(text.str());
  }
}

void read_version(TomlReader& r, const TomlField& f, HarborTask& t) {
  auto v = r.string(f, "");
  if (!v) return;
  t.schema_version = *v;
  if (*v == "1.0" || *v == "1.1" || *v == "1.2" || *v == "1.3" || *v == "1.4") return;
  if (v->rfind("1.", 0) == 0)
    r.warning(f, "schema version '" + *v + "' is newer than forgectl knows (1.0 to 1.4)",
              "keys it does not know are reported; the rest are read as in 1.4");
  else
    r.error(f, "'" + f.key + "' must be \"1.0\" to \"1.4\", got '" + *v + "'");
}

void read_package(TomlReader& r, const TomlField& f, HarborTask& t) {
  bool has_name = false;
  for (const auto& e : r.entries(f, "task")) {
    if (e.key == "name") {
      auto v = r.string(e, "task");
      has_name = true;
      if (v && (!std::regex_match(*v, kPackageName) || v->find("..") != std::string::npos))
        r.error(e, "[task] 'name' must be \"org/name\" (letters, digits, '.', '_', '-'), got '" + *v + "'");
      else if (v)
        t.name = *v;
    } else if (e.key == "version" || e.key == "description") {
      auto v = r.string(e, "task");
      if (v && e.key == "version" && v->empty())
        r.error(e, "[task] 'version' is empty");
      else if (v)
        (e.key == "version" ? t.version : t.description) = *v;
    } else if (e.key == "keywords") {
      if (auto v = r.strings(e, "task", kMaxListItems)) t.keywords = *v;
    } else if (e.key == "authors") {
      for (const auto& item : r.items(e, "task", kMaxListItems)) {
        const std::string where = toml_path("task", item.key);
        Author a;
        for (const auto& k : r.entries(item, where)) {
          if (k.key == "name" || k.key == "email") {
            if (auto v = r.string(k, where)) (k.key == "name" ? a.name : a.email) = *v;
          } else {
            r.unknown_key(k, where, {"name", "email"});
          }
        }
        if (a.name.empty())
          r.error(item, "[" + where + "] needs a 'name'");
        else
          t.authors.push_back(std::move(a));
      }
    } else {
      r.unknown_key(e, "task", {"name", "version", "description", "authors", "keywords"});
    }
  }
  if (!has_name && f.node->is_table()) r.error(f, "[task] has no 'name'", "name the task \"org/name\"", TomlAt::kKey);
}

// [metadata] is free-form: kept as JSON, with the fields reports slice by copied out.
void read_metadata(TomlReader& r, const TomlField& f, HarborTask& t) {
  if (!f.node->is_table()) {
    r.error(f, "'metadata' must be a table, got " + toml_kind(f.node));
    return;
  }
  json::Writer w;
  to_json(*f.node, w, 0);
  t.metadata_json = w.take();
  const toml::table& m = *f.node->as_table();
  if (auto s = m["difficulty"].value<std::string>()) t.difficulty = *s;
  if (auto s = m["category"].value<std::string>()) t.category = *s;
  if (const auto* tags = m["tags"].as_array())
    for (const auto& v : *tags)
      if (auto s = v.value<std::string>()) t.tags.push_back(*s);
  // Schema 1.0 named the author here; [task].authors supersedes it.
  if (auto name = m["author_name"].value<std::string>(); name && t.authors.empty())
    t.authors.push_back(Author{*name, m["author_email"].value<std::string>().value_or("")});
}

void read_step(TomlReader& r, const TomlField& item, const HarborTask& t, std::vector<StepConfig>& steps) {
  const std::string where = toml_path("", item.key);
  StepConfig s;
  s.where = SourceLocation{r.file(), item.line, item.column};
  s.agent = t.agent;
  s.verifier = t.verifier;
  bool named = false;
  for (const auto& e : r.entries(item, where)) {
    if (e.key == "name") {
      auto v = r.string(e, where);
      named = true;
      if (v && (!std::regex_match(*v, kStepName) || *v == "." || *v == ".."))
        r.error(e, "[" + where + "] 'name' must be a directory name under steps/, got '" + *v + "'");
      else if (v)
        s.name = *v;
    } else if (e.key == "agent") {
      read_agent(r, e, toml_path(where, "agent"), s.agent);
    } else if (e.key == "verifier") {
      read_verifier(r, e, toml_path(where, "verifier"), s.verifier);
    } else if (e.key == "min_reward") {
      if (e.node->is_table()) {
        for (const auto& k : r.entries(e, toml_path(where, "min_reward")))
          if (auto v = r.number(k, toml_path(where, "min_reward"))) s.min_rewards[k.key] = *v;
      } else if (auto v = r.number(e, where)) {
        s.min_reward = v;
      }
    } else if (e.key == "healthcheck") {
      s.healthcheck = read_healthcheck(r, e, where);
    } else if (e.key == "artifacts") {
      s.artifacts = read_artifacts(r, e, where);
    } else {
      r.unknown_key(e, where, {"name", "agent", "verifier", "min_reward", "healthcheck", "artifacts"});
    }
  }
  if (!named && item.node->is_table()) r.error(item, "[" + where + "] has no 'name'");
  for (const auto& other : steps)
    if (!s.name.empty() && other.name == s.name) r.error(item, "[" + where + "] step '" + s.name + "' is given twice");
  if (!s.name.empty()) steps.push_back(std::move(s));
}

}  // namespace

void read_task_config(TomlReader& r, const toml::table& doc, HarborTask& t) {
  std::optional<TomlField> steps, strategy, version;
  bool has_schema_version = false;
  for (const auto& e : r.entries(r.root(doc), "")) {
    if (e.key == "schema_version") {
      has_schema_version = true;
      read_version(r, e, t);
    } else if (e.key == "version") {
      version = e;
    } else if (e.key == "task") {
      read_package(r, e, t);
    } else if (e.key == "metadata") {
      read_metadata(r, e, t);
    } else if (e.key == "agent") {
      read_agent(r, e, "agent", t.agent);
    } else if (e.key == "verifier") {
      read_verifier(r, e, "verifier", t.verifier);
    } else if (e.key == "environment") {
      read_environment(r, e, "environment", t.environment);
    } else if (e.key == "solution") {
      for (const auto& k : r.entries(e, "solution")) {
        if (k.key == "env")
          t.solution_env = read_env(r, k, "solution");
        else
          r.unknown_key(k, "solution", {"env"});
      }
    } else if (e.key == "source") {
      if (auto v = r.string(e, "")) t.source = *v;
    } else if (e.key == "artifacts") {
      t.artifacts = read_artifacts(r, e, "");
    } else if (e.key == "steps") {
      steps = e;
    } else if (e.key == "multi_step_reward_strategy") {
      strategy = e;
    } else if (e.key == "multi_step_reward_mode") {
      r.warning(e, "'multi_step_reward_mode' has no effect: Harbor 1.3 renamed it and drops the old key",
                "write multi_step_reward_strategy");
    } else {
      r.unknown_key(e, "", kTopKeys);
    }
  }
  // Harbor renames version to schema_version unless schema_version is already there.
  if (version && has_schema_version)
    r.warning(*version, "'version' has no effect: 'schema_version' is given");
  else if (version)
    read_version(r, *version, t);
  if (t.schema_version.empty()) t.schema_version = "1.0";

  if (steps) {
    for (const auto& item : r.items(*steps, "", kMaxSteps)) read_step(r, item, t, t.steps);
    if (steps->node->is_array() && steps->node->as_array()->empty()) r.error(*steps, "'steps' is empty");
  }
  if (strategy) {
    auto v = r.string(*strategy, "");
    if (v && *v == "final")
      t.reward_strategy = RewardStrategy::kFinal;
    else if (v && *v != "mean")
      r.error(*strategy, "'multi_step_reward_strategy' must be \"mean\" or \"final\", got '" + *v + "'");
    if (v && t.steps.empty() && !steps)
      r.warning(*strategy, "'multi_step_reward_strategy' has no effect: the task has no [[steps]]");
  }
}

}  // namespace forge::manifest
