// The file tools: read_file, write_file, append_file, list_dir, replace_lines, move_file,
// copy_file, delete_file. Paths are confined to the workspace twice: lexically here, and by the
// sandbox where the file is (symlinks).
#include <algorithm>

#include "tools/builtin_tools.h"
#include "tools/workspace_path.h"

namespace forge::tools {

namespace {

std::string str(const json::Value& args, const char* key) { return json::get_string(args, key); }

// The path argument `key`, confined; the error names it the way the model wrote it.
Result<std::string> rel_path(const Sandbox& sb, const json::Value& args, const char* key) {
  return workspace_relative(str(args, key), sb.workspace());
}

std::string shown(const json::Value& args, const char* key) { return "'" + str(args, key) + "'"; }

// What the model reads: what we were doing and what went wrong, without the sandbox's own context
// (container ids and the like mean nothing to it).
Unexpected model_error(const Error& e, const std::string& doing) { return fail(e.code, doing + ": " + e.message); }

ToolSpec spec(const char* name, const char* description, std::string properties, std::string required) {
  return {name, description,
          R"({"type":"object","properties":{)" + properties + R"(},"required":[)" + required +
              R"(],"additionalProperties":false})"};
}

constexpr const char* kPath = R"("path":{"type":"string","description":"file path, relative to the workspace or under /work"})";

Result<std::string> read_text(Sandbox& sb, const std::string& rel, std::size_t cap) {
  auto chunk = sb.read_file(rel, 0, static_cast<std::int64_t>(cap));
  if (!chunk) return chunk.fail();
  if (chunk->size > static_cast<std::int64_t>(cap))
    return fail(Errc::kInvalid, "file is " + std::to_string(chunk->size) + " bytes, more than the " + std::to_string(cap) +
                                    " this tool reads; use offset and limit, or grep_workspace");
  return std::move(chunk->data);
}

}  // namespace

std::vector<std::shared_ptr<Tool>> file_tools(const BuiltinOptions& o) {
  auto sb = o.sandbox;
  std::size_t cap = o.file_read_cap;
  std::vector<std::shared_ptr<Tool>> out;

  out.push_back(std::make_shared<FunctionTool>(
      spec("read_file", "Read a text file from the workspace, optionally a range of lines.",
           std::string(kPath) + R"(,"offset":{"type":"integer","minimum":1,"description":"first line to read, 1-based"},)"
                                R"("limit":{"type":"integer","minimum":1,"description":"how many lines to read"},)"
                                R"("with_line_numbers":{"type":"boolean","description":"prefix each line with its number"})",
           R"("path")"),
      [sb, cap](const json::Value& a, const CallContext&) -> Result<std::string> {
        auto rel = rel_path(*sb, a, "path");
        if (!rel) return rel.fail();
        auto text = read_text(*sb, *rel, cap);
        if (!text) return model_error(text.error(), "reading " + shown(a, "path"));
        std::int64_t first = json::get_int(a, "offset", 1), limit = json::get_int(a, "limit", 0);
        bool numbers = json::get_bool(a, "with_line_numbers", false);
        if (first == 1 && limit == 0 && !numbers) return std::move(*text);
        std::string out;
        std::int64_t line = 1;
        std::size_t pos = 0;
        while (pos < text->size() && (limit == 0 || line < first + limit)) {
          std::size_t nl = text->find('\n', pos);
          std::size_t end = nl == std::string::npos ? text->size() : nl + 1;
          if (line >= first) {
            if (numbers) out += std::to_string(line) + "\t";
            out.append(*text, pos, end - pos);
          }
          pos = end;
          ++line;
        }
        return out;
      }));

  auto writer = [sb](bool append) {
    return [sb, append](const json::Value& a, const CallContext&) -> Result<std::string> {
      auto rel = rel_path(*sb, a, "path");
      if (!rel) return rel.fail();
      if (rel->empty()) return fail(Errc::kInvalid, "path is the workspace itself, not a file");
      std::string content = str(a, "content");
      if (auto st = sb->write_file(*rel, content, append); !st) return model_error(st.error(), "writing " + shown(a, "path"));
      return std::string(append ? "Appended " : "File written successfully: ") + str(a, "path") + " (" +
             std::to_string(content.size()) + " bytes)";
    };
  };
  std::string content = std::string(kPath) + R"(,"content":{"type":"string","description":"the text to write"})";
  out.push_back(std::make_shared<FunctionTool>(
      spec("write_file", "Create or overwrite a file in the workspace (parent directories are created).", content,
           R"("path","content")"),
      writer(false)));
  out.push_back(std::make_shared<FunctionTool>(
      spec("append_file", "Append text to a file in the workspace (created if missing).", content, R"("path","content")"),
      writer(true)));

  out.push_back(std::make_shared<FunctionTool>(
      spec("list_dir", "List a directory of the workspace.",
           R"("path":{"type":"string","description":"directory, relative to the workspace; '.' for the workspace"})", ""),
      [sb](const json::Value& a, const CallContext&) -> Result<std::string> {
        auto rel = rel_path(*sb, a, "path");
        if (!rel) return rel.fail();
        auto entries = sb->list_dir(*rel);
        if (!entries) return model_error(entries.error(), "listing " + (str(a, "path").empty() ? std::string("'.'") : shown(a, "path")));
        if (entries->empty()) return std::string("(empty directory)");
        std::sort(entries->begin(), entries->end(), [](const DirEntry& x, const DirEntry& y) { return x.name < y.name; });
        std::string out;
        for (const auto& e : *entries) {
          const char* kind = e.kind == EntryKind::kDirectory ? "dir" : e.kind == EntryKind::kSymlink ? "link" : "file";
          out += std::string(kind) + ": " + e.name + (e.kind == EntryKind::kFile ? " (" + std::to_string(e.size) + " bytes)" : "") + "\n";
        }
        return out;
      }));

  out.push_back(std::make_shared<FunctionTool>(
      spec("replace_lines", "Replace text in a file; old_text must occur exactly once.",
           std::string(kPath) + R"(,"old_text":{"type":"string","minLength":1},"new_text":{"type":"string"})",
           R"("path","old_text","new_text")"),
      [sb, cap](const json::Value& a, const CallContext&) -> Result<std::string> {
        auto rel = rel_path(*sb, a, "path");
        if (!rel) return rel.fail();
        auto text = read_text(*sb, *rel, cap);
        if (!text) return model_error(text.error(), "reading " + shown(a, "path"));
        std::string old_text = str(a, "old_text");
        std::size_t count = 0, at = std::string::npos;
        for (std::size_t p = text->find(old_text); p != std::string::npos; p = text->find(old_text, p + 1)) {
          if (count++ == 0) at = p;
        }
        if (count != 1)
          return fail(Errc::kInvalid, "old_text occurs " + std::to_string(count) + " times in " + shown(a, "path") +
                                          "; it must occur exactly once");
        text->replace(at, old_text.size(), str(a, "new_text"));
        if (auto st = sb->write_file(*rel, *text, false); !st) return model_error(st.error(), "writing " + shown(a, "path"));
        return "Replaced 1 occurrence in " + str(a, "path");
      }));

  auto two_paths = [sb](const char* verb, bool copy) {
    return [sb, verb, copy](const json::Value& a, const CallContext&) -> Result<std::string> {
      auto from = rel_path(*sb, a, "source");
      if (!from) return from.fail();
      auto to = rel_path(*sb, a, "destination");
      if (!to) return to.fail();
      if (from->empty() || to->empty()) return fail(Errc::kInvalid, "source and destination must be inside the workspace, not it");
      auto st = copy ? sb->copy(*from, *to) : sb->move(*from, *to);
      if (!st) return model_error(st.error(), std::string(verb) + " " + shown(a, "source"));
      return std::string(copy ? "Copied " : "Moved ") + str(a, "source") + " to " + str(a, "destination");
    };
  };
  std::string src_dst = R"("source":{"type":"string"},"destination":{"type":"string"})";
  out.push_back(std::make_shared<FunctionTool>(
      spec("move_file", "Move or rename a file or directory within the workspace.", src_dst, R"("source","destination")"),
      two_paths("moving", false)));
  out.push_back(std::make_shared<FunctionTool>(
      spec("copy_file", "Copy a file or directory within the workspace.", src_dst, R"("source","destination")"),
      two_paths("copying", true)));

  out.push_back(std::make_shared<FunctionTool>(
      spec("delete_file", "Delete a file or an empty directory in the workspace.", kPath, R"("path")"),
      [sb](const json::Value& a, const CallContext&) -> Result<std::string> {
        auto rel = rel_path(*sb, a, "path");
        if (!rel) return rel.fail();
        if (rel->empty()) return fail(Errc::kInvalid, "the workspace itself cannot be deleted");
        if (auto st = sb->remove(*rel, false); !st) return model_error(st.error(), "deleting " + shown(a, "path"));
        return "Deleted " + str(a, "path");
      }));
  return out;
}

}  // namespace forge::tools
