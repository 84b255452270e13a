// bash and grep_workspace: commands in the sandbox under the tool's deadline.
#include <fnmatch.h>

#include "tools/builtin_tools.h"
#include "tools/workspace_path.h"

namespace forge::tools {

namespace {

std::string dropped_note(const char* stream, std::uint64_t n) {
  return n ? "\n[" + std::string(stream) + " truncated: " + std::to_string(n) + " bytes omitted]" : "";
}

}  // namespace

std::shared_ptr<Tool> bash_tool(const BuiltinOptions& o) {
  auto sb = o.sandbox;
  auto env = o.env;
  return std::make_shared<FunctionTool>(
      ToolSpec{"bash", "Run a shell command in the workspace (/work). Output is stdout, then stderr, then the exit code when it is not 0.",
               R"({"type":"object","properties":{"command":{"type":"string","minLength":1,"description":"the command line, run with sh -c"}},"required":["command"],"additionalProperties":false})"},
      [sb, env](const json::Value& a, const CallContext& ctx) -> Result<std::string> {
        RunRequest req;
        req.argv = {"sh", "-c", json::get_string(a, "command")};
        req.env = env;
        req.timeout = ctx.deadline.remaining();
        auto r = sb->run(req);
        if (!r) return r.fail();
        if (r->timed_out) return fail(Errc::kTimeout, "the command was killed at its deadline");
        std::string out = r->out + dropped_note("stdout", r->out_dropped);
        if (!r->err.empty() || r->err_dropped) out += (out.empty() ? "" : "\n") + std::string("[stderr]\n") + r->err + dropped_note("stderr", r->err_dropped);
        if (r->exit_code != 0) out += (out.empty() ? "" : "\n") + std::string("[exit code: ") + std::to_string(r->exit_code) + "]";
        return out;
      });
}

std::shared_ptr<Tool> grep_tool(const BuiltinOptions& o) {
  auto sb = o.sandbox;
  return std::make_shared<FunctionTool>(
      ToolSpec{"grep_workspace", "Search the workspace's text files with an extended regular expression. Returns path:line:text, at most 200 matches.",
               R"({"type":"object","properties":{"pattern":{"type":"string","minLength":1},"path":{"type":"string","description":"directory to search; the workspace by default"},"file_glob":{"type":"string","description":"only files whose name matches, e.g. *.py"}},"required":["pattern"],"additionalProperties":false})"},
      [sb](const json::Value& a, const CallContext&) -> Result<std::string> {
        auto rel = workspace_relative(json::get_string(a, "path"), sb->workspace());
        if (!rel) return rel.fail();
        std::string glob = json::get_string(a, "file_glob");
        constexpr int kCap = 200;
        // One more than shown, so "more than 200" is known rather than guessed; with a glob, room for
        // the matches the glob will drop.
        auto matches = sb->grep(*rel, json::get_string(a, "pattern"), glob.empty() ? kCap + 1 : kCap * 20);
        if (!matches) return matches.fail();
        std::string out;
        int n = 0;
        for (const auto& m : *matches) {
          std::string base = m.path.substr(m.path.rfind('/') + 1);
          if (!glob.empty() && ::fnmatch(glob.c_str(), base.c_str(), 0) != 0 && ::fnmatch(glob.c_str(), m.path.c_str(), 0) != 0) continue;
          if (n++ == kCap) {
            out += "[more than " + std::to_string(kCap) + " matches; narrow the pattern or the path]\n";
            break;
          }
          out += m.path + ":" + std::to_string(m.line) + ":" + m.text + "\n";
        }
        return out.empty() ? std::string("(no matches)") : out;
      });
}

std::vector<std::string> builtin_tool_names() {
  return {"bash",          "read_file",    "write_file", "append_file", "list_dir",
          "replace_lines", "move_file",    "copy_file",  "delete_file", "grep_workspace",
          "calculator",    "http_request", "db_query",   "db_update",   "search_kb",
          "browser"};
}

}  // namespace forge::tools
