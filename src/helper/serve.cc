// The helper protocol: request JSON → an operation → response JSON, and the framing loop.
#include "helper/serve.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "helper/base64.h"

namespace forge::helper {

namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;
constexpr std::int64_t kMaxOutputCap = 16 << 20;

// Reads the fields of one request; the first problem is kept and reported as "invalid".
class Fields {
 public:
  explicit Fields(const rapidjson::Value& obj) : obj_(obj) {}
  std::string str(const char* key, bool required = true) {
    auto it = obj_.FindMember(key);
    if (it == obj_.MemberEnd()) return missing(key, required), std::string();
    if (!it->value.IsString()) return wrong(key, "a string"), std::string();
    return std::string(it->value.GetString(), it->value.GetStringLength());
  }
  std::int64_t num(const char* key, std::int64_t def) {
    auto it = obj_.FindMember(key);
    if (it == obj_.MemberEnd()) return def;
    if (!it->value.IsInt64()) return wrong(key, "an integer"), def;
    return it->value.GetInt64();
  }
  bool flag(const char* key) {
    auto it = obj_.FindMember(key);
    if (it == obj_.MemberEnd()) return false;
    if (!it->value.IsBool()) return wrong(key, "a boolean"), false;
    return it->value.GetBool();
  }
  std::vector<std::string> strings(const char* key, bool required) {
    std::vector<std::string> out;
    auto it = obj_.FindMember(key);
    if (it == obj_.MemberEnd()) return missing(key, required), out;
    if (!it->value.IsArray()) return wrong(key, "an array of strings"), out;
    for (const auto& v : it->value.GetArray()) {
      if (!v.IsString()) return wrong(key, "an array of strings"), out;
      out.emplace_back(v.GetString(), v.GetStringLength());
    }
    return out;
  }
  bool has(const char* key) const { return obj_.HasMember(key); }
  std::string bytes(const char* key, bool required = true) {
    std::string out;
    if (!b64_decode(str(key, required), &out)) wrong(key, "base64");
    return out;
  }
  const OpStatus& status() const { return status_; }

 private:
  void missing(const char* key, bool required) {
    if (required) note(std::string("missing field '") + key + "'");
  }
  void wrong(const char* key, const char* what) { note(std::string("field '") + key + "' must be " + what); }
  void note(std::string m) {
    if (status_.ok()) status_ = op_error(OpCode::kInvalid, std::move(m));
  }
  const rapidjson::Value& obj_;
  OpStatus status_;
};

void write_entry(JsonWriter& w, const Entry& e) {
  w.StartObject();
  w.Key("name"), w.String(e.name);
  w.Key("kind"), w.String(entry_kind_name(e.kind));
  w.Key("size"), w.Int64(e.size);
  w.Key("mode"), w.Uint(e.mode);
  w.EndObject();
}

// Runs the request's operation, writing its result fields into `w` (after "id" and "ok").
OpStatus dispatch(const Root& root, const std::string& op, Fields& f, JsonWriter& w) {
  OpStatus st;
  if (op == "ping") {
    w.Key("version"), w.Int(kProtocolVersion);
    w.Key("pid"), w.Int(getpid());  // lets a test (or a doctor) name the helper's process
    w.Key("root"), w.String(root.path());
  } else if (op == "run") {
    RunSpec spec;
    spec.argv = f.strings("argv", true);
    spec.cwd = f.str("cwd", false);
    spec.env = f.strings("env", false);
    spec.has_stdin = f.has("stdin");
    spec.stdin_data = f.bytes("stdin", false);
    spec.timeout_ms = f.num("timeout_ms", 0);
    const std::int64_t cap = f.num("output_cap", 1 << 20);
    if (!f.status().ok()) return f.status();
    if (cap < 0 || cap > kMaxOutputCap || spec.timeout_ms < 0)
      return op_error(OpCode::kInvalid, "output_cap or timeout_ms out of range");
    spec.output_cap = static_cast<std::size_t>(cap);
    RunOutcome o;
    if (st = run(root, spec, &o); !st.ok()) return st;
    w.Key("exit_code"), w.Int(o.exit_code);
    w.Key("stdout"), w.String(b64_encode(o.out));
    w.Key("stderr"), w.String(b64_encode(o.err));
    w.Key("stdout_dropped"), w.Uint64(o.out_dropped);
    w.Key("stderr_dropped"), w.Uint64(o.err_dropped);
    w.Key("timed_out"), w.Bool(o.timed_out);
    w.Key("elapsed_ms"), w.Int64(o.elapsed_ms);
  } else if (op == "read") {
    std::string path = f.str("path");
    std::int64_t offset = f.num("offset", 0), limit = f.num("limit", kMaxReadLimit);
    if (!f.status().ok()) return f.status();
    Chunk c;
    if (st = read_file(root, path, offset, limit, &c); !st.ok()) return st;
    w.Key("data"), w.String(b64_encode(c.data));
    w.Key("size"), w.Int64(c.size);
  } else if (op == "write") {
    std::string path = f.str("path"), data = f.bytes("data");
    bool append = f.flag("append");
    if (!f.status().ok()) return f.status();
    st = write_file(root, path, data, append);
  } else if (op == "list" || op == "stat") {
    std::string path = f.str("path");
    if (!f.status().ok()) return f.status();
    if (op == "stat") {
      Entry e;
      if (st = stat_path(root, path, &e); !st.ok()) return st;
      w.Key("entry"), write_entry(w, e);
    } else {
      std::vector<Entry> entries;
      if (st = list_dir(root, path, &entries); !st.ok()) return st;
      w.Key("entries"), w.StartArray();
      for (const auto& e : entries) write_entry(w, e);
      w.EndArray();
    }
  } else if (op == "move" || op == "copy") {
    std::string from = f.str("from"), to = f.str("to");
    if (!f.status().ok()) return f.status();
    st = op == "move" ? move_path(root, from, to) : copy_path(root, from, to);
  } else if (op == "remove") {
    std::string path = f.str("path");
    bool recursive = f.flag("recursive");
    if (!f.status().ok()) return f.status();
    st = remove_path(root, path, recursive);
  } else if (op == "grep") {
    std::string path = f.str("path", false), pattern = f.str("pattern");
    std::int64_t max = f.num("max_matches", 100);
    if (!f.status().ok()) return f.status();
    if (max <= 0 || max > 100000) return op_error(OpCode::kInvalid, "max_matches out of range");
    std::vector<Match> matches;
    if (st = grep(root, path, pattern, static_cast<int>(max), &matches); !st.ok()) return st;
    w.Key("matches"), w.StartArray();
    for (const auto& m : matches) {
      w.StartObject();
      w.Key("path"), w.String(m.path);
      w.Key("line"), w.Int(m.line);
      w.Key("text"), w.String(m.text);
      w.EndObject();
    }
    w.EndArray();
  } else if (op == "symlink") {
    std::string target = f.str("target"), path = f.str("path");
    if (!f.status().ok()) return f.status();
    st = make_symlink(root, target, path);
  } else {
    return op_error(OpCode::kInvalid, "unknown op '" + op + "'");
  }
  return st;
}

std::string error_response(std::uint64_t id, const OpStatus& st) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("id"), w.Uint64(id);
  w.Key("ok"), w.Bool(false);
  w.Key("code"), w.String(op_code_name(st.code));
  w.Key("message"), w.String(st.message);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

bool read_full(int fd, char* p, std::size_t n, bool* eof_at_start) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (eof_at_start) *eof_at_start = r == 0 && got == 0;
      return false;
    }
    got += static_cast<std::size_t>(r);
  }
  return true;
}

