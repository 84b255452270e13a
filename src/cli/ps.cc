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

// A container's name in the listing: its compose service, else its role (grader, golden, …).
std::string service_of(const engine::ContainerSummary& ctr) {
  for (const char* k : {stack::kLabelService, stack::kLabelRole})
    if (auto it = ctr.labels.find(k); it != ctr.labels.end() && !it->second.empty()) return it->second;
  return ctr.id.substr(0, 12);
}

std::string label_or(const stack::StackObjects& s, const char* key, const char* none) {
  auto it = s.labels.find(key);
  return it != s.labels.end() ? it->second : none;
}

// The owner column: host:pid, marked when the stack is an orphan or names no owner at all.
std::string owner_text(const stack::StackObjects& s, stack::OrphanReason why) {
  auto owner = s.ownership.shown_owner();
  std::string text = owner ? owner->host + ":" + std::to_string(owner->pid) : "none";
  if (why == stack::OrphanReason::kUnowned) return text + " (unowned: " + stack::orphan_reason_text(why) + ")";
  if (why != stack::OrphanReason::kNone) text += " (orphan: " + std::string(stack::orphan_reason_text(why)) + ")";
  return text;
}

std::string states(const stack::StackObjects& s) {
  std::vector<std::string> parts;
  for (const auto& ctr : s.containers) {
    auto svc = service_of(ctr);
    std::string st = ctr.state;
    if (ctr.status.find("(healthy)") != std::string::npos) st += ",healthy";
    if (ctr.status.find("(unhealthy)") != std::string::npos) st += ",unhealthy";
    parts.push_back(svc + "=" + st);
  }
  if (!s.volumes.empty()) parts.push_back(std::to_string(s.volumes.size()) + " volume(s)");
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
        auto why = stack::orphan_reason(s, now);
        auto owner = s.ownership.shown_owner();
        w.field("policy", label_or(s, stack::kLabelPolicy, ""));
        w.field("mode", label_or(s, stack::kLabelMode, ""));
        w.field("run", label_or(s, stack::kLabelRun, ""));
        w.field("owner", owner ? owner->str() : "");
        w.field("created", s.created).field("lease_expires", static_cast<std::int64_t>(s.ownership.lease_expires));
        w.field("orphan", stack::is_orphan(why) ? stack::orphan_reason_text(why) : "");
        w.field("unowned", why == stack::OrphanReason::kUnowned);
        w.key("containers").begin_array();
        for (const auto& ctr : s.containers)
          w.begin_object()
              .field("id", ctr.id)
              .field("service", ctr.labels.count(stack::kLabelService) ? ctr.labels.at(stack::kLabelService) : "")
              .field("role", ctr.labels.count(stack::kLabelRole) ? ctr.labels.at(stack::kLabelRole) : "")
              .field("state", ctr.state)
              .field("status", ctr.status)
              .end_object();
        w.end_array().field("networks", static_cast<std::int64_t>(s.networks.size()));
        w.field("volumes", static_cast<std::int64_t>(s.volumes.size())).end_object();
      }
      w.end_array();
      ctx.out << w.take() << '\n';
    } else {
      ctx.out << "STACK\tPOLICY\tAGE\tOWNER\tCONTAINERS\n";
      for (const auto& [name, s] : *stacks) {
        ctx.out << name << '\t' << label_or(s, stack::kLabelPolicy, "unknown") << '\t' << age(s.created, now) << '\t'
                << owner_text(s, stack::orphan_reason(s, now)) << '\t' << states(s) << '\n';
      }
    }
    *rc = kExitOk;
  });
}

}  // namespace forge::cli
