// The services' request limits (414, 431, "Expect: 100-continue" before a body) and json-db's
// state limits (507 for size, 400 for nesting), over real HTTP on 127.0.0.1.
#include <doctest/doctest.h>

#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocket.h>

#include <string>

#include "services_jsondb_fixture.h"

using namespace jsondb_test;

TEST_CASE("services json-db: long targets get 414, too many or too large headers 431") {
  Db s;
  s.expect(200, "POST", "/trials/t/init", kInit);
  std::string target = "/trials/t/state?tables=" + std::string(kMaxTargetBytes, 'a');
  CHECK(s.error(414, "GET", target)
            .find("the request-target is " + std::to_string(target.size()) + " bytes, over the limit of 8192") == 0);
  // Past Poco's own parser limit (16 KiB) the answer is the same status, still JSON.
  CHECK(s.error(414, "GET", "/trials/t/state?tables=" + std::string(20000, 'a')) == "the request-target is too long");
  Headers many = bearer(kControl);
  for (int i = 0; i < 70; ++i) many.emplace_back("X-Pad-" + std::to_string(i), "1");
  std::string too_many = s.error(431, "GET", "/trials/t/state", "", &many);
  CHECK(too_many.find("the request has 7") == 0);  // 70 + Authorization + what Poco's client adds
  CHECK(too_many.find("; the limits are 64 fields and 16384 bytes") != std::string::npos);
  Headers big = bearer(kControl);
  for (int i = 0; i < 3; ++i) big.emplace_back("X-Big-" + std::to_string(i), std::string(6000, 'b'));
  CHECK(s.error(431, "GET", "/trials/t/state", "", &big).find("bytes; the limits are 64 fields and 16384 bytes") !=
        std::string::npos);
  Headers huge = bearer(kControl);
  huge.emplace_back("X-Huge", std::string(10000, 'h'));  // over Poco's 8 KiB per field
  CHECK(s.error(431, "GET", "/trials/t/state", "", &huge) == "the request's header fields are too large or too many");
  Headers crowd = bearer(kControl);
  for (int i = 0; i < 120; ++i) crowd.emplace_back("X-C-" + std::to_string(i), "1");  // over Poco's 100
  CHECK(s.error(431, "GET", "/trials/t/state", "", &crowd) == "the request's header fields are too large or too many");
  s.expect(200, "GET", "/trials/t/state");  // the server is still fine
}

TEST_CASE("services json-db: a trial's state is capped in size, with 507 and no change") {
  JsonDbLimits limits;
  limits.max_state_bytes = 4096;
  limits.max_total_bytes = 10000;
  Db s(32u << 20, limits);
  std::string pad(3000, 'p');
  CHECK(s.error(507, "POST", "/trials/big/init", R"({"tables": {"u": [{"pad": ")" + pad + pad + R"("}]}})")
            .find("trial 'big': its tables are 6") == 0);
  s.expect(200, "POST", "/trials/t/init", R"({"tables": {"u": [{"id": 1, "pad": ")" + pad + R"("}]}})");
  auto before = s.expect(200, "GET", "/trials/t/state/hash");
  std::string grow = R"({"operations": [{"op": "insert", "record": {"id": 2, "pad": ")" + pad + R"("}}]})";
  CHECK(s.error(507, "PATCH", "/trials/t/state/u", grow)
            .find("bytes of tables, over the limit of 4.0 KiB; nothing was changed") != std::string::npos);
  CHECK(s.error(507, "POST", "/trials/t/update",
                R"({"ops": [{"op": "add", "path": "$.u", "value": {"pad": ")" + pad + R"("}}]})")
            .find("nothing was changed") != std::string::npos);
  CHECK(json::to_string(s.expect(200, "GET", "/trials/t/state/hash")) == json::to_string(before));
  // Snapshots count towards the total: tables (3 KB) + initial (3 KB) + one snapshot fit, a second does not.
  s.expect(201, "POST", "/trials/t/snapshots/one");
  CHECK(s.error(507, "POST", "/trials/t/snapshots/two")
            .find("over the limit of 9.8 KiB; delete snapshots or the trial") != std::string::npos);
  s.expect(200, "POST", "/trials/t/snapshots/one/restore");
}

TEST_CASE("services json-db: bodies and the state stay within the nesting limit") {
  Db s;
  s.expect(200, "POST", "/trials/t/init", kInit);
  std::string deep_object;
  for (int i = 0; i < 100; ++i) deep_object += R"({"a":)";
  deep_object += "1" + std::string(100, '}');
  // 100 levels fit in a body; put twice inside each other they would not fit in the state.
  std::string op = R"({"ops": [{"op": "add", "path": "$.deep", "value": )" + deep_object + "}]}";
  s.expect(200, "POST", "/trials/t/update", op);
  std::string path = "$.deep";
  for (int i = 0; i < 99; ++i) path += ".a";
  CHECK(s.error(400, "POST", "/trials/t/update",
                R"({"ops": [{"op": "replace", "path": ")" + path + R"(", "value": )" + deep_object + "}]}") ==
        "the update would nest the state deeper than 128 levels; nothing was changed");
  // A body deeper than the limit is refused before it is parsed, however it is spelt.
  std::string deep_body = std::string(5000, '[') + std::string(5000, ']');
  CHECK(s.error(400, "POST", "/trials/t/query", deep_body) == "the request body nests deeper than 128 levels");
}

namespace {

// Reads from `s` until `marker` has arrived (or the peer closes); returns all that was read.
std::string read_until(Poco::Net::StreamSocket& s, const std::string& marker) {
  std::string got;
  char buf[4096];
  while (got.find(marker) == std::string::npos) {
    int n = s.receiveBytes(buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

}  // namespace

TEST_CASE("services json-db: 'Expect: 100-continue' gets 100 before the body, or the refusal without it") {
  Db s;
  std::string body = R"({"tables": {"u": [{"id": 1}]}})";
  Poco::Net::StreamSocket sock(Poco::Net::SocketAddress("127.0.0.1", s.server->port()));
  sock.setReceiveTimeout(Poco::Timespan(20, 0));
  std::string head =
      "POST /trials/t/init HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + std::string(kControl) +
      "\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n";
  sock.sendBytes(head.data(), static_cast<int>(head.size()));
  CHECK(read_until(sock, "\r\n\r\n").find("HTTP/1.1 100 Continue\r\n") == 0);
  sock.sendBytes(body.data(), static_cast<int>(body.size()));
  std::string reply = read_until(sock, "initial_hash");
  CHECK(reply.find("HTTP/1.1 200 OK") == 0);
  CHECK(s.db.trial_count() == 1);

  // Over the body limit: the 413 comes at once, with no 100 first.
  Db small(64);
  Poco::Net::StreamSocket sock2(Poco::Net::SocketAddress("127.0.0.1", small.server->port()));
  sock2.setReceiveTimeout(Poco::Timespan(20, 0));
  std::string big_head = "POST /trials/t/init HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + std::string(kControl) +
                         "\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n";
  sock2.sendBytes(big_head.data(), static_cast<int>(big_head.size()));
  sock2.shutdownSend();  // the client gives up on sending the body
  std::string refused = read_until(sock2, "bytes exceeds the limit");
  CHECK(refused.find("HTTP/1.1 413") == 0);
  CHECK(refused.find("HTTP/1.1 413 OK") == std::string::npos);  // the status line's reason matches its code
}
