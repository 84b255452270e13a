// `forgectl serve json-db|mock-web`: the built-in services, the process inside their containers.
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <ostream>
#include <thread>

#include "cli/verbs.h"
#include "services/http_server.h"
#include "services/json_db.h"
#include "services/json_db_http.h"
#include "services/mock_web.h"

namespace forge::cli {

namespace {

struct ServeArgs {
  std::string host = "0.0.0.0";
  int port = 0;
  std::string fixtures;  // json-db
  std::string root;      // mock-web
};

// A fixtures file is a JSON object {trial_id: init body}: each trial is created at startup as
// if POSTed to /trials/{id}/init.
Status load_fixtures(services::JsonDb& db, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(Errc::kNotFound, "cannot read fixtures file '" + path + "'");
  std::string text(std::istreambuf_iterator<char>(in), {});
  auto doc = services::parse_body(text);
  if (!doc) return doc.fail_with("fixtures file '" + path + "'");
  if (!doc->IsObject())
    return fail(Errc::kInvalid, "fixtures file '" + path + "' must be an object {trial_id: {tables, …}}");
  for (const auto& m : doc->GetObject()) {
    std::string id(m.name.GetString(), m.name.GetStringLength());
    auto r = db.init(id, m.value);
    if (!r) return r.fail_with("fixtures file '" + path + "', trial '" + id + "'");
  }
  return {};
}

// Serves until SIGINT/SIGTERM (counted by main's signal thread), then stops cleanly.
int run_server(Context& ctx, const ServeArgs& args, const char* name, services::Handler handler) {
  services::ServerOptions opts;
  opts.host = args.host;
  opts.port = static_cast<std::uint16_t>(args.port);
  if (ctx.log.level() == LogLevel::kDebug) opts.log = [&ctx](std::string_view line) { ctx.log.debug(line); };
  ctx.handles_interrupts = true;
  auto server = services::HttpServer::start(opts, std::move(handler));
  if (!server) return ctx.report(server.error().with_context(std::string("starting ") + name));
  ctx.log.info(std::string(name) + " listening on " + args.host + ":" + std::to_string((*server)->port()));
  while (ctx.interrupted.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*server)->stop();
  ctx.log.info(std::string(name) + " stopped");
  return kExitOk;
}

}  // namespace

void add_serve(CLI::App& app, Context& ctx, int* rc) {
  auto* serve = app.add_subcommand("serve", "Run a built-in environment service (the process inside its container)");
  serve->require_subcommand(1);

  auto db_args = std::make_shared<ServeArgs>();
  auto* db = serve->add_subcommand("json-db", "Per-trial JSON tables over HTTP (Tolokaforge's DB service API)");
  db->add_option("--port", db_args->port, "TCP port")->default_val(8000)->check(CLI::Range(0, 65535));
  db->add_option("--host", db_args->host, "address to listen on")->default_val("0.0.0.0");
  db->add_option("--fixtures", db_args->fixtures, "JSON file {trial_id: {tables, unstable_fields}} loaded at startup");
  db->callback([&ctx, rc, db_args] {
    auto store = std::make_unique<services::JsonDb>();
    if (!db_args->fixtures.empty()) {
      if (auto st = load_fixtures(*store, db_args->fixtures); !st) {
        *rc = ctx.report(st.error());
        return;
      }
    }
    *rc = run_server(ctx, *db_args, "json-db", services::json_db_handler(*store));
  });

  auto web_args = std::make_shared<ServeArgs>();
  auto* web = serve->add_subcommand("mock-web", "Serve a task's www/ directory, read-only (never its grading files)");
  web->add_option("--root", web_args->root, "the directory to serve: a task's www/")->required();
  web->add_option("--port", web_args->port, "TCP port")->default_val(8080)->check(CLI::Range(0, 65535));
  web->add_option("--host", web_args->host, "address to listen on")->default_val("0.0.0.0");
  web->callback([&ctx, rc, web_args] {
    auto site = services::MockWeb::open(web_args->root);
    if (!site) {
      *rc = ctx.report(site.error());
      return;
    }
    auto owned = std::make_unique<services::MockWeb>(std::move(*site));  // the handler points at it
    *rc = run_server(ctx, *web_args, "mock-web", owned->handler());
  });
}

}  // namespace forge::cli
