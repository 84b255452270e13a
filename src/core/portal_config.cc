// The json-db portal's file: JSON, bounded, every key checked.
#include "core/portal_config.h"

#include "core/json.h"

namespace forge {

std::string portal_config_json(const PortalConfig& c) {
  json::Writer w;
  w.begin_object().field("trial", c.trial).field("browser", c.browser).field("json_db_host", c.json_db_host);
  w.field("json_db_port", static_cast<int>(c.json_db_port)).field("read_token", c.read_token);
  return w.field("write_token", c.write_token).end_object().take();
}

Result<PortalConfig> parse_portal_config(std::string_view text) {
  auto doc = json::parse(text, "the json-db portal file", kMaxPortalFileBytes);
  if (!doc) return doc.fail();
  if (!doc->IsObject()) return fail(Errc::kInvalid, "the json-db portal file is not a JSON object");
  PortalConfig c;
  for (auto [key, into] : {std::pair<const char*, std::string*>{"trial", &c.trial}, {"browser", &c.browser},
                           {"json_db_host", &c.json_db_host}, {"read_token", &c.read_token},
                           {"write_token", &c.write_token}}) {
    if (!doc->HasMember(key) || !(*doc)[key].IsString())
      return fail(Errc::kInvalid, std::string("the json-db portal file: '") + key + "' must be a string");
    *into = json::get_string(*doc, key);
  }
  const std::int64_t port = json::get_int(*doc, "json_db_port", 0);
  if (port < 1 || port > 65535) return fail(Errc::kInvalid, "the json-db portal file: 'json_db_port' must be 1-65535");
  c.json_db_port = static_cast<std::uint16_t>(port);
  if (c.trial.empty() || c.browser.empty())
    return fail(Errc::kInvalid, "the json-db portal file: 'trial' and 'browser' may not be empty");
  return c;
}

}  // namespace forge
