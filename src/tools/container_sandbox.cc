// ContainerSandbox: Sandbox operations as helper protocol requests.
#include "tools/container_sandbox.h"

#include "core/strings.h"

namespace forge::tools {

namespace {

std::string short_name(const std::string& container) {
  bool hex = container.size() == 64 && container.find_first_not_of("0123456789abcdef") == std::string::npos;
  return hex ? container.substr(0, 12) : container;
}

EntryKind kind_from(std::string_view k) {
  if (k == "dir") return EntryKind::kDirectory;
  if (k == "symlink") return EntryKind::kSymlink;
  if (k == "file") return EntryKind::kFile;
  return EntryKind::kOther;
}

DirEntry entry_from(const json::Value& v) {
  DirEntry e;
  e.name = json::get_string(v, "name");
  e.kind = kind_from(json::get_string(v, "kind"));
  e.size = json::get_int(v, "size");
  e.mode = static_cast<unsigned>(json::get_int(v, "mode"));
  return e;
}

Result<std::string> bytes_field(const json::Value& v, const char* key) {
  auto b = base64_decode(json::get_string(v, key));
  if (!b) return fail(Errc::kProtocol, std::string("the helper's '") + key + "' is not base64");
  return std::move(*b);
}

}  // namespace

ContainerSandbox::ContainerSandbox(engine::Client& client, HelperChannelSpec spec)
    : channel_(client, std::move(spec)) {}

std::string ContainerSandbox::describe() const { return "container " + short_name(channel_.spec().container); }

Result<json::Document> ContainerSandbox::file_call(const std::string& body, const std::string& doing) {
  auto doc = channel_.call(body, Deadline::in(kFileOpTimeout));
  if (!doc) return doc.fail_with(doing);
  return doc;
}

Result<RunResult> ContainerSandbox::run(const RunRequest& req) {
  json::Writer w;
  w.begin_object().field("op", "run").field("argv", req.argv).field("env", req.env);
  if (!req.cwd.empty()) w.field("cwd", req.cwd);
  if (req.stdin_data) w.field("stdin", base64_encode(*req.stdin_data));
  w.field("timeout_ms", static_cast<std::int64_t>(req.timeout.count()));
  w.field("output_cap", static_cast<std::int64_t>(req.output_cap));
  w.end_object();
  const std::string doing = "running '" + (req.argv.empty() ? std::string() : req.argv[0]) + "' in " + describe();
  auto doc = channel_.call(w.take(), req.timeout.count() > 0 ? Deadline::in(req.timeout) : Deadline::never());
  if (!doc) return doc.fail_with(doing);
  RunResult r;
  auto out = bytes_field(*doc, "stdout");
  auto err = bytes_field(*doc, "stderr");
  if (!out || !err) return (out ? err : out).fail_with(doing);
  r.out = std::move(*out);
  r.err = std::move(*err);
  r.exit_code = static_cast<int>(json::get_int(*doc, "exit_code", -1));
  r.out_dropped = static_cast<std::uint64_t>(json::get_int(*doc, "stdout_dropped"));
  r.err_dropped = static_cast<std::uint64_t>(json::get_int(*doc, "stderr_dropped"));
  r.timed_out = json::get_bool(*doc, "timed_out");
  r.elapsed = Millis(json::get_int(*doc, "elapsed_ms"));
  return r;
}

Result<FileChunk> ContainerSandbox::read_file(const std::string& rel, std::int64_t offset, std::int64_t limit) {
  json::Writer w;
  w.begin_object().field("op", "read").field("path", rel).field("offset", offset).field("limit", limit).end_object();
  const std::string doing = "reading '" + rel + "' in " + describe();
  auto doc = file_call(w.take(), doing);
  if (!doc) return doc.fail();
  auto data = bytes_field(*doc, "data");
  if (!data) return data.fail_with(doing);
  return FileChunk{std::move(*data), json::get_int(*doc, "size")};
}

Status ContainerSandbox::write_file(const std::string& rel, std::string_view data, bool append) {
  json::Writer w;
  w.begin_object().field("op", "write").field("path", rel).field("data", base64_encode(data)).field("append", append);
  w.end_object();
  auto doc = file_call(w.take(), "writing '" + rel + "' in " + describe());
  if (!doc) return doc.fail();
  return {};
}

Result<std::vector<DirEntry>> ContainerSandbox::list_dir(const std::string& rel) {
  json::Writer w;
  w.begin_object().field("op", "list").field("path", rel).end_object();
  auto doc = file_call(w.take(), "listing '" + rel + "' in " + describe());
  if (!doc) return doc.fail();
  std::vector<DirEntry> out;
  if (const json::Value* arr = json::get_array(*doc, "entries"))
    for (const auto& v : arr->GetArray()) out.push_back(entry_from(v));
  return out;
}

Result<DirEntry> ContainerSandbox::stat(const std::string& rel) {
  json::Writer w;
  w.begin_object().field("op", "stat").field("path", rel).end_object();
  const std::string doing = "inspecting '" + rel + "' in " + describe();
  auto doc = file_call(w.take(), doing);
  if (!doc) return doc.fail();
  const json::Value* e = json::get_object(*doc, "entry");
  if (!e) return fail(Errc::kProtocol, doing + ": the helper's answer has no entry");
  return entry_from(*e);
}

Status ContainerSandbox::move(const std::string& from_rel, const std::string& to_rel) {
  json::Writer w;
  w.begin_object().field("op", "move").field("from", from_rel).field("to", to_rel).end_object();
  auto doc = file_call(w.take(), "moving '" + from_rel + "' to '" + to_rel + "' in " + describe());
  if (!doc) return doc.fail();
  return {};
}

Status ContainerSandbox::copy(const std::string& from_rel, const std::string& to_rel) {
  json::Writer w;
  w.begin_object().field("op", "copy").field("from", from_rel).field("to", to_rel).end_object();
  auto doc = file_call(w.take(), "copying '" + from_rel + "' to '" + to_rel + "' in " + describe());
  if (!doc) return doc.fail();
  return {};
}

Status ContainerSandbox::remove(const std::string& rel, bool recursive) {
  json::Writer w;
  w.begin_object().field("op", "remove").field("path", rel).field("recursive", recursive).end_object();
  auto doc = file_call(w.take(), "removing '" + rel + "' in " + describe());
  if (!doc) return doc.fail();
  return {};
}

Result<std::vector<GrepMatch>> ContainerSandbox::grep(const std::string& rel, const std::string& pattern,
                                                      int max_matches) {
  json::Writer w;
  w.begin_object().field("op", "grep").field("path", rel).field("pattern", pattern).field("max_matches", max_matches);
  w.end_object();
  auto doc = file_call(w.take(), "searching '" + rel + "' in " + describe());
  if (!doc) return doc.fail();
  std::vector<GrepMatch> out;
  if (const json::Value* arr = json::get_array(*doc, "matches"))
    for (const auto& v : arr->GetArray())
      out.push_back(GrepMatch{json::get_string(v, "path"), static_cast<int>(json::get_int(v, "line")),
                              json::get_string(v, "text")});
  return out;
}

}  // namespace forge::tools
