// Images forgectl builds itself from the host's Debian packages: no registry is ever needed.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/host_settings.h"
#include "engine/client.h"
#include "policy/topology.h"

namespace forge::stack {

// Tags of the local images. Image labels use their own key (io.forgectl.image), never the stack
// keys: containers inherit image labels, and teardown by label must not match foreign containers.
inline constexpr const char* kRunnerImage = "forgectl/runner:local";
inline constexpr const char* kSquidImage = "forgectl/squid:local";
inline constexpr const char* kServicesImage = "forgectl/services:local";
static_assert(std::string_view(kServicesImage) == policy::kResolverImage, "the resolver runs the services image");
inline constexpr const char* kImageLabel = "io.forgectl.image";
// On the images forgectl builds: the hex SHA-256 of what each was made from (its build context;
// for the python images, what python_image.h says). The same files give the same label on every
// host, where the image id also hashes the time of the build: trial keys use it (sweep/trial_key.h).
inline constexpr const char* kContentLabel = "io.forgectl.content";
// On forgectl's runner image and helper volume: the SHA-256 of the forgectl-exec they carry.
// Informational on the image (an image built FROM it inherits the label): runners always get
// the helper from forgectl's own read-only volume (helper_volume.h), never from an image.
inline constexpr const char* kHelperLabel = "io.forgectl.helper";

// Hex SHA-256 of the helper binary at `path`.
Result<std::string> helper_digest(const std::string& path);

struct ImageSources {
  std::string busybox = "/bin/busybox";  // Debian's busybox-static
  std::string exec_helper;               // forgectl-exec, built with forgectl (static)
};

// Finds forgectl-exec: `configured` (FORGECTL_EXEC_HELPER) when set, else beside the running
// binary (installed, or in the build tree).
Result<std::string> find_exec_helper(const std::string& configured);

// The runner image: FROM scratch, busybox and its applets in /bin, the exec helper at
// /.forgectl/exec (shadowed in runners by the helper volume; there for `docker run` by hand),
// /etc/passwd with root, agent (1000:1000, home /home/agent) and nobody, /tmp (1777), and /work
// and /home/agent owned by the agent. `up` runs it with a read-only root as the agent.
Result<std::string> runner_build_context(const ImageSources& src);
// Builds the runner image and returns its id.
Result<std::string> build_runner_image(engine::Client& c, const ImageSources& src,
                                       const std::function<void(std::string_view)>& progress = {});

// Host files the squid image is made of: Debian's squid and squid-langpack packages.
struct SquidSources {
  std::string squid = "/usr/sbin/squid";
  std::string unlinkd = "/usr/lib/squid/unlinkd";  // squid FATALs at startup without it, even unused
  std::string mime_conf = "/usr/share/squid/mime.conf";
  std::string errorpage_css = "/etc/squid/errorpage.css";
  // squid FATALs without its icon directory.
  std::string icons = "/usr/share/squid/icons";
  // The English ERR_* pages; squid falls back to them with error_directory unset.
  std::string error_templates = "/usr/share/squid-langpack/templates";
};

// The squid sidecar image (reference/egress.md §2): FROM scratch, squid and unlinkd with the
// shared libraries `ldd` lists, squid's data files, /etc/passwd with proxy (13), /etc/squid
// (where the config goes), and /run/squid, /var/spool/squid and /var/log/squid owned by 13:13.
// Runs as 13:13 with ENTRYPOINT squid -f /etc/squid/squid.conf -N. A missing file is kNotFound
// and says which package to install.
Result<std::string> squid_build_context(const SquidSources& src);
// Builds the squid image (tag kSquidImage, no network, nothing pulled) and returns its id.
Result<std::string> build_squid_image(engine::Client& c, const SquidSources& src,
                                      const std::function<void(std::string_view)>& progress = {});

// Host files the services image is made of.
struct ServicesSources {
  std::string forgectl;                  // the forgectl binary; empty: the running one (/proc/self/exe)
  std::string busybox = "/bin/busybox";  // sh and nc for the healthchecks
};

// The built-in services image (json-db, mock-web): FROM scratch, forgectl at
// /usr/local/bin/forgectl with the shared libraries `ldd` lists (the loader included), busybox
// with the few applets healthchecks use, /etc/passwd with nobody (65534), /tmp (1777) and an empty
// /srv/www for mock-web. Runs as 65534:65534; the compose command picks the service.
Result<std::string> services_build_context(const ServicesSources& src);
// The services image a forgectl binary runs, tagged by the binary's identity (its ELF build ID,
// else its SHA-256: "forgectl/services:<12 hex>"), so two forgectl builds sharing a daemon never run each other's
// json-db: `host.services_image` when set, else the running binary's.
std::string own_services_image(const HostSettings& host);
// The tag of the services image holding `forgectl_binary`.
Result<std::string> services_tag_for(const std::string& forgectl_binary);
// `ref` as a stack runs it: the built-in stacks' kServicesImage is this binary's own_services_image.
std::string effective_image(const std::string& ref, const HostSettings& host);

// Builds the services image (tags kServicesImage and services_tag_for the binary; nothing
// pulled) and returns its id.
Result<std::string> build_services_image(engine::Client& c, const ServicesSources& src,
                                         const std::function<void(std::string_view)>& progress = {});

// Which of the local images a caller needs. The services image is named by a digest of this
// forgectl binary (hashing a large binary without a build ID takes a second or more), so it is checked only when
// some task runs a built-in service.
struct LocalImageNeeds {
  bool runner = true, squid = true, services = true;
  bool browser = false;  // a task enables the `browser` tool (stack/browser_image.h)
};

// Builds whichever of the `needs` local images (runner, squid, services, browser) the daemon lacks, from
// this host's files and this forgectl binary; returns the tags it built (none: all were there).
Result<std::vector<std::string>> ensure_local_images(engine::Client& c, const HostSettings& host,
                                                     const std::function<void(std::string_view)>& progress = {},
                                                     LocalImageNeeds needs = {});

}  // namespace forge::stack
