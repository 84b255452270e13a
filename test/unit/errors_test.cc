// Daemon status and transport failures → forge::Error: codes, carried messages, no-op statuses, retries.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "engine/client.h"
#include "engine/containers.h"
#include "engine/errors.h"
#include "engine/networks.h"
#include "support/fake_transport.h"

using namespace forge;
using namespace forge::engine;
using forge::test::FakeTransport;

namespace {

struct Fx {
  std::shared_ptr<FakeTransport> fake = std::make_shared<FakeTransport>();
  Client c{fake};
};

struct StatusCase {
  long status;
  const char* body;
  Errc code;
  const char* message;  // what must reach the user
};

}  // namespace

TEST_CASE("HTTP status maps to Errc and the daemon's message is carried") {
  const StatusCase cases[] = {
      {400, R"({"message":"invalid CapAdd: unknown capability: \"CAP_NOT_A_CAP\""})", Errc::kBadRequest,
       "invalid CapAdd: unknown capability: \"CAP_NOT_A_CAP\""},
      {403, R"({"message":"endpoint with name demo-web-1 already exists in network demo-internal"})", Errc::kForbidden,
       "endpoint with name demo-web-1 already exists in network demo-internal"},
      {404, R"({"message":"No such container: nope"})", Errc::kNotFound, "No such container: nope"},
      {409, R"({"message":"Conflict. The container name \"/demo-web-1\" is already in use by container \"c0ffee\". You have to remove (or rename) that container to be able to reuse that name."})",
       Errc::kConflict, "The container name \"/demo-web-1\" is already in use"},
      {500, R"({"message":"container rootfs is marked read-only"})", Errc::kServer, "container rootfs is marked read-only"},
      {502, "Bad Gateway", Errc::kUnavailable, "Bad Gateway"},
      {503, R"({"message":"Service Unavailable"})", Errc::kUnavailable, "Service Unavailable"},
  };
  for (const auto& tc : cases) {
    CAPTURE(tc.status);
    Error e = error_from_status(tc.status, tc.body, "POST /containers/create");
    CHECK(e.code == tc.code);
    CHECK(e.message.find(tc.message) != std::string::npos);
    CHECK(e.message.find("POST /containers/create") != std::string::npos);
  }
  CHECK_FALSE(is_transient(Errc::kServer));  // a 500 is often bad input (bad JSON, SecurityOpt): not retried
  CHECK(is_transient(Errc::kUnavailable));
}

TEST_CASE("mapped errors reach callers of the endpoint functions with their context") {
  Fx f;
  f.fake->on(Method::kPost, "/networks/create", 409, R"({"message":"network with name demo-internal already exists"})");
  f.fake->on(Method::kPost, "/containers/nope/start", 404, R"({"message":"No such container: nope"})");
  f.fake->on(Method::kPost, "/containers/c0ffee/kill", 409,
             R"({"message":"Cannot kill container: c0ffee: Container c0ffee is not running"})");

  auto net = create_network(f.c, NetworkSpec{.name = "demo-internal"});
  REQUIRE_FALSE(net);
  CHECK(net.error().code == Errc::kConflict);
  CHECK(net.error().what().find("network with name demo-internal already exists") != std::string::npos);
  CHECK(net.error().what().find("demo-internal") != std::string::npos);

  auto st = start_container(f.c, "nope");
  REQUIRE_FALSE(st);
  CHECK(st.error().code == Errc::kNotFound);
  CHECK(st.error().what().find("No such container: nope") != std::string::npos);

  auto k = kill_container(f.c, "c0ffee");
  REQUIRE_FALSE(k);
  CHECK(k.error().code == Errc::kConflict);
}

TEST_CASE("a text/plain error body (the 'too old' case) is carried as is") {
  const char* body = "client version 1.11 is too old. Minimum supported API version is 1.12, please upgrade your client "
                     "to a newer version\n";
  Error e = error_from_status(400, body, "GET /version");
  CHECK(e.code == Errc::kBadRequest);
  CHECK(e.message.find("client version 1.11 is too old. Minimum supported API version is 1.12") != std::string::npos);
  CHECK(daemon_message(body).back() != '\n');
  CHECK(daemon_message(R"({"message":"page not found"})") == "page not found");
}

TEST_CASE("an empty error body still names the status") {
  Error e = error_from_status(404, "", "HEAD /containers/archive");
  CHECK(e.code == Errc::kNotFound);
  CHECK(e.message.find("404") != std::string::npos);
}

TEST_CASE("Client::expect names the method and path (without the query) in its error") {
  Fx f;
  f.fake->on(Method::kPost, "/containers/c0ffee/stop", 500, R"({"message":"cannot stop container: c0ffee: permission denied"})");
  auto r = f.c.expect({204, 304}, Method::kPost, "/containers/c0ffee/stop?t=3");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kServer);
  CHECK(r.error().what().find("POST /containers/c0ffee/stop") != std::string::npos);
  CHECK(r.error().what().find("?t=3") == std::string::npos);
  CHECK(r.error().what().find("permission denied") != std::string::npos);
}

