// `forgectl serve json-db|mock-web|rag`: the built-in services, the process inside their containers;
// `forgectl serve http-request`: the host's client to a service, run by exec in its container.
#include <array>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <ostream>
#include <thread>

#include "cli/verbs.h"
#include "core/service_token.h"
#include "services/http_server.h"
#include "services/json_db.h"
#include "services/json_db_auth.h"
#include "services/json_db_http.h"
#include "services/limits.h"
#include "services/local_client.h"
#include "services/mock_web.h"
#include "services/rag_http.h"

namespace forge::cli {

namespace {

struct ServeArgs {
  std::string host = "0.0.0.0";
  int port = 0;
  std::string fixtures;  // json-db
  std::string root;      // mock-web
  std::string tasks_root;         // mock-web: Tolokaforge's task packs, <dir>/<category>/<task_id>/
  std::string portal_file;        // mock-web: the json-db portal's file (services/mock_web_portal.h)
  bool insecure_no_auth = false;  // json-db, rag
};

struct RequestArgs {
  std::string method, target;
  int port = 8000;
  int timeout_s = 30;
};

// Reads stdin whole, up to one byte past what a request may carry (so that too much is seen).
Result<std::string> read_stdin(std::istream& in, std::size_t cap) {
  std::string text;
  std::array<char, 65536> buf{};
  while (in.read(buf.data(), buf.size()) || in.gcount() > 0) {
    text.append(buf.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > cap) return fail(Errc::kInvalid, "stdin holds more than " + std::to_string(cap) + " bytes");
  }
  return text;
}

// The token and body on stdin, the reply on stdout (docs/services.md, "The host's channel").
int http_request(Context& ctx, const RequestArgs& args) {
  services::LocalRequest req;
  req.method = args.method;
  req.target = args.target;
  req.port = static_cast<std::uint16_t>(args.port);
  req.timeout = Millis(static_cast<long long>(args.timeout_s) * 1000);
  auto input = read_stdin(std::cin, services::kMaxBodyBytes + services::kMaxHeaderBytes);
  if (!input) return ctx.report(input.error().with_context("reading the token and body from stdin"));
  if (auto st = services::read_local_input(*input, req); !st)
    return ctx.report(st.error().with_context("reading the token and body from stdin"));
  auto reply = services::local_request(req);
  if (!reply) return ctx.report(reply.error());
  ctx.out << services::format_local_reply(*reply);
  ctx.out.flush();
  return kExitOk;
}

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

// The control token comes in the container's environment at create (docs/services.md); without
// one a service starts only when told to serve everyone. `exposes` says what anyone could then do.
Result<services::JsonDbAuth> service_auth(Context& ctx, const ServeArgs& args, const std::string& name,
                                          const std::string& exposes) {
  auto auth = services::JsonDbAuth::configure(
      ctx.host.env(std::string(kServiceTokenEnv).c_str()),
      args.insecure_no_auth ? services::AuthMode::kInsecureNoAuth : services::AuthMode::kRequired, name);
  if (!auth) return auth.fail_with("starting " + name);
  if (!auth->required())
    ctx.log.warn(name + ": authentication is off (--insecure-no-auth): anyone who reaches port " +
                 std::to_string(args.port) + " may " + exposes);
  return auth;
}

}  // namespace

void add_serve(Command app, Context& ctx, int* rc) {
  auto serve = app.subcommand("serve", "Run a built-in environment service (the process inside its container)");
  serve.require_subcommand();

  auto db_args = std::make_shared<ServeArgs>();
  auto db = serve.subcommand("json-db", "Per-trial JSON tables over HTTP (Tolokaforge's DB service API)");
  db.option("--port", db_args->port, "TCP port").default_val(8000).in_range(0, 65535);
  db.option("--host", db_args->host, "address to listen on").default_val("0.0.0.0");
  db.option("--fixtures", db_args->fixtures, "JSON file {trial_id: {tables, unstable_fields}} loaded at startup");
  db.flag("--insecure-no-auth", db_args->insecure_no_auth,
               "serve without checking tokens when " + std::string(kServiceTokenEnv) +
                   " is unset: anyone who reaches the port may read and change every trial (local debugging only)");
  db.on_run([&ctx, rc, db_args] {
    auto auth = service_auth(ctx, *db_args, "json-db", "read and change every trial");
    if (!auth) {
      *rc = ctx.report(auth.error());
      return;
    }
    auto store = std::make_unique<services::JsonDb>();
    if (!db_args->fixtures.empty()) {
      if (auto st = load_fixtures(*store, db_args->fixtures); !st) {
        *rc = ctx.report(st.error());
        return;
      }
    }
    *rc = run_server(ctx, *db_args, "json-db", services::json_db_handler(*store, std::move(*auth)));
  });

  auto req_args = std::make_shared<RequestArgs>();
  auto req = serve.subcommand(
      "http-request",
      "Send one HTTP request to a service on 127.0.0.1 in this container: stdin is a line with the bearer token "
      "(empty for none), then the body; stdout is the status, a newline, then the reply body");
  req.option("method", req_args->method, "GET, HEAD, POST, PUT, PATCH or DELETE").required();
  req.option("path", req_args->target, "the request target, e.g. /trials/x/state").required();
  req.option("--port", req_args->port, "the service's port on 127.0.0.1").default_val(8000).in_range(1, 65535);
  req.option("--timeout", req_args->timeout_s, "seconds for connecting, and for each send and receive")
      .default_val(30)
      .in_range(1, 600);
  req.on_run([&ctx, rc, req_args] { *rc = http_request(ctx, *req_args); });

  auto web_args = std::make_shared<ServeArgs>();
  auto web = serve.subcommand(
      "mock-web",
      "Serve a task's pages, read-only: its www/, and its own pages with --tasks-root (never its grading files)");
  web.option("--root", web_args->root, "the directory to serve: a task's www/").required();
  web.option("--tasks-root", web_args->tasks_root,
                  "task pages as <dir>/<category>/<task_id>/, served at /task/<category>/<task_id>/ and by "
                  "/<name>.html (may not exist yet)");
  web.option("--portal-file", web_args->portal_file,
             "the json-db portal's file, written by the trial once its browser runs (may not exist yet): page "
             "scripts of the trial's browser then read and write its json-db state");
  web.option("--port", web_args->port, "TCP port").default_val(8080).in_range(0, 65535);
  web.option("--host", web_args->host, "address to listen on").default_val("0.0.0.0");
  web.on_run([&ctx, rc, web_args] {
    services::MockWebOptions o;
    o.tasks_root = web_args->tasks_root;
    o.portal_file = web_args->portal_file;
    auto site = services::MockWeb::open(web_args->root, o);
    if (!site) {
      *rc = ctx.report(site.error());
      return;
    }
    auto owned = std::make_unique<services::MockWeb>(std::move(*site));  // the handler points at it
    *rc = run_server(ctx, *web_args, "mock-web", owned->handler());
  });

  auto rag_args = std::make_shared<ServeArgs>();
  auto rag = serve.subcommand(
      "rag", "Per-trial knowledge bases searched with BM25 (Tolokaforge's rag-service API; the search_kb tool)");
  rag.option("--port", rag_args->port, "TCP port").default_val(8001).in_range(0, 65535);
  rag.option("--host", rag_args->host, "address to listen on").default_val("0.0.0.0");
  rag.flag("--insecure-no-auth", rag_args->insecure_no_auth,
                "serve without checking tokens when " + std::string(kServiceTokenEnv) +
                    " is unset: anyone who reaches the port may load, search and delete every index (local "
                    "debugging only)");
  rag.on_run([&ctx, rc, rag_args] {
    auto auth = service_auth(ctx, *rag_args, "rag", "load, search and delete every index");
    if (!auth) {
      *rc = ctx.report(auth.error());
      return;
    }
    auto store = std::make_unique<services::RagStore>();
    *rc = run_server(ctx, *rag_args, "rag", services::rag_handler(*store, std::move(*auth)));
  });
  add_serve_dns(serve, ctx, rc);
}

}  // namespace forge::cli
