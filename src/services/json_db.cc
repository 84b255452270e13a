// json-db's store: a map of trials, each with its own lock; mutations validate before they apply.
#include "services/json_db.h"

#include <algorithm>

#include "core/jsonpath.h"
#include "core/state_hash.h"
#include "core/strings.h"
#include "services/table_ops.h"

namespace forge::services {

namespace {

std::string str(const json::Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

const json::Value* member(const json::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

Status only_keys(const json::Value& body, std::initializer_list<std::string_view> keys, std::string_view what) {
  if (!body.IsObject()) return fail(Errc::kInvalid, std::string(what) + " body must be a JSON object");
  for (const auto& m : body.GetObject()) {
    std::string_view k(m.name.GetString(), m.name.GetStringLength());
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      return fail(Errc::kInvalid, std::string(what) + " body has an unknown key '" + std::string(k) + "'");
  }
  return {};
}

// "table.field" / "field" strings, or Tolokaforge's {table_name, field_name, reason} objects.
Result<std::vector<std::string>> parse_unstable(const json::Value* v) {
  std::vector<std::string> out;
  if (!v || v->IsNull()) return out;
  if (!v->IsArray()) return fail(Errc::kInvalid, "'unstable_fields' must be an array");
  for (const auto& f : v->GetArray()) {
    if (f.IsString()) {
      out.push_back(str(f));
      continue;
    }
    std::string table = f.IsObject() ? json::get_string(f, "table_name") : "";
    std::string field = f.IsObject() ? json::get_string(f, "field_name") : "";
    if (field.empty())
      return fail(Errc::kInvalid, "each unstable field is \"table.field\", \"field\" or {table_name, field_name}");
    out.push_back(table.empty() ? field : table + "." + field);
  }
  return out;
}

// The size of `v` written as compact JSON, counted without building the text.
struct CountingStream {
  using Ch = char;
  std::size_t n = 0;
  void Put(char) { ++n; }
  void Flush() {}
};
// Iterative (json::emit): ops can nest one value inside another past any depth a parse allows.
std::size_t json_size(const json::Value& v) {
  CountingStream out;
  rapidjson::Writer<CountingStream> w(out);
  json::emit(v, w);
  return out.n;
}

Status check_tables(const json::Value* tables) {
  if (!tables || !tables->IsObject()) return fail(Errc::kInvalid, "'tables' must be an object of table name → records");
  for (const auto& t : tables->GetObject()) {
    std::string name = str(t.name);
    if (!t.value.IsArray()) return fail(Errc::kInvalid, "table '" + name + "' must be an array of records");
    for (rapidjson::SizeType i = 0; i < t.value.Size(); ++i)
      if (!t.value[i].IsObject())
        return fail(Errc::kInvalid, "table '" + name + "' record " + std::to_string(i) + " is not an object");
  }
  return {};
}

}  // namespace

Status check_name(std::string_view what, std::string_view name) {
  if (name.empty() || name.size() > 256)
    return fail(Errc::kInvalid, std::string(what) + " must be 1 to 256 characters");
  for (char c : name)
    if (c <= ' ' || c > '~' || c == '/' || c == '\\')
      return fail(Errc::kInvalid, std::string(what) + " '" + std::string(name) +
                                      "' may hold only printable ASCII without '/', '\\' or spaces");
  return {};
}

void JsonDb::replace_data(Trial& t, const json::Value& from, std::size_t bytes) {
  // A fresh document, not CopyFrom into the old one: the old pool's memory is released.
  json::Document fresh;
  fresh.CopyFrom(from, fresh.GetAllocator());
  t.data.Swap(fresh);
  t.data_bytes = bytes;
}

Status JsonDb::commit(std::string_view trial, Trial& t, json::Document& next) const {
  std::size_t bytes = json_size(next);
  if (bytes > limits_.max_state_bytes)
    return fail(kStorageFull, "trial '" + std::string(trial) + "' would hold " + std::to_string(bytes) +
                                  " bytes of tables, over the limit of " + human_bytes(limits_.max_state_bytes) +
                                  "; nothing was changed");
  // Swapped, not copied: `next` was built in its own pool, so the old state's memory goes with it.
  t.data.Swap(next);
  t.data_bytes = bytes;
  return {};
}

Result<std::shared_ptr<JsonDb::Trial>> JsonDb::find(std::string_view id) const {
  std::lock_guard lock(mu_);
  auto it = trials_.find(id);
  if (it == trials_.end()) return fail(Errc::kNotFound, "trial '" + std::string(id) + "' not found");
  return it->second;
}

std::size_t JsonDb::trial_count() const {
  std::lock_guard lock(mu_);
  return trials_.size();
}

Result<std::string> JsonDb::init(std::string_view trial, const json::Value& body) {
  if (auto st = check_name("trial id", trial); !st) return st.fail();
  if (auto st = only_keys(body, {"tables", "unstable_fields", "schemas"}, "init"); !st) return st.fail();
  const json::Value* tables = member(body, "tables");
  if (auto st = check_tables(tables); !st) return st.fail();
  auto unstable = parse_unstable(member(body, "unstable_fields"));
  if (!unstable) return unstable.fail();
  const json::Value* schemas = member(body, "schemas");
  if (schemas && !schemas->IsArray() && !schemas->IsNull()) return fail(Errc::kInvalid, "'schemas' must be an array");

  std::size_t bytes = json_size(*tables);
  if (bytes > limits_.max_state_bytes)
    return fail(kStorageFull, "trial '" + std::string(trial) + "': its tables are " + std::to_string(bytes) +
                                  " bytes, over the limit of " + human_bytes(limits_.max_state_bytes));

  // Built completely before it is published, so no request sees a half-initialised trial.
  auto t = std::make_shared<Trial>();
  replace_data(*t, *tables, bytes);
  t->initial.CopyFrom(*tables, t->initial.GetAllocator());
  t->initial_bytes = bytes;
  t->unstable = std::move(*unstable);
  std::string initial_hash = state_hash(t->data, t->unstable);
  {
    std::lock_guard lock(mu_);
    if (trials_.count(trial)) return fail(Errc::kConflict, "trial '" + std::string(trial) + "' already exists");
    if (trials_.size() >= limits_.max_trials)
      return fail(kStorageFull,
                  "too many trials (" + std::to_string(limits_.max_trials) + "); delete finished ones first");
    trials_.emplace(std::string(trial), t);
  }
  json::Writer w;
  w.begin_object().field("status", "ok").field("trial_id", trial).key("tables_initialized").begin_array();
  for (const auto& m : tables->GetObject()) w.str(std::string_view(m.name.GetString(), m.name.GetStringLength()));
  w.end_array()
      .field("schemas_registered", static_cast<std::int64_t>(schemas && schemas->IsArray() ? schemas->Size() : 0))
      .field("unstable_fields_registered", static_cast<std::int64_t>(t->unstable.size()))
      .field("initial_hash", initial_hash)
      .end_object();
  return w.take();
}

Result<std::string> JsonDb::state(std::string_view trial, const std::vector<std::string>& tables) const {
  auto t = find(trial);
  if (!t) return t.fail();
  std::lock_guard lock((*t)->mu);
  const json::Document& data = (*t)->data;
  json::Writer w;
  w.begin_object().key("data");
  if (tables.empty()) {
    w.raw_value(json::to_string(data));
  } else {
    w.begin_object();
    for (const auto& m : data.GetObject()) {
      std::string name = str(m.name);
      if (std::find(tables.begin(), tables.end(), name) == tables.end()) continue;
      w.key(name).raw_value(json::to_string(m.value));
    }
    w.end_object();
  }
  w.field("version", (*t)->version)
      .field("full_hash", state_hash(data))
      .field("stable_hash", state_hash(data, (*t)->unstable))
      .end_object();
  return w.take();
}

Result<std::string> JsonDb::stable_state(std::string_view trial) const {
  auto t = find(trial);
  if (!t) return t.fail();
  std::lock_guard lock((*t)->mu);
  json::Document stable = forge::stable_state((*t)->data, (*t)->unstable);
  json::Writer w;
  w.begin_object().key("data").raw_value(json::to_string(stable));
  w.field("version", (*t)->version).field("stable_hash", state_hash(stable)).key("filtered_fields").begin_array();
  for (const auto& f : (*t)->unstable) {
    auto dot = f.find('.');
    w.begin_object()
        .field("table", dot == std::string::npos ? "" : f.substr(0, dot))
        .field("field", dot == std::string::npos ? f : f.substr(dot + 1))
        .end_object();
  }
  w.end_array().end_object();
  return w.take();
}

Result<std::string> JsonDb::hash(std::string_view trial) const {
  auto t = find(trial);
  if (!t) return t.fail();
  std::lock_guard lock((*t)->mu);
  json::Writer w;
  w.begin_object()
      .field("stable_hash", state_hash((*t)->data, (*t)->unstable))
      .field("full_hash", state_hash((*t)->data))
      .field("version", (*t)->version)
      .end_object();
  return w.take();
}

Result<JsonDb::Locked> JsonDb::locked_for_write(std::string_view trial, const json::Value& body) const {
  auto found = find(trial);
  if (!found) return found.fail();
  Locked l{*found, std::unique_lock((*found)->mu)};
  // An etag (the state hash the writer last read) makes the write conditional.
  std::string etag = json::get_string(body, "etag");
  if (!etag.empty() && etag != state_hash(l.trial->data))
    return fail(Errc::kConflict, "etag mismatch: trial '" + std::string(trial) + "' was modified");
  return l;
}

Result<std::string> JsonDb::patch(std::string_view trial, std::string_view table, const json::Value& body) {
  if (auto st = only_keys(body, {"operations", "etag"}, "patch"); !st) return st.fail();
  const json::Value* ops = member(body, "operations");
  if (!ops) return fail(Errc::kInvalid, "patch body needs 'operations'");
  if (auto st = validate_table_ops(*ops); !st) return st.fail();
  auto found = locked_for_write(trial, body);
  if (!found) return found.fail();
  Trial& t = *found->trial;
  // On a copy, so that a result over the size limit leaves the state untouched.
  json::Document next;
  next.CopyFrom(t.data, next.GetAllocator());
  json::Value table_name(table.data(), static_cast<rapidjson::SizeType>(table.size()), next.GetAllocator());
  auto it = next.FindMember(table_name);
  if (it == next.MemberEnd()) {
    // As in Tolokaforge: an insert or upsert may create the table; anything else needs it.
    std::string first = ops->Empty() ? "" : str((*ops)[0]["op"]);
    if (first != "insert" && first != "upsert")
      return fail(Errc::kNotFound,
                  "table '" + std::string(table) + "' not found in trial '" + std::string(trial) + "'");
    next.AddMember(table_name, json::Value(rapidjson::kArrayType), next.GetAllocator());
    it = next.FindMember(json::Value(rapidjson::StringRef(table.data(), table.size())));
  }
  if (!it->value.IsArray())
    return fail(Errc::kInvalid, "table '" + std::string(table) + "' is not an array of records");
  std::int64_t affected = apply_table_ops(it->value, *ops, next.GetAllocator());
  if (auto st = commit(trial, t, next); !st) return st.fail();
  ++t.version;
  json::Writer w;
  w.begin_object()
      .field("status", "ok")
      .field("version", t.version)
      .field("affected_rows", affected)
      .field("new_hash", state_hash(t.data, t.unstable))
      .end_object();
  return w.take();
}

Result<std::string> JsonDb::snapshot(std::string_view trial, std::string_view name) {
  if (auto st = check_name("snapshot name", name); !st) return st.fail();
  auto found = find(trial);
  if (!found) return found.fail();
  Trial& t = **found;
  std::lock_guard lock(t.mu);
  if (t.snapshots.count(name))
    return fail(Errc::kConflict,
                "snapshot '" + std::string(name) + "' already exists in trial '" + std::string(trial) + "'");
  if (t.snapshots.size() >= limits_.max_snapshots)
    return fail(Errc::kConflict, "trial '" + std::string(trial) + "' already has " +
                                     std::to_string(limits_.max_snapshots) + " snapshots");
  std::size_t total = t.data_bytes + t.initial_bytes + t.snapshot_bytes + t.data_bytes;
  if (total > limits_.max_total_bytes)
    return fail(kStorageFull,
                "trial '" + std::string(trial) + "' would hold " + std::to_string(total) +
                    " bytes with this snapshot (tables, initial tables and snapshots), over the limit of " +
                    human_bytes(limits_.max_total_bytes) + "; delete snapshots or the trial");
  Snapshot snap;
  snap.data.CopyFrom(t.data, snap.data.GetAllocator());
  snap.bytes = t.data_bytes;
  t.snapshot_bytes += snap.bytes;
  t.snapshots.emplace(std::string(name), std::move(snap));
  json::Writer w;
  w.begin_object()
      .field("status", "ok")
      .field("snapshot_name", name)
      .field("version", t.version)
      .field("hash", state_hash(t.data, t.unstable))
      .end_object();
  return w.take();
}

Result<std::string> JsonDb::restore(std::string_view trial, std::string_view name) {
  auto found = find(trial);
  if (!found) return found.fail();
  Trial& t = **found;
  std::lock_guard lock(t.mu);
  auto it = t.snapshots.find(name);
  if (it == t.snapshots.end())
    return fail(Errc::kNotFound,
                "snapshot '" + std::string(name) + "' not found in trial '" + std::string(trial) + "'");
  replace_data(t, it->second.data, it->second.bytes);
  ++t.version;
  json::Writer w;
  w.begin_object()
      .field("status", "ok")
      .field("restored_from", name)
      .field("version", t.version)
      .field("hash", state_hash(t.data, t.unstable))
      .end_object();
  return w.take();
}

Result<std::string> JsonDb::reset(std::string_view trial) {
  auto found = find(trial);
  if (!found) return found.fail();
  Trial& t = **found;
  std::lock_guard lock(t.mu);
  replace_data(t, t.initial, t.initial_bytes);
  ++t.version;
  json::Writer w;
  w.begin_object()
      .field("status", "ok")
      .field("version", t.version)
      .field("hash", state_hash(t.data, t.unstable))
      .end_object();
  return w.take();
}

Result<std::string> JsonDb::remove(std::string_view trial) {
  std::shared_ptr<Trial> t;
  {
    std::lock_guard lock(mu_);
    auto it = trials_.find(trial);
    if (it == trials_.end()) return fail(Errc::kNotFound, "trial '" + std::string(trial) + "' not found");
    t = std::move(it->second);
    trials_.erase(it);
  }
  std::lock_guard lock(t->mu);  // a request still holding the trial finishes first
  json::Writer w;
  w.begin_object().field("status", "ok").key("deleted").begin_object();
  w.field("state", true)
      .field("unstable_fields", static_cast<std::int64_t>(t->unstable.size()))
      .field("snapshots", static_cast<std::int64_t>(t->snapshots.size()))
      .end_object()
      .end_object();
  return w.take();
}

Result<std::string> JsonDb::query(std::string_view trial, const json::Value& body) const {
  if (auto st = only_keys(body, {"jsonpath"}, "query"); !st) return st.fail();
  const json::Value* path = member(body, "jsonpath");
  if (!path || !path->IsString()) return fail(Errc::kInvalid, "query body needs 'jsonpath' as a string");
  auto t = find(trial);
  if (!t) return t.fail();
  std::lock_guard lock((*t)->mu);
  auto results = jsonpath_query((*t)->data, str(*path));
  if (!results) return results.fail();
  json::Writer w;
  w.begin_object().key("results").begin_array();
  for (const auto* v : *results) w.raw_value(json::to_string(*v));
  w.end_array().field("count", static_cast<std::int64_t>(results->size())).end_object();
  return w.take();
}

Result<std::string> JsonDb::update(std::string_view trial, const json::Value& body) {
  if (auto st = only_keys(body, {"ops", "etag"}, "update"); !st) return st.fail();
  const json::Value* ops = member(body, "ops");
  if (!ops) return fail(Errc::kInvalid, "update body needs 'ops'");
  if (auto st = validate_path_ops(*ops); !st) return st.fail();
  auto found = locked_for_write(trial, body);
  if (!found) return found.fail();
  Trial& t = *found->trial;
  // On a copy: a path that matches nothing halfway through must leave the state untouched.
  json::Document next;
  next.CopyFrom(t.data, next.GetAllocator());
  if (auto st = apply_path_ops(next, *ops); !st) return st.fail();
  if (!next.IsObject()) return fail(Errc::kInvalid, "the state must stay an object of tables");
  // Each value is at most kMaxJsonDepth deep, but ops can nest one inside another without end;
  // the state stays within the depth every body is held to.
  if (json::nested_deeper_than(next, kMaxJsonDepth))
    return fail(Errc::kInvalid, "the update would nest the state deeper than " + std::to_string(kMaxJsonDepth) +
                                    " levels; nothing was changed");
  if (auto st = commit(trial, t, next); !st) return st.fail();
  ++t.version;
  json::Writer w;
  w.begin_object()
      .field("status", "ok")
      .field("version", t.version)
      .field("etag", state_hash(t.data))
      .field("stable_hash", state_hash(t.data, t.unstable))
      .end_object();
  return w.take();
}

}  // namespace forge::services