TEST_CASE("Client::expect sends Content-Type application/json with a JSON body, and none without a body") {
  Fx f;
  f.fake->on(Method::kPost, "/networks/n1/connect", 200);
  REQUIRE(f.c.expect({200}, Method::kPost, "/networks/n1/connect", R"({"Container":"c"})"));
  REQUIRE(f.c.expect({200}, Method::kPost, "/networks/n1/connect"));
  REQUIRE(f.fake->requests.size() == 2);
  CHECK(f.fake->requests[0].content_type == "application/json");
  CHECK(f.fake->requests[1].content_type.empty());
}

TEST_CASE("304 from start and stop is success: the container is already in that state") {
  Fx f;
  f.fake->on(Method::kPost, "/containers/c0ffee/start", 304);
  f.fake->on(Method::kPost, "/containers/c0ffee/stop", 304);
  CHECK(start_container(f.c, "c0ffee"));
  CHECK(stop_container(f.c, "c0ffee", 10));
}

TEST_CASE("remove_container: missing and already-being-removed are done; a running container is a conflict") {
  SUBCASE("404 is success by default") {
    Fx f;
    f.fake->on(Method::kDelete, "/containers/gone", 404, R"({"message":"No such container: gone"})");
    CHECK(remove_container(f.c, "gone"));
  }
  SUBCASE("404 is kNotFound when missing is not ok") {
    Fx f;
    f.fake->on(Method::kDelete, "/containers/gone", 404, R"({"message":"No such container: gone"})");
    auto st = remove_container(f.c, "gone", RemoveMode::kForce, false);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::kNotFound);
  }
  SUBCASE("409 already in progress is success") {
    Fx f;
    f.fake->on(Method::kDelete, "/containers/demo-web-1", 409,
               R"({"message":"removal of container demo-web-1 is already in progress"})");
    CHECK(remove_container(f.c, "demo-web-1"));
  }
  SUBCASE("409 running container is kConflict with the daemon's message") {
    Fx f;
    f.fake->on(Method::kDelete, "/containers/c0ffee", 409,
               R"({"message":"You cannot remove a running container c0ffee. Stop the container before attempting removal or force remove"})");
    auto st = remove_container(f.c, "c0ffee", RemoveMode::kNormal);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::kConflict);
    CHECK(st.error().what().find("You cannot remove a running container") != std::string::npos);
    CHECK(st.error().what().find("c0ffee") != std::string::npos);
  }
  SUBCASE("500 is an error") {
    Fx f;
    f.fake->on(Method::kDelete, "/containers/c0ffee", 500, R"({"message":"driver \"overlay2\" failed to remove root filesystem"})");
    auto st = remove_container(f.c, "c0ffee");
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::kServer);
  }
}

TEST_CASE("Client::request retries GET and HEAD once on a broken connection, never POST") {
  const Error broken = make_error(Errc::kUnavailable, "connection reset by peer");
  SUBCASE("GET: one retry succeeds") {
    Fx f;
    f.fake->on_error(Method::kGet, "/containers/c0ffee/json", broken);
    f.fake->on(Method::kGet, "/containers/c0ffee/json", 200, R"({"Id":"c0ffee"})");
    auto r = f.c.request(Method::kGet, "/containers/c0ffee/json");
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(f.fake->requests.size() == 2);
  }
  SUBCASE("HEAD: one retry succeeds") {
    Fx f;
    f.fake->on_error(Method::kHead, "/containers/c0ffee/archive", broken);
    f.fake->on(Method::kHead, "/containers/c0ffee/archive", 200);
    REQUIRE(f.c.request(Method::kHead, "/containers/c0ffee/archive?path=%2F"));
    CHECK(f.fake->requests.size() == 2);
  }
  SUBCASE("GET: only once; a second failure is returned") {
    Fx f;
    f.fake->on_error(Method::kGet, "/info", broken);  // repeats
    auto r = f.c.request(Method::kGet, "/info");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::kUnavailable);
    CHECK(f.fake->requests.size() == 2);
  }
  SUBCASE("POST is never retried") {
    Fx f;
    f.fake->on_error(Method::kPost, "/containers/create", broken);
    f.fake->on(Method::kPost, "/containers/create", 201, R"({"Id":"dup"})");
    auto r = f.c.request(Method::kPost, "/containers/create?name=demo-web-1", "{}", "application/json");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::kUnavailable);
    CHECK(f.fake->requests.size() == 1);
  }
  SUBCASE("DELETE is not retried either") {
    Fx f;
    f.fake->on_error(Method::kDelete, "/containers/c0ffee", broken);
    f.fake->on(Method::kDelete, "/containers/c0ffee", 204);
    REQUIRE_FALSE(f.c.request(Method::kDelete, "/containers/c0ffee?force=1&v=1"));
    CHECK(f.fake->requests.size() == 1);
  }
  SUBCASE("a GET that timed out is not retried (that would double the wait)") {
    Fx f;
    f.fake->on_error(Method::kGet, "/info", make_error(Errc::kTimeout, "operation timed out"));
    f.fake->on(Method::kGet, "/info", 200, "{}");
    auto r = f.c.request(Method::kGet, "/info");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::kTimeout);
    CHECK(f.fake->requests.size() == 1);
  }
}
