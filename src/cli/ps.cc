// `forgectl ps`: the stacks on the daemon, with age, owner, policy and container states.
#include <ctime>
#include <memory>
#include <ostream>

#include "cli/verbs.h"
#include "core/json.h"
#include "core/strings.h"
#include "stack/inventory.h"

namespace forge::cli {

namespace {

std::string age(std::int64_t created, std::time_t now) {
  if (created <= 0) return "-";
  long long s = now - created;
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m";
  if (s < 172800) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

std::string states(const stack::StackObjects& s) {
  std::vector<std::string> parts;
  for (const auto& ctr : s.containers) {
    auto svc = ctr.labels.count(stack::kLabelService) ? ctr.labels.at(stack::kLabelService) : ctr.id.substr(0, 12);
    std::string st = ctr.state;
    if (ctr.status.find("(healthy)") != std::string::npos) st += ",healthy";
    if (ctr.status.find("(unhealthy)") != std::string::npos) st += ",unhealthy";
    parts.push_back(svc + "=" + st);
  }
  return join(parts, " ");
}

}  // namespace

void add_ps(Command app, Context& ctx, int* rc) {
  auto as_json = std::make_shared<bool>(false);
  auto cmd = app.subcommand("ps", "List forgectl stacks with age, owner, policy and container states");
  cmd.flag("--json", *as_json, "print one JSON document");
  cmd.on_run([&ctx, rc, as_json] {
    auto c = ctx.client();
    if (!c) {
      *rc = ctx.report(c.error());
      return;
    }
    auto stacks = stack::list_stacks(**c);
    if (!stacks) {
      *rc = ctx.report(stacks.error());
      return;
    }
    std::time_t now = std::time(nullptr);
    if (*as_json) {
      json::Writer w;
      w.begin_array();
      for (const auto& [name, s] : *stacks) {
        w.begin_object().field("name", name);
        w.field("policy", s.labels.count(stack::kLabelPolicy) ? s.labels.at(stack::kLabelPolicy) : "");
        w.field("owner", s.ownership.owner ? s.ownership.owner->str() : "");
        w.field("created", s.created).field("lease_expires", static_cast<std::int64_t>(s.ownership.lease_expires));
        w.field("orphan", stack::orphan_reason_text(stack::orphan_reason(s, now)));
        w.key("containers").begin_array();
        for (const auto& ctr : s.containers)
          w.begin_object()
              .field("id", ctr.id)
              .field("service", ctr.labels.count(stack::kLabelService) ? ctr.labels.at(stack::kLabelService) : "")
              .field("state", ctr.state)
              .field("status", ctr.status)
              .end_object();
        w.end_array().field("networks", static_cast<std::int64_t>(s.networks.size())).end_object();
      }
      w.end_array();
      ctx.out << w.take() << '\n';
    } else {
      ctx.out << "STACK\tPOLICY\tAGE\tOWNER\tCONTAINERS\n";
      for (const auto& [name, s] : *stacks) {
        std::string owner = s.ownership.owner ? s.ownership.owner->host + ":" + std::to_string(s.ownership.owner->pid) : "-";
        auto why = stack::orphan_reason(s, now);
        if (why != stack::OrphanReason::kNone)
          owner += " (orphan: " + std::string(stack::orphan_reason_text(why)) + ")";
        ctx.out << name << '\t' << (s.labels.count(stack::kLabelPolicy) ? s.labels.at(stack::kLabelPolicy) : "-") << '\t'
                << age(s.created, now) << '\t' << owner << '\t' << states(s) << '\n';
      }
    }
    *rc = kExitOk;
  });
}

}  // namespace forge::cli
