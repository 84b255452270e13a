// Parsing forgectl-exec's arguments: a table of options and the modes each belongs to.
#include "helper/cli.h"

#include <sys/un.h>

#include <algorithm>
#include <set>

namespace forge::helper {

const char kUsage[] =
    "usage: forgectl-exec [--timeout-ms N] [--token T] [--as UID:GID [--groups G,...]] -- CMD [ARGS...]\n"
    "       forgectl-exec --serve --root DIR [--token T] [--as UID:GID [--groups G,...]]\n"
    "       forgectl-exec --kill-token T [--as UID:GID [--groups G,...]]\n"
    "       forgectl-exec --as-agent-server SOCKET --as UID:GID [--groups G,...] --allow-uid UID\n"
    "                     [--timeout-ms N] [--max-children N] [--token T]\n"
    "       forgectl-exec --as-agent SOCKET [--cwd DIR] [--timeout-ms N] -- CMD [ARGS...]\n"
    "       forgectl-exec --kill-all [--as UID:GID]\n"
    "       forgectl-exec --version\n";

namespace {

constexpr unsigned kRun = 1, kVersion = 2, kKill = 4, kServe = 8, kServer = 16, kClient = 32, kKillAll = 64;
constexpr unsigned kDropModes = kRun | kKill | kServe | kServer | kKillAll;

struct OptionDef {
  const char* name;
  bool takes_value;
  unsigned modes;    // where the option may appear
  unsigned selects;  // non-zero: the option names the mode
};

constexpr OptionDef kOptions[] = {
    {"--version", false, kVersion, kVersion},
    {"--kill-token", true, kKill, kKill},
    {"--kill-all", false, kKillAll, kKillAll},
    {"--serve", false, kServe, kServe},
    {"--as-agent-server", true, kServer, kServer},
    {"--as-agent", true, kClient, kClient},
    {"--timeout-ms", true, kRun | kServer | kClient, 0},
    {"--token", true, kRun | kServe | kServer, 0},  // the server's: for --kill-token
    {"--root", true, kServe, 0},
    {"--cwd", true, kClient, 0},
    {"--as", true, kDropModes, 0},
    {"--groups", true, kDropModes, 0},
    {"--allow-uid", true, kServer, 0},
    {"--max-children", true, kServer, 0},
};

const char* mode_name(unsigned m) {
  switch (m) {
    case kVersion:
      return "--version";
    case kKill:
      return "--kill-token";
    case kKillAll:
      return "--kill-all";
    case kServe:
      return "--serve";
    case kServer:
      return "--as-agent-server";
    case kClient:
      return "--as-agent";
    default:
      return "run mode (-- CMD)";
  }
}

Mode mode_of(unsigned m) {
  switch (m) {
    case kVersion:
      return Mode::kVersion;
    case kKill:
      return Mode::kKillToken;
    case kKillAll:
      return Mode::kKillAll;
    case kServe:
      return Mode::kServe;
    case kServer:
      return Mode::kAsAgentServer;
    case kClient:
      return Mode::kAsAgent;
    default:
      return Mode::kRun;
  }
}

bool fail(std::string* error, std::string message) {
  *error = std::move(message);
  return false;
}

bool parse_ms(const std::string& s, long long* out) {
  long long v = 0;
  if (s.empty() || s.size() > 19) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
    if (v > kMaxTimeoutMs) return false;
  }
  *out = v;
  return true;
}

bool socket_path_ok(const std::string& p, std::string* error) {
  if (p.empty() || p[0] != '/') return fail(error, "the socket path '" + p + "' is not absolute");
  if (p.size() >= sizeof(sockaddr_un{}.sun_path))
    return fail(error, "the socket path '" + p + "' is longer than " +
                           std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes");
  return true;
}

// One option's value into `o`; the option is known to belong to the mode.
bool apply(const std::string& name, const std::string& v, CommandLine* o, std::string* error) {
  if (v.empty()) return fail(error, "empty value for " + name);
  if (name == "--timeout-ms") {
    if (!parse_ms(v, &o->timeout_ms)) return fail(error, "invalid --timeout-ms value: " + v);
  } else if (name == "--token") {
    o->token = v;
  } else if (name == "--kill-token") {
    o->kill_token = v;
  } else if (name == "--root") {
    o->root = v;
  } else if (name == "--as-agent-server" || name == "--as-agent") {
    if (!socket_path_ok(v, error)) return false;
    o->socket = v;
  } else if (name == "--cwd") {
    if (v[0] != '/') return fail(error, "--cwd '" + v + "' is not absolute");
    o->cwd = v;
  } else if (name == "--as") {
    if (!parse_uid_gid(v, &o->as, error)) return fail(error, "--as: " + *error);
    o->drop = true;
  } else if (name == "--groups") {
    if (!parse_groups(v, &o->as.groups, error)) return fail(error, "--groups: " + *error);
  } else if (name == "--allow-uid") {
    unsigned id = 0;
    if (!parse_id(v, &id)) return fail(error, "--allow-uid '" + v + "' is not a uid");
    o->allow_uid = id;
    o->has_allow_uid = true;
  } else if (name == "--max-children") {
    long long n = 0;
    if (!parse_ms(v, &n) || n < 1 || n > kMaxMaxChildren)
      return fail(error, "--max-children must be 1 to " + std::to_string(kMaxMaxChildren) + ": " + v);
    o->max_children = static_cast<int>(n);
  }
  return true;
}

}  // namespace

bool parse_command_line(const std::vector<std::string>& args, CommandLine* out, std::string* error) {
  struct Given {
    const OptionDef* def;
    std::string value;
  };
  std::vector<Given> given;
  std::set<std::string> seen;
  unsigned mode = 0;
  bool dashdash = false;
  CommandLine o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      dashdash = true;
      o.cmd.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    const auto* def =
        std::find_if(std::begin(kOptions), std::end(kOptions), [&](const OptionDef& d) { return a == d.name; });
    if (def == std::end(kOptions)) return fail(error, "unknown argument: " + a);
    if (!seen.insert(a).second) return fail(error, a + " given twice");
    if (def->selects != 0) {
      if (mode != 0) return fail(error, a + " cannot be combined with " + mode_name(mode));
      mode = def->selects;
    }
    std::string value;
    if (def->takes_value) {
      if (i + 1 >= args.size()) return fail(error, "option requires a value: " + a);
      value = args[++i];
    }
    given.push_back({def, value});
  }
  if (mode == 0) mode = kRun;
  if (mode == kVersion && (given.size() != 1 || dashdash)) return fail(error, "--version must be used alone");
  for (const auto& g : given) {
    if ((g.def->modes & mode) == 0)
      return fail(error, std::string(g.def->name) + " is not an option of " + mode_name(mode));
    if (g.def->takes_value && !apply(g.def->name, g.value, &o, error)) return false;
  }
  const bool wants_cmd = mode == kRun || mode == kClient;
  if (wants_cmd && !dashdash) return fail(error, "missing '--' and command");
  if (wants_cmd && o.cmd.empty()) return fail(error, "missing command after '--'");
  if (wants_cmd && o.cmd[0].empty()) return fail(error, "empty command after '--'");
  if (!wants_cmd && dashdash) return fail(error, std::string("'--' and a command do not go with ") + mode_name(mode));
  if (seen.count("--groups") && !o.drop) return fail(error, "--groups needs --as UID:GID");
  if (mode == kServe && o.root.empty()) return fail(error, "--serve needs --root DIR");
  if (mode == kServer) {
    if (!o.drop) return fail(error, "--as-agent-server needs --as UID:GID (whom the commands run as)");
    if (!o.has_allow_uid) return fail(error, "--as-agent-server needs --allow-uid UID (who may send commands)");
    if (o.allow_uid == o.as.uid) return fail(error, "--allow-uid must differ from the --as uid");
  }
  o.mode = mode_of(mode);
  *out = std::move(o);
  return true;
}

}  // namespace forge::helper
