// `forgectl version [--json]`: this binary's version, the Docker Engine API version it speaks, and
// the exec helper's version (the helper found as `run` would find it).
#include <memory>
#include <ostream>

#include "cli/app.h"
#include "cli/verbs.h"
#include "core/json.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "engine/client.h"
#include "stack/local_images.h"

namespace forge::cli {

namespace {

struct Versions {
  std::string forgectl = forgectl_version();
  std::string api = engine::kMinApiVersion;
  std::string api_override;  // DOCKER_API_VERSION
  std::string helper, helper_path, helper_error;
};

Versions versions(const Context& ctx) {
  Versions v;
  if (auto o = ctx.host.env("DOCKER_API_VERSION"); o && !o->empty()) v.api_override = *o;
  auto path = stack::find_exec_helper(ctx.host.exec_helper);
  if (!path) {
    v.helper_error = path.error().what();
    return v;
  }
  v.helper_path = *path;
  auto r = run_process({*path, "--version"});
  if (!r || r->exit_code != 0)
    v.helper_error = r ? trim(r->err) : r.error().what();
  else
    v.helper = trim(r->out);
  return v;
}

}  // namespace

void add_version(Command app, Context& ctx, int* rc) {
  auto as_json = std::make_shared<bool>(false);
  auto cmd = app.subcommand("version", "Print forgectl's version, the Docker API version it speaks and the helper's");
  cmd.flag("--json", *as_json, "print one JSON document");
  cmd.on_run([&ctx, rc, as_json] {
    Versions v = versions(ctx);
    if (*as_json) {
      json::Writer w;
      w.begin_object()
          .field("forgectl", v.forgectl)
          .field("docker_api", v.api)
          .field("docker_api_override", v.api_override);
      w.field("helper", v.helper)
          .field("helper_path", v.helper_path)
          .field("helper_error", v.helper_error)
          .end_object();
      ctx.out << w.take() << '\n';
    } else {
      ctx.out << "forgectl " << v.forgectl << "\ndocker engine api: v" << v.api
              << (v.api_override.empty() ? " (and newer daemons through it)"
                                         : " (DOCKER_API_VERSION=" + v.api_override + ")")
              << "\nexec helper: ";
      if (v.helper_error.empty())
        ctx.out << v.helper << " (" << v.helper_path << ")\n";
      else
        ctx.out << "not found: " << v.helper_error << '\n';
    }
    *rc = kExitOk;
  });
}

}  // namespace forge::cli
