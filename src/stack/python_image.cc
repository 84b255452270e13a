// Builds forgectl/python:local: debootstrap a Debian 13 minbase with python3 and pydantic into a scratch
// directory, import it FROM scratch as the base image, then add forgectl's python/ tree on top.
#include "stack/python_image.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "core/scope_guard.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "engine/images.h"
#include "engine/tar.h"
#include "stack/local_images.h"

namespace forge::stack {

namespace fs = std::filesystem;

namespace {

// Bump when the rootfs is assembled differently, so existing base images are rebuilt.
constexpr const char* kBaseLayout = "forgectl python-base layout 2";  // 2: nc → busybox

// Directories whose contents never go into the image: kernel and runtime mounts (Docker provides
// them), apt's downloads and lists (the image installs nothing), documentation and translations.
constexpr std::array kDropContents = {"dev",
                                      "proc",
                                      "sys",
                                      "run",
                                      "tmp",
                                      "var/tmp",
                                      "var/cache/apt",
                                      "var/lib/apt/lists",
                                      "usr/share/doc",
                                      "usr/share/man",
                                      "usr/share/info",
                                      "usr/share/locale"};

constexpr const char* kAgentPasswd = "agent:x:1000:1000:agent:/home/agent:/bin/bash\n";
constexpr const char* kAgentGroup = "agent:x:1000:\n";

bool dropped(const std::string& rel) {
  if (rel == "debootstrap" || starts_with(rel, "debootstrap/")) return true;  // left behind by a failed run
  for (const char* d : kDropContents)
    if (starts_with(rel, std::string(d) + "/")) return true;
  return false;
}

bool skipped_in_tree(const fs::path& p) {
  for (const auto& part : p)
    if (part == "__pycache__") return true;
  return p.extension() == ".pyc";
}

Result<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return fail(Errc::kIo, "cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The tree's entries (relative, sorted), without __pycache__ and *.pyc; symlinks are not followed.
Result<std::vector<fs::path>> tree_entries(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    fs::path rel = it->path().lexically_relative(root);
    if (skipped_in_tree(rel)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    out.push_back(rel);
  }
  if (ec) return fail(Errc::kIo, "reading " + root.string() + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

// Mount points strictly below `root`, deepest first (debootstrap mounts proc and sys while it runs and
// may leave them when it fails; a recursive delete must never walk into them).
std::vector<std::string> mounts_below(const std::string& root) {
  std::vector<std::string> out;
  std::ifstream m("/proc/self/mounts");
  std::string dev, point, rest;
  while (m >> dev >> point && std::getline(m, rest)) {
    std::string decoded;  // /proc/self/mounts escapes space, tab, newline and backslash as \ooo
    for (std::size_t i = 0; i < point.size(); ++i) {
      auto octal = [&](std::size_t k) { return k < point.size() && point[k] >= '0' && point[k] <= '7'; };
      if (point[i] == '\\' && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
        decoded += static_cast<char>((point[i + 1] - '0') * 64 + (point[i + 2] - '0') * 8 + (point[i + 3] - '0'));
        i += 3;
      } else {
        decoded += point[i];
      }
    }
    if (starts_with(decoded, root + "/")) out.push_back(decoded);
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

// Removes the scratch rootfs, after detaching anything mounted in it; leaves it when a mount stays.
void remove_scratch(const std::string& dir, const std::function<void(std::string_view)>& progress) {
  for (const auto& p : mounts_below(dir)) (void)::umount2(p.c_str(), MNT_DETACH);
  if (!mounts_below(dir).empty()) {
    if (progress) progress("leaving " + dir + " in place: something is still mounted inside it\n");
    return;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

std::string tail_lines(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!trim(l).empty()) lines.push_back(l);
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

Status run_debootstrap(const PythonImageOptions& o, const std::string& target,
                       const std::function<void(std::string_view)>& progress) {
  if (::access(o.debootstrap.c_str(), X_OK) != 0)
    return fail(Errc::kNotFound, "'" + o.debootstrap + "' is missing; install debootstrap (scripts/install-deps.sh)");
  if (::geteuid() != 0)
    return fail(Errc::kForbidden, "building " + std::string(kPythonBaseImage) + " runs debootstrap, which needs root");
  std::string include = "--include=";
  for (std::size_t i = 0; i < o.packages.size(); ++i) include += (i ? "," : "") + o.packages[i];
  std::vector<std::string> argv{o.debootstrap, "--variant=minbase", include, o.suite, target, o.debian_mirror};
  if (progress) progress("debootstrap --variant=minbase " + include + " " + o.suite + " " + o.debian_mirror + "\n");
  auto r = run_process(argv);
  if (!r) return r.fail_with("running debootstrap");
  if (r->exit_code != 0) {
    std::string log = tail_lines(r->out + r->err, 15);
    if (auto dlog = read_file(fs::path(target) / "debootstrap" / "debootstrap.log"); dlog)
      log += "--- debootstrap.log ---\n" + tail_lines(*dlog, 15);
    return fail(Errc::kIo, "debootstrap of " + o.suite + " from " + o.debian_mirror + " failed (exit code " +
                               std::to_string(r->exit_code) + "):\n" + log);
  }
  return {};
}

}  // namespace

Result<std::string> python_base_context(const std::string& rootfs) {
  engine::TarWriter tar;
  std::vector<Status> steps;
  steps.push_back(tar.add_file("Dockerfile",
                               "FROM scratch\n"
                               "COPY rootfs/ /\n"
                               "COPY --chown=1000:1000 owned/ /home/agent/\n"
                               "COPY --chown=1000:1000 owned/ /work/\n"
                               "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8\n"
                               "CMD [\"sleep\", \"2147483647\"]\n"));
  steps.push_back(tar.add_directory("owned", 0755));
  steps.push_back(tar.add_directory("rootfs", 0755));
  const fs::path root(rootfs);
  std::vector<fs::path> entries;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string rel = it->path().lexically_relative(root).generic_string();
    if (dropped(rel)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) it.disable_recursion_pending();
      continue;
    }
    entries.push_back(rel);
  }
  if (ec) return fail(Errc::kIo, "reading the rootfs " + rootfs + ": " + ec.message());
  std::sort(entries.begin(), entries.end());  // stable bytes for the same rootfs

  for (const auto& rel : entries) {
    fs::path host = root / rel;
    std::string name = "rootfs/" + rel.generic_string();
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0) return fail(Errc::kIo, "cannot stat " + host.string());
    unsigned mode = st.st_mode & 01777;
    if (S_ISDIR(st.st_mode)) {
      steps.push_back(tar.add_directory(name, mode));
    } else if (S_ISLNK(st.st_mode)) {
      std::error_code lec;
      auto target = fs::read_symlink(host, lec);
      if (lec) return fail(Errc::kIo, "cannot read the link " + host.string());
      steps.push_back(tar.add_symlink(name, target.string()));
    } else if (S_ISREG(st.st_mode)) {
      std::string g = rel.generic_string();
      bool account = g == "etc/passwd" || g == "etc/group";
      if (account || (st.st_mode & (S_ISUID | S_ISGID))) {
        auto content = read_file(host);
        if (!content) return content.fail();
        if (g == "etc/passwd") *content += kAgentPasswd;
        if (g == "etc/group") *content += kAgentGroup;
        steps.push_back(tar.add_file(name, *content, mode));
      } else {
        steps.push_back(tar.add_host_file(name, host.string()));
      }
    }  // devices, fifos and sockets stay out (Docker provides /dev)
    if (!steps.back()) break;
  }
  // forgectl's http_request and db tools run `nc` in the runner, as in its own runner image.
  for (const char* bb : {"usr/bin/busybox", "bin/busybox"})
    if (::access((root / bb).c_str(), X_OK) == 0 && ::access((root / "usr/local/bin/nc").c_str(), F_OK) != 0) {
      steps.push_back(tar.add_symlink("rootfs/usr/local/bin/nc", std::string("/") + bb));
      break;
    }
  for (const auto& s : steps)
    if (!s) return s.fail_with("assembling " + std::string(kPythonBaseImage));
  return tar.finish();
}

Result<std::string> python_image_context(const std::string& tree) {
  engine::TarWriter tar;
  std::vector<Status> steps;
  std::string dockerfile = "FROM " + std::string(kPythonBaseImage) + "\n";
  dockerfile += "COPY python/ " + std::string(kPythonTreeDir) + "/\n";
  dockerfile += "COPY forgectl.pth /usr/lib/python3/dist-packages/forgectl.pth\n";
  dockerfile += "ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1\n";
  dockerfile += "USER " + std::string(kPythonImageUser) + "\n";
  dockerfile += "WORKDIR /work\n";
  dockerfile += "CMD [\"sleep\", \"2147483647\"]\n";
  steps.push_back(tar.add_file("Dockerfile", dockerfile));
  // A .pth line puts the tree on every python3's sys.path: no PYTHONPATH for the integrator to set.
  steps.push_back(tar.add_file("forgectl.pth", std::string(kPythonTreeDir) + "\n"));
  steps.push_back(tar.add_directory("python", 0755));
  auto entries = tree_entries(tree);
  if (!entries) return entries.fail();
  for (const auto& rel : *entries) {
    fs::path host = fs::path(tree) / rel;
    std::string name = "python/" + rel.generic_string();
    std::error_code ec;
    if (fs::is_symlink(host, ec)) continue;  // the tree is plain files; a link could reach outside it
    if (fs::is_directory(host, ec))
      steps.push_back(tar.add_directory(name, 0755));
    else if (fs::is_regular_file(host, ec))
      steps.push_back(tar.add_host_file(name, host.string()));
  }
  for (const auto& s : steps)
    if (!s) return s.fail_with("assembling " + std::string(kPythonImage));
  return tar.finish();
}

namespace {

// The image when it exists and its content label is `key`: an up-to-date image is not rebuilt.
std::optional<engine::ImageInfo> image_with_content(engine::Client& c, const std::string& image,
                                                    const std::string& key) {
  auto info = engine::inspect_image(c, image);
  if (!info) return std::nullopt;
  auto it = info->labels.find(kContentLabel);
  if (it == info->labels.end() || it->second != key) return std::nullopt;
  return std::move(*info);
}

}  // namespace

Result<std::string> find_python_tree() {
  std::vector<fs::path> candidates;
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / "share" / "forgectl" / "python");
#ifdef FORGECTL_PYTHON_SOURCE_DIR
  candidates.emplace_back(FORGECTL_PYTHON_SOURCE_DIR);
#endif
  for (const auto& c : candidates)
    if (fs::is_directory(c / "tolokaforge", ec) && fs::is_directory(c / "forgectl_mcp", ec))
      return fs::weakly_canonical(c, ec).string();
  return fail(Errc::kNotFound,
              "cannot find forgectl's python/ tree (tolokaforge, forgectl_mcp, forgectl_checks): "
              "not installed beside forgectl, nor in the source tree it was built from");
}

Result<std::string> python_tree_digest(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(fs::path(dir) / "tolokaforge", ec))
    return fail(Errc::kNotFound, dir + " is not forgectl's python/ tree (it has no tolokaforge/)");
  auto entries = tree_entries(dir);
  if (!entries) return entries.fail();
  Sha256 h;
  for (const auto& rel : *entries) {
    fs::path host = fs::path(dir) / rel;
    if (fs::is_symlink(host, ec) || !fs::is_regular_file(host, ec)) continue;
    auto content = read_file(host);
    if (!content) return content.fail();
    std::string head = rel.generic_string() + '\0' + std::to_string(content->size()) + '\0';
    h.update(head);
    h.update(*content);
  }
  return h.hex_digest();
}

Result<std::string> python_base_key(const PythonImageOptions& o) {
  static const std::regex mirror(R"(https?://[^\s'"]+)"), name(R"([a-z0-9][a-z0-9+.-]*)");
  if (!std::regex_match(o.debian_mirror, mirror))
    return fail(Errc::kInvalid, "the Debian mirror must be an http:// or https:// URL, got '" + o.debian_mirror + "'");
  if (!std::regex_match(o.suite, name)) return fail(Errc::kInvalid, "'" + o.suite + "' is not a Debian suite name");
  if (o.packages.empty()) return fail(Errc::kInvalid, "the python image needs at least one package");
  std::string key =
      std::string(kBaseLayout) + "\nmirror=" + o.debian_mirror + "\nsuite=" + o.suite + "\nvariant=minbase\npackages=";
  for (const auto& p : o.packages) {
    if (!std::regex_match(p, name)) return fail(Errc::kInvalid, "'" + p + "' is not a Debian package name");
    key += p + ",";
  }
  return sha256_hex(key);
}

Result<PythonImageBuild> build_python_image(engine::Client& c, const PythonImageOptions& o,
                                            const std::function<void(std::string_view)>& progress) {
  auto base_key = python_base_key(o);
  if (!base_key) return base_key.fail_with("building " + o.tag);
  std::string tree = o.python_tree;
  if (tree.empty()) {
    auto found = find_python_tree();
    if (!found) return found.fail_with("building " + o.tag);
    tree = *found;
  }
  auto tree_key = python_tree_digest(tree);
  if (!tree_key) return tree_key.fail_with("building " + o.tag);
  auto context = python_image_context(tree);
  if (!context) return context.fail();
  // The final image's key covers its whole context (Dockerfile and tree) and the base it stands on.
  std::string image_key = sha256_hex(*base_key + "\n" + *tree_key + "\n" + sha256_hex(*context));

  PythonImageBuild out;
  if (auto info = image_with_content(c, o.tag, image_key)) {
    if (progress) progress(o.tag + " is up to date\n");
    out.id = info->id;
    return out;
  }

  if (!image_with_content(c, kPythonBaseImage, *base_key)) {
    // /var/tmp, not /tmp: debootstrap needs device nodes and exec, which a tmpfs /tmp (nodev,
    // often noexec) refuses; /var/tmp is on a disk filesystem on Debian's default layout.
    fs::path scratch_root = o.scratch_dir.empty() ? fs::path("/var/tmp") : fs::path(o.scratch_dir);
    std::string scratch = (scratch_root / ("forgectl-python-rootfs-" + random_hex(6))).string();
    std::error_code ec;
    fs::create_directories(scratch, ec);
    if (ec) return fail(Errc::kIo, "cannot create " + scratch + ": " + ec.message());
    ScopeGuard cleanup([&] { remove_scratch(scratch, progress); });
    if (auto st = run_debootstrap(o, scratch, progress); !st)
      return st.fail_with("building " + std::string(kPythonBaseImage));
    auto base_ctx = python_base_context(scratch);
    if (!base_ctx) return base_ctx.fail();
    engine::BuildSpec spec;
    spec.context_tar = std::move(*base_ctx);
    spec.tags = {kPythonBaseImage};
    spec.labels = {{kImageLabel, "python-base"}, {kContentLabel, *base_key}};
    auto id = engine::build_image(c, spec, progress);
    if (!id) return id.fail_with("building " + std::string(kPythonBaseImage));
    out.built_base = true;
  }

  engine::BuildSpec spec;
  spec.context_tar = std::move(*context);
  spec.tags = {o.tag};
  spec.labels = {{kImageLabel, "python"}, {kContentLabel, image_key}};
  auto id = engine::build_image(c, spec, progress);
  if (!id) return id.fail_with("building " + o.tag);
  out.id = *id;
  out.built_image = true;
  return out;
}

}  // namespace forge::stack
