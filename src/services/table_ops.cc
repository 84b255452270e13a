// The json-db's mutation operations: validated first, then applied, so a bad request changes nothing.
#include "services/table_ops.h"

#include <algorithm>
#include <string>

#include "core/jsonpath.h"

namespace forge::services {

namespace {

std::string str(const json::Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

const json::Value* field(const json::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

Status need_object(const json::Value& op, const char* key, std::size_t i, std::string_view name) {
  const json::Value* v = field(op, key);
  if (!v || !v->IsObject())
    return fail(Errc::kInvalid,
                "operation " + std::to_string(i) + " (" + std::string(name) + ") needs '" + key + "' as an object");
  return {};
}

bool matches(const json::Value& record, const json::Value& filter) {
  if (!record.IsObject()) return false;
  for (const auto& m : filter.GetObject()) {
    auto it = record.FindMember(m.name);
    if (it == record.MemberEnd() || !(it->value == m.value)) return false;
  }
  return true;
}

// Sets every member of `fields` on `record`, replacing existing values.
void merge(json::Value& record, const json::Value& fields, json::Document::AllocatorType& alloc) {
  for (const auto& m : fields.GetObject()) {
    auto it = record.FindMember(m.name);
    if (it != record.MemberEnd()) {
      it->value.CopyFrom(m.value, alloc);
    } else {
      json::Value name(m.name, alloc), value(m.value, alloc);
      record.AddMember(name, value, alloc);
    }
  }
}

}  // namespace

Status validate_table_ops(const json::Value& operations) {
  if (!operations.IsArray()) return fail(Errc::kInvalid, "'operations' must be an array");
  for (rapidjson::SizeType i = 0; i < operations.Size(); ++i) {
    const json::Value& op = operations[i];
    if (!op.IsObject()) return fail(Errc::kInvalid, "operation " + std::to_string(i) + " is not an object");
    for (const auto& m : op.GetObject()) {
      std::string key = str(m.name);
      if (key != "op" && key != "record" && key != "filter" && key != "set" && key != "key")
        return fail(Errc::kInvalid, "operation " + std::to_string(i) + " has an unknown key '" + key + "'");
    }
    const json::Value* kind = field(op, "op");
    if (!kind || !kind->IsString()) return fail(Errc::kInvalid, "operation " + std::to_string(i) + " needs 'op'");
    std::string name = str(*kind);
    Status st;
    if (name == "insert") {
      st = need_object(op, "record", i, name);
    } else if (name == "update") {
      st = need_object(op, "filter", i, name);
      if (st) st = need_object(op, "set", i, name);
    } else if (name == "delete") {
      st = need_object(op, "filter", i, name);
    } else if (name == "upsert") {
      st = need_object(op, "record", i, name);
      const json::Value* key = field(op, "key");
      if (st && key && !key->IsString() && !key->IsNull())
        return fail(Errc::kInvalid, "operation " + std::to_string(i) + " (upsert) needs 'key' as a string");
    } else {
      return fail(Errc::kInvalid,
                  "operation " + std::to_string(i) + ": unknown op '" + name + "' (insert, update, delete or upsert)");
    }
    if (!st) return st;
  }
  return {};
}

std::int64_t apply_table_ops(json::Value& table, const json::Value& operations, json::Document::AllocatorType& alloc) {
  std::int64_t affected = 0;
  for (const auto& op : operations.GetArray()) {
    std::string name = str(op["op"]);
    if (name == "insert") {
      json::Value record(op["record"], alloc);
      table.PushBack(record, alloc);
      ++affected;
    } else if (name == "update") {
      for (auto& record : table.GetArray())
        if (matches(record, op["filter"])) {
          merge(record, op["set"], alloc);
          ++affected;
        }
    } else if (name == "delete") {
      for (rapidjson::SizeType i = table.Size(); i-- > 0;)
        if (matches(table[i], op["filter"])) {
          table.Erase(table.Begin() + i);
          ++affected;
        }
    } else if (name == "upsert") {
      const json::Value* key = field(op, "key");
      std::string key_name = key && key->IsString() ? str(*key) : "id";
      const json::Value& incoming = op["record"];
      const json::Value* wanted = field(incoming, key_name.c_str());
      auto same_key = [&](const json::Value& record) {
        if (!record.IsObject()) return false;
        const json::Value* have = field(record, key_name.c_str());
        // As in Python's record.get(key) == value: two absent keys are equal.
        return have && wanted ? *have == *wanted : !have && !wanted;
      };
      auto it = std::find_if(table.Begin(), table.End(), same_key);
      if (it != table.End()) {
        merge(*it, incoming, alloc);
      } else {
        json::Value record(incoming, alloc);
        table.PushBack(record, alloc);
      }
      ++affected;
    }
  }
  return affected;
}

Status validate_path_ops(const json::Value& ops) {
  if (!ops.IsArray()) return fail(Errc::kInvalid, "'ops' must be an array");
  for (rapidjson::SizeType i = 0; i < ops.Size(); ++i) {
    const json::Value& op = ops[i];
    std::string at = "op " + std::to_string(i);
    if (!op.IsObject()) return fail(Errc::kInvalid, at + " is not an object");
    for (const auto& m : op.GetObject()) {
      std::string key = str(m.name);
      if (key != "op" && key != "path" && key != "value")
        return fail(Errc::kInvalid, at + " has an unknown key '" + key + "'");
    }
    const json::Value* kind = field(op, "op");
    const json::Value* path = field(op, "path");
    if (!kind || !kind->IsString()) return fail(Errc::kInvalid, at + " needs 'op'");
    if (!path || !path->IsString()) return fail(Errc::kInvalid, at + " needs 'path' as a JSONPath string");
    std::string name = str(*kind);
    if (name != "replace" && name != "add" && name != "remove")
      return fail(Errc::kInvalid, at + ": unknown op '" + name + "' (replace, add or remove)");
    if (name != "remove" && !field(op, "value")) return fail(Errc::kInvalid, at + " (" + name + ") needs 'value'");
    if (auto st = jsonpath_validate(str(*path)); !st) return st.fail_with(at);
  }
  return {};
}

Status apply_path_ops(json::Document& data, const json::Value& ops) {
  auto& alloc = data.GetAllocator();
  for (rapidjson::SizeType i = 0; i < ops.Size(); ++i) {
    const json::Value& op = ops[i];
    std::string kind = str(op["op"]), path = str(op["path"]);
    std::string at = "op " + std::to_string(i) + " (" + kind + " " + path + ")";
    auto found = jsonpath_locate(data, path);
    if (!found) return found.fail_with(at);
    auto& nodes = *found;
    bool root = std::any_of(nodes.begin(), nodes.end(), [](const JsonPathNode& n) { return !n.parent; });
    if (root) return fail(Errc::kInvalid, at + ": the root cannot be " + (kind == "add" ? "added to" : kind + "d"));
    // Matches are in document order; going backwards handles descendants before their
    // ancestors and later array elements before earlier ones, so positions stay valid.
    // The nodes point into `data`, which this function owns: writing through them is sound.
    if (kind == "replace") {
      if (nodes.empty()) return fail(Errc::kInvalid, at + ": the path matches nothing");
      for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
        const_cast<json::Value*>(it->value)->CopyFrom(op["value"], alloc);
    } else if (kind == "remove") {
      if (nodes.empty()) return fail(Errc::kInvalid, at + ": the path matches nothing");
      for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
        auto* parent = const_cast<json::Value*>(it->parent);
        if (parent->IsArray()) {
          parent->Erase(parent->Begin() + it->index);
        } else {
          auto m = parent->FindMember(json::Value(rapidjson::StringRef(it->member.data(), it->member.size())));
          if (m != parent->MemberEnd()) parent->EraseMember(m);
        }
      }
    } else if (!nodes.empty() && std::all_of(nodes.begin(), nodes.end(), [](auto& n) { return n.value->IsArray(); })) {
      for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
        json::Value v(op["value"], alloc);
        const_cast<json::Value*>(it->value)->PushBack(v, alloc);
      }
    } else {
      auto split = jsonpath_split_member(path);
      if (!split) return fail(Errc::kInvalid, at + ": add needs a path to an array or ending in a member name");
      auto parents = jsonpath_locate(data, split->first);
      if (!parents) return parents.fail_with(at);
      if (parents->empty()) return fail(Errc::kInvalid, at + ": '" + split->first + "' matches nothing");
      for (auto& p : *parents)
        if (!p.value->IsObject())
          return fail(Errc::kInvalid, at + ": '" + split->first + "' is not an object" +
                                          (p.value->IsArray() ? " (add to the array's own path to append)" : ""));
      for (auto it = parents->rbegin(); it != parents->rend(); ++it) {
        auto* obj = const_cast<json::Value*>(it->value);
        json::Value name(split->second.c_str(), static_cast<rapidjson::SizeType>(split->second.size()), alloc);
        auto m = obj->FindMember(name);
        if (m != obj->MemberEnd()) {
          m->value.CopyFrom(op["value"], alloc);
        } else {
          json::Value v(op["value"], alloc);
          obj->AddMember(name, v, alloc);
        }
      }
    }
  }
  return {};
}

}  // namespace forge::services
