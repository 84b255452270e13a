// `forgectl validate TASKS...`: strict checks of tasks and manifests, without Docker.
#include <memory>
#include <ostream>

#include "cli/verbs.h"
#include "manifest/environment_parse.h"
#include "policy/topology.h"

namespace forge::cli {

void add_validate(CLI::App& app, Context& ctx, int* rc) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("validate", "Check task directories and manifests strictly (file:line errors), without Docker");
  cmd->add_option("paths", *paths, "task directories, task.yaml files or environment manifests")->required();
  cmd->callback([&ctx, rc, paths] {
    int bad = 0;
    for (const auto& p : *paths) {
      auto env = manifest::load_environment(p);
      Status st = env ? Status{} : Status(env.fail());
      if (env) {
        // Planning catches what only the combination shows (reserved names, shadowed hosts).
        policy::PlanOptions o{"fg-validate-000000", {}, "proxy", [](const std::string&) { return std::optional<std::string>("x"); }};
        std::vector<policy::Ipv4Net> nets(policy::network_keys(env->manifest.network_policy).size(), policy::Ipv4Net{0x0ae70000, 28});
        auto plan = policy::plan_stack(*env, o, nets);
        if (!plan) st = plan.fail();
      }
      if (st) {
        ctx.out << "ok " << p << '\n';
      } else {
        ++bad;
        ctx.out << "invalid " << p << ":\n" << st.error().what() << '\n';
      }
    }
    *rc = bad ? kExitFailure : kExitOk;
  });
}

}  // namespace forge::cli
