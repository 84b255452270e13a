// Assembling a FROM-scratch image's root filesystem from host files.
#include "stack/rootfs.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "core/strings.h"

namespace forge::stack {

namespace fs = std::filesystem;

Result<std::vector<std::string>> shared_libraries(const std::string& binary) {
  if (binary.find('\'') != std::string::npos) return fail(Errc::kInvalid, "cannot quote '" + binary + "' for ldd");
  std::string cmd = "ldd '" + binary + "' 2>&1";
  FILE* raw = ::popen(cmd.c_str(), "r");
  if (!raw) return fail(Errc::kUnsupported, "cannot run ldd (from libc-bin) on " + binary);
  std::unique_ptr<FILE, int (*)(FILE*)> p(raw, ::pclose);
  std::vector<std::string> libs;
  std::string output, missing;
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), buf.size(), p.get())) {
    std::string l = trim(buf.data());
    output += l + "\n";
    auto arrow = l.find("=>");
    std::string path = arrow == std::string::npos ? l : trim(l.substr(arrow + 2));
    path = path.substr(0, path.find(' '));
    if (path == "not")
      missing += (missing.empty() ? "" : ", ") + l.substr(0, l.find(' '));
    else if (starts_with(path, "/"))
      libs.push_back(path);
  }
  int status = ::pclose(p.release());
  if (!missing.empty()) return fail(Errc::kNotFound, binary + " needs libraries that are not installed: " + missing);
  if (status != 0) {
    if (output.find("not a dynamic executable") != std::string::npos) return std::vector<std::string>{};
    return fail(Errc::kIo, "ldd " + binary + " failed: " + trim(output));
  }
  return libs;
}

void RootfsBuilder::dir(const std::string& path, unsigned mode) {
  if (!dirs_.insert(path).second) return;
  parents(path);
  steps_.push_back(tar_.add_directory("rootfs" + path + "/", mode));
}

void RootfsBuilder::file(const std::string& path, const std::string& host_path) {
  parents(path);
  steps_.push_back(tar_.add_host_file("rootfs" + path, host_path));
}

void RootfsBuilder::text(const std::string& path, std::string_view content) {
  parents(path);
  steps_.push_back(tar_.add_file("rootfs" + path, content));
}

void RootfsBuilder::link(const std::string& path, const std::string& target) {
  parents(path);
  steps_.push_back(tar_.add_symlink("rootfs" + path, target));
}

void RootfsBuilder::tree(const std::string& path, const std::string& host_dir) {
  std::error_code ec, ignored;  // a dangling link is skipped, not an error
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(host_dir, ec), end; !ec && it != end; it.increment(ec))
    if (fs::is_regular_file(it->path(), ignored)) files.push_back(it->path().lexically_relative(host_dir).string());
  if (ec) steps_.push_back(fail(Errc::kIo, "reading " + host_dir + ": " + ec.message()));
  std::sort(files.begin(), files.end());
  dir(path);
  for (const auto& f : files) file(path + "/" + f, host_dir + "/" + f);
}

Status RootfsBuilder::status() const {
  for (const auto& st : steps_)
    if (!st) return st;
  return {};
}

void RootfsBuilder::parents(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) dir(path.substr(0, slash));
}

}  // namespace forge::stack
