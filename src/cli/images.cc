// `forgectl images build|ls`: the local images forgectl needs, built without any registry.
#include <memory>
#include <ostream>

#include "cli/verbs.h"
#include "core/json.h"
#include "core/strings.h"
#include "engine/images.h"
#include "stack/browser_image.h"
#include "stack/local_images.h"
#include "stack/python_image.h"

namespace forge::cli {

namespace {

struct BuildSources {
  std::string busybox, squid, forgectl, mirror;
};

}  // namespace

void add_images(Command app, Context& ctx, int* rc) {
  auto images = app.subcommand("images", "Build or list forgectl's local images");
  images.require_subcommand();

  auto build = images.subcommand("build", "Build the local images from the host's Debian packages (no registry)");
  auto from = std::make_shared<BuildSources>();
  build.option("--busybox", from->busybox, "busybox-static binary to put in the runner image")
      .default_val("/bin/busybox");
  build.option("--squid", from->squid, "squid binary to put in the egress proxy image").default_val("/usr/sbin/squid");
  build.option("--forgectl", from->forgectl, "forgectl binary to put in the services image (default: this one)")
      .default_val("");
  build.option("--debian-mirror", from->mirror, "Debian archive the python image's rootfs is debootstrapped from")
      .default_val("http://deb.debian.org/debian");
  build.on_run([&ctx, rc, from] {
    auto c = ctx.client();
    if (!c) {
      *rc = ctx.report(c.error());
      return;
    }
    auto helper = stack::find_exec_helper(ctx.host.exec_helper);
    if (!helper) {
      *rc = ctx.report(helper.error());
      return;
    }
    auto debug = [&ctx](std::string_view line) { ctx.log.debug(trim(line)); };
    stack::ImageSources src{from->busybox, *helper};
    auto id = stack::build_runner_image(**c, src, debug);
    if (!id) {
      *rc = ctx.report(id.error());
      return;
    }
    ctx.out << stack::kRunnerImage << ' ' << *id << '\n';
    stack::SquidSources squid_src;
    squid_src.squid = from->squid;
    auto squid_id = stack::build_squid_image(**c, squid_src, debug);
    if (!squid_id) {
      *rc = ctx.report(squid_id.error());
      return;
    }
    ctx.out << stack::kSquidImage << ' ' << *squid_id << '\n';
    stack::ServicesSources services_src{from->forgectl, from->busybox};
    auto services_id = stack::build_services_image(**c, services_src, debug);
    if (!services_id) {
      *rc = ctx.report(services_id.error());
      return;
    }
    ctx.out << stack::kServicesImage << ' ' << *services_id << '\n';
    auto browser = stack::build_browser_image(**c, {.busybox = from->busybox}, debug);
    if (!browser) {
      *rc = ctx.report(browser.error());
      return;
    }
    ctx.out << stack::kBrowserImage << ' ' << browser->id << '\n';
    auto python = stack::build_python_image(**c, {.debian_mirror = from->mirror}, debug);
    if (!python) {
      *rc = ctx.report(python.error());
      return;
    }
    ctx.out << stack::kPythonImage << ' ' << python->id << '\n';
    *rc = kExitOk;
  });

  auto ls = images.subcommand("ls", "List the images forgectl built");
  auto as_json = std::make_shared<bool>(false);
  ls.flag("--json", *as_json, "print one JSON document");
  ls.on_run([&ctx, rc, as_json] {
    auto c = ctx.client();
    if (!c) {
      *rc = ctx.report(c.error());
      return;
    }
    auto list = engine::list_images(**c, {{"label", {stack::kImageLabel}}});
    if (!list) {
      *rc = ctx.report(list.error());
      return;
    }
    if (*as_json) {
      json::Writer w;
      w.begin_array();
      for (const auto& img : *list) {
        std::string role = img.labels.count(stack::kImageLabel) ? img.labels.at(stack::kImageLabel) : "";
        w.begin_object().field("id", img.id).field("role", role).field("tags", img.repo_tags);
        w.field("size", static_cast<std::int64_t>(img.size)).end_object();
      }
      ctx.out << w.end_array().take() << '\n';
      *rc = kExitOk;
      return;
    }
    for (const auto& img : *list) {
      std::string role = img.labels.count(stack::kImageLabel) ? img.labels.at(stack::kImageLabel) : "";
      for (const auto& tag : img.repo_tags)
        ctx.out << tag << '\t' << role << '\t' << img.id.substr(0, 19) << '\t' << human_bytes(img.size) << '\n';
    }
    *rc = kExitOk;
  });
}

}  // namespace forge::cli
