// forgectl/browser:local: Debian's chromium-headless-shell, FROM scratch, for the `browser` tool.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "engine/client.h"

namespace forge::stack {

inline constexpr const char* kBrowserImage = "forgectl/browser:local";
// Where the browser binary sits in the image (the host's path, unchanged).
inline constexpr const char* kBrowserBinary = "/usr/lib/chromium/chromium-headless-shell";
// The uid the browser runs as (nobody); its profile and caches live in the container's /tmp.
inline constexpr const char* kBrowserUser = "65534:65534";

// Host files the image is made of (scripts/install-deps.sh installs the packages).
struct BrowserSources {
  std::string chromium_dir = "/usr/lib/chromium";  // chromium-headless-shell + chromium-common
  std::string binary = kBrowserBinary;
  std::string busybox = "/bin/busybox";  // sh to wire the DevTools pipe, sleep as PID 1
  std::string lib_dir = "/usr/lib/x86_64-linux-gnu";
  // NSS modules Chromium dlopens (ldd does not list them): without them no TLS and no cert store.
  std::vector<std::string> nss_modules = {"libsoftokn3.so", "libfreebl3.so", "libfreeblpriv3.so", "libnssckbi.so",
                                          "libnssdbm3.so"};
  std::string fontconfig_dir = "/etc/fonts";
  std::vector<std::string> font_dirs = {"/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/truetype/liberation"};
};

// The image's inputs: every host file with its size and modification time, and the Dockerfile.
// A changed package changes the key; the image is rebuilt only then.
struct BrowserInputs {
  std::vector<std::pair<std::string, std::string>> files;  // image path → host path
  std::vector<std::string> applets;                        // busybox links in /bin
  std::string dockerfile;
};
Result<BrowserInputs> browser_inputs(const BrowserSources& src);
// Hex SHA-256 over the inputs' paths, sizes and mtimes (not their 300 MB of bytes).
Result<std::string> browser_content_key(const BrowserInputs& in);
Result<std::string> browser_build_context(const BrowserInputs& in);

struct BrowserImageBuild {
  std::string id;
  bool built = false;  // false: an image with the same content key was there
};
// Builds kBrowserImage unless an image with the same content label exists.
Result<BrowserImageBuild> build_browser_image(engine::Client& c, const BrowserSources& src,
                                              const std::function<void(std::string_view)>& progress = {});

}  // namespace forge::stack
