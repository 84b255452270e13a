// The stdcopy demuxer: stdout/stderr frames split anywhere across reads, empty frames, bad headers.
#include "engine/stdcopy.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace forge;
using namespace forge::engine;

namespace {

struct Collected {
  std::string out, err, sys;
  std::vector<std::pair<StdStream, std::string>> pieces;
  StdcopyDemuxer::Sink sink() {
    return [this](StdStream s, std::string_view d) {
      pieces.emplace_back(s, std::string(d));
      (s == StdStream::kStderr ? err : s == StdStream::kSystem ? sys : out).append(d);
    };
  }
};

// The frames of the reference's exec example: stdout, stdout, stderr.
std::string sample_stream() {
  return stdcopy_frame(StdStream::kStdout, "out:1:two words:/etc:65534\n") + stdcopy_frame(StdStream::kStdout, "abc") +
         stdcopy_frame(StdStream::kStderr, "err1\nerr2\n");
}

}  // namespace

TEST_CASE("frame encoding matches the wire format") {
  std::string f = stdcopy_frame(StdStream::kStderr, "err1\nerr2\n");
  REQUIRE(f.size() == 18);
  CHECK(f.substr(0, 8) == std::string("\x02\x00\x00\x00\x00\x00\x00\x0a", 8));
  CHECK(f.substr(8) == "err1\nerr2\n");
  std::string big = stdcopy_frame(StdStream::kStdout, std::string(0x01020304 & 0xffff, 'x'));
  CHECK(static_cast<unsigned char>(big[6]) == 0x03);
  CHECK(static_cast<unsigned char>(big[7]) == 0x04);
}

TEST_CASE("stdout and stderr frames are demultiplexed, order within a stream kept") {
  StdcopyDemuxer d;
  Collected c;
  REQUIRE(d.feed(sample_stream(), c.sink()));
  CHECK(c.out == "out:1:two words:/etc:65534\nabc");
  CHECK(c.err == "err1\nerr2\n");
  CHECK_FALSE(d.mid_frame());
}

TEST_CASE("a stream fed one byte at a time gives the same output") {
  StdcopyDemuxer d;
  Collected c;
  std::string s = sample_stream();
  for (std::size_t i = 0; i < s.size(); ++i) {
    REQUIRE(d.feed(s.substr(i, 1), c.sink()));
    bool at_boundary = i + 1 == s.size() || i + 1 == 35 || i + 1 == 46;  // frame ends: 8+27, +8+3
    CHECK(d.mid_frame() == !at_boundary);
  }
  CHECK(c.out == "out:1:two words:/etc:65534\nabc");
  CHECK(c.err == "err1\nerr2\n");
}

TEST_CASE("every 2-way split of the stream gives the same output") {
  std::string s = sample_stream();
  for (std::size_t cut = 0; cut <= s.size(); ++cut) {
    CAPTURE(cut);
    StdcopyDemuxer d;
    Collected c;
    REQUIRE(d.feed(s.substr(0, cut), c.sink()));
    REQUIRE(d.feed(s.substr(cut), c.sink()));
    CHECK(c.out == "out:1:two words:/etc:65534\nabc");
    CHECK(c.err == "err1\nerr2\n");
    CHECK_FALSE(d.mid_frame());
  }
}

TEST_CASE("a header split across feeds is kept until complete; payload pieces are delivered as they come") {
  StdcopyDemuxer d;
  Collected c;
  std::string f = stdcopy_frame(StdStream::kStderr, "hello world");
  REQUIRE(d.feed(f.substr(0, 3), c.sink()));
  CHECK(c.pieces.empty());
  CHECK(d.mid_frame());
  REQUIRE(d.feed(f.substr(3, 5), c.sink()));  // header complete, no payload yet
  CHECK(c.pieces.empty());
  CHECK(d.mid_frame());
  REQUIRE(d.feed(f.substr(8, 5), c.sink()));
  REQUIRE(c.pieces.size() == 1);
  CHECK(c.pieces[0].first == StdStream::kStderr);
  CHECK(c.pieces[0].second == "hello");
  CHECK(d.mid_frame());
  REQUIRE(d.feed(f.substr(13), c.sink()));
  CHECK(c.err == "hello world");
  CHECK(c.out.empty());
  CHECK_FALSE(d.mid_frame());
}

TEST_CASE("an empty payload frame produces no output and does not desynchronise") {
  StdcopyDemuxer d;
  Collected c;
  std::string s = stdcopy_frame(StdStream::kStdout, "") + stdcopy_frame(StdStream::kStderr, "e") +
                  stdcopy_frame(StdStream::kStderr, "") + stdcopy_frame(StdStream::kStdout, "o");
  REQUIRE(d.feed(s, c.sink()));
  CHECK(c.out == "o");
  CHECK(c.err == "e");
  CHECK_FALSE(d.mid_frame());
}

TEST_CASE("a system-error frame is routed as kSystem") {
  StdcopyDemuxer d;
  Collected c;
  REQUIRE(d.feed(stdcopy_frame(StdStream::kSystem, "boom"), c.sink()));
  CHECK(c.sys == "boom");
  CHECK(c.out.empty());
}

TEST_CASE("a bad header is a protocol error (e.g. a TTY exec's raw text)") {
  SUBCASE("unknown stream byte") {
    StdcopyDemuxer d;
    Collected c;
    auto st = d.feed(std::string("\x05\x00\x00\x00\x00\x00\x00\x01x", 9), c.sink());
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::kProtocol);
  }
  SUBCASE("non-zero padding") {
    StdcopyDemuxer d;
    Collected c;
    auto st = d.feed(std::string("\x01\x00\x01\x00\x00\x00\x00\x01x", 9), c.sink());
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::kProtocol);
  }
  SUBCASE("raw TTY text after a good frame") {
    StdcopyDemuxer d;
    Collected c;
    auto st = d.feed(stdcopy_frame(StdStream::kStdout, "ok") + "hello\r\nworld\r\n", c.sink());
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::kProtocol);
    CHECK(c.out == "ok");
  }
}

TEST_CASE("mid_frame reports a stream cut inside a payload or a header") {
  std::string f = stdcopy_frame(StdStream::kStdout, "truncated");
  StdcopyDemuxer in_payload;
  Collected c;
  REQUIRE(in_payload.feed(f.substr(0, f.size() - 1), c.sink()));
  CHECK(in_payload.mid_frame());
  CHECK(c.out == "truncate");

  StdcopyDemuxer in_header;
  REQUIRE(in_header.feed(f.substr(0, 1), c.sink()));
  CHECK(in_header.mid_frame());

  StdcopyDemuxer fresh;
  CHECK_FALSE(fresh.mid_frame());
}