bool write_full(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

bool handle_request(const Root& root, std::string_view request, std::string* response) {
  rapidjson::Document doc;
  doc.Parse(request.data(), request.size());
  if (doc.HasParseError() || !doc.IsObject()) return false;
  auto id_it = doc.FindMember("id");
  if (id_it == doc.MemberEnd() || !id_it->value.IsUint64()) return false;
  const std::uint64_t id = id_it->value.GetUint64();
  Fields f(doc);
  const std::string op = f.str("op");
  if (!f.status().ok()) return *response = error_response(id, f.status()), true;

  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("id"), w.Uint64(id);
  w.Key("ok"), w.Bool(true);
  const OpStatus st = dispatch(root, op, f, w);
  if (!st.ok()) return *response = error_response(id, st), true;
  w.EndObject();
  response->assign(buf.GetString(), buf.GetSize());
  return true;
}

int serve(const Root& root, int in_fd, int out_fd, Orphans orphans) {
  std::string body, response;
  for (;;) {
    unsigned char len_be[4];
    bool clean_eof = false;
    if (!read_full(in_fd, reinterpret_cast<char*>(len_be), 4, &clean_eof)) return clean_eof ? 0 : kExitMalformed;
    const std::uint32_t len =
        std::uint32_t{len_be[0]} << 24 | std::uint32_t{len_be[1]} << 16 | std::uint32_t{len_be[2]} << 8 | len_be[3];
    if (len > kMaxFrame) return kExitMalformed;  // cannot skip it safely: whatever follows is suspect
    body.resize(len);
    if (!read_full(in_fd, body.data(), len, nullptr)) return kExitMalformed;
    if (!handle_request(root, body, &response)) return kExitMalformed;
    const std::uint32_t n = static_cast<std::uint32_t>(response.size());
    const unsigned char head[4] = {static_cast<unsigned char>(n >> 24), static_cast<unsigned char>(n >> 16),
                                   static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n)};
    if (!write_full(out_fd, reinterpret_cast<const char*>(head), 4) || !write_full(out_fd, response.data(), n))
      return kExitMalformed;
    // Orphans of killed commands are re-parented to us (a subreaper in serve mode): reap them.
    if (orphans == Orphans::kReap)
      while (waitpid(-1, nullptr, WNOHANG) > 0) continue;
  }
}

}  // namespace forge::helper
