// A Python tool server's files, process and state in a container.
#include "tools/python_server.h"

#include <filesystem>

#include "core/confined_dir.h"
#include "core/strings.h"
#include "engine/tar.h"
#include "manifest/python_server.h"
#include "manifest/task_dir.h"

namespace forge::tools {

namespace fs = std::filesystem;

Result<std::string> python_server_tar(const manifest::McpServerConfig& m, const std::string& top) {
  const std::string what = "copying the Python server's files (" + m.root + ")";
  auto root = ConfinedDir::open(m.root, "the server's directory");
  if (!root) return root.fail_with(what);
  engine::TarWriter tar;
  engine::TarEntry dir;
  dir.path = top + "/";
  dir.type = engine::EntryType::kDirectory;
  dir.mode = 0700;
  dir.uid = manifest::kServerUid;
  dir.gid = manifest::kServerGid;
  if (auto st = tar.add_entry(dir); !st) return st.fail_with(what);
  auto skip = [](const std::string& rel, EntryKind k) {
    return manifest::server_copy_skips(rel, k == EntryKind::kDirectory);
  };
  auto st = root->walk("", manifest::kTestsLimits, skip, [&](const TreeEntry& e) -> Status {
    engine::TarEntry meta;
    meta.path = (fs::path(top) / e.rel).generic_string();
    meta.uid = manifest::kServerUid;
    meta.gid = manifest::kServerGid;
    if (e.kind == EntryKind::kDirectory) {
      meta.path += "/";
      meta.type = engine::EntryType::kDirectory;
      meta.mode = 0700;
      return tar.add_entry(meta);
    }
    meta.mode = e.mode & 0700;  // the server's alone; setuid/setgid never copied
    return tar.add_fd(meta, e.fd);
  });
  if (!st) return st.fail_with(what);
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail_with(what);
  return std::move(*bytes);
}

std::vector<std::string> python_server_command(const std::string& script) {
  return {std::string(kIsolatedPython[0]), kIsolatedPython[1], "-u", "-m", "forgectl_mcp", script};
}

std::vector<std::string> python_server_env(const std::string& dir) {
  return {"HOME=" + dir, "TMPDIR=" + dir, std::string("PATH=") + kSystemPath, "LD_PRELOAD=", "LD_LIBRARY_PATH="};
}

Result<std::unique_ptr<McpSession>> start_python_server(engine::Client& c, const std::string& container,
                                                        const manifest::McpServerConfig& m, const std::string& dir,
                                                        Deadline deadline) {
  const fs::path script = fs::path(dir) / m.script;
  McpLaunch launch{container, python_server_command(script.string()), python_server_env(dir), manifest::kServerUser,
                   script.parent_path().string()};
  auto s = McpSession::start(c, launch, deadline);
  if (!s) return s.fail_with("starting the Python server " + m.script);
  return s;
}

Result<std::string> server_state(McpSession& s, Deadline deadline) {
  json::Document args(rapidjson::kObjectType);
  auto text = s.call_tool(kGetStateTool, args, deadline);
  if (!text) return text.fail_with("reading the Python server's state");
  json::Document doc;
  if (json::parse_document(doc, *text) || !doc.IsObject())
    return fail(Errc::kProtocol,
                "reading the Python server's state: " + std::string(kGetStateTool) + " did not answer a JSON object");
  return std::move(*text);
}

Status set_server_state(McpSession& s, const std::string& state_json, Deadline deadline) {
  json::Writer w;
  w.begin_object().field("state_json", state_json).end_object();
  auto args = json::parse(w.take(), "state arguments");
  if (!args) return args.fail();
  auto r = s.call_tool(kSetStateTool, *args, deadline);
  if (!r) return r.fail_with("seeding the Python server's state");
  return {};
}

bool is_internal_state_tool(std::string_view name) { return starts_with(name, "_tolokaforge_"); }

}  // namespace forge::tools
