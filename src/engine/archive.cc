// Archive endpoints.
#include "engine/archive.h"

#include "core/strings.h"
#include "engine/errors.h"

namespace forge::engine {

static std::string archive_path(std::string_view container, std::string_view path) {
  return "/containers/" + url_encode(container) + "/archive?path=" + url_encode(path);
}

Status put_archive(Client& c, std::string_view container, std::string_view dir, std::string tar) {
  auto resp = c.request(Method::kPut, archive_path(container, dir) + "&noOverwriteDirNonDir=true", std::move(tar),
                        "application/x-tar", Millis(300000));
  std::string what = "copying into '" + std::string(dir) + "' of container '" + std::string(container) + "'";
  if (!resp) return resp.fail_with(what);
  if (auto st = check_status(*resp, {200}, "PUT /containers/archive"); !st) return st.fail_with(what);
  return {};
}

Result<PathStat> decode_path_stat(std::string_view header) {
  auto raw = base64_decode(trim(header));
  if (!raw) return fail(Errc::kProtocol, "malformed X-Docker-Container-Path-Stat header");
  auto doc = json::parse(*raw, "path stat header");
  if (!doc) return doc.fail();
  PathStat s;
  s.name = json::get_string(*doc, "name");
  s.size = json::get_int(*doc, "size");
  s.mode = static_cast<std::uint32_t>(json::get_int(*doc, "mode"));
  s.mtime = json::get_string(*doc, "mtime");
  s.link_target = json::get_string(*doc, "linkTarget");
  return s;
}

Result<Archive> get_archive(Client& c, std::string_view container, std::string_view path) {
  std::string what = "copying '" + std::string(path) + "' out of container '" + std::string(container) + "'";
  auto resp = c.expect({200}, Method::kGet, archive_path(container, path), {}, Millis(300000));
  if (!resp) return resp.fail_with(what);
  Archive a;
  a.tar = std::move(resp->body);
  if (auto h = resp->header("x-docker-container-path-stat"); !h.empty()) {
    auto st = decode_path_stat(h);
    if (!st) return st.fail_with(what);
    a.stat = *st;
  }
  return a;
}

Result<PathStat> stat_path(Client& c, std::string_view container, std::string_view path) {
  std::string what = "stat of '" + std::string(path) + "' in container '" + std::string(container) + "'";
  auto resp = c.expect({200}, Method::kHead, archive_path(container, path));
  if (!resp) return resp.fail_with(what);
  auto st = decode_path_stat(resp->header("x-docker-container-path-stat"));
  if (!st) return st.fail_with(what);
  return st;
}

}  // namespace forge::engine
