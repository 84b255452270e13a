// The json-db portal's file, put into mock-web's container by the archive API.
#include "trial/portal_use.h"

#include "core/service_token.h"
#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/tar.h"
#include "core/portal_config.h"

namespace forge::trial {

Status open_portal(engine::Client& c, const stack::UpResult& up, const std::string& browser,
                   const std::string& control_token, const std::string& trial_id) {
  auto web = up.containers.find("mock-web");
  if (web == up.containers.end() || !up.containers.count("json-db")) return {};
  const std::string what = "opening mock-web's json-db portal";
  auto info = engine::inspect_container(c, browser);
  if (!info) return info.fail_with(what);
  PortalConfig p;
  // The browser sits on the runner's first network only (browser_container_spec), beside mock-web.
  for (const auto& [name, ep] : info->networks)
    if (!ep.ip_address.empty()) p.browser = ep.ip_address;
  if (p.browser.empty()) return fail(Errc::kNotFound, what + ": the browser container has no network address");
  p.trial = trial_id;
  p.read_token = agent_token(control_token, trial_id, TokenPermission::kRead);
  p.write_token = agent_token(control_token, trial_id, TokenPermission::kWrite);
  engine::TarWriter tar;
  engine::TarEntry e;
  e.path = std::string(kPortalFile).substr(std::string("/srv/").size());
  e.content = portal_config_json(p);
  // mock-web's own user only: the tokens are for its forwards, nobody else's.
  e.mode = 0400;
  e.uid = e.gid = 65534;
  if (auto st = tar.add_entry(e); !st) return st.fail_with(what);
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail_with(what);
  if (auto st = engine::put_archive(c, web->second, "/srv", std::move(*bytes)); !st) return st.fail_with(what);
  return {};
}

}  // namespace forge::trial
