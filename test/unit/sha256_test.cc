// The ELF build ID reader; SHA-256 against the FIPS 180-4 / NIST example vectors, and the canonical state hash against
// values computed with Python's json.dumps(sort_keys=True, separators=(",", ":")) + hashlib.
#include <doctest/doctest.h>

#include <string>

#include "core/json.h"
#include "core/elf_build_id.h"
#include "core/sha256.h"
#include "core/state_hash.h"
#include "support/manifest_helpers.h"

using namespace forge;

TEST_CASE("sha256: NIST example vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                   "mnopqrstnopqrstu") == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: padding boundaries around one and two blocks") {
  // 55 bytes is the longest message whose padding fits one block; 56 needs a second.
  CHECK(sha256_hex(std::string(55, 'a')) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(sha256_hex(std::string(56, 'a')) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(sha256_hex(std::string(63, 'a')) == "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  CHECK(sha256_hex(std::string(64, 'a')) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  CHECK(sha256_hex(std::string(65, 'a')) == "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0");
  CHECK(sha256_hex(std::string(119, 'a')) == "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
  CHECK(sha256_hex(std::string(120, 'a')) == "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c");
}

TEST_CASE("sha256: incremental updates in odd pieces equal one update") {
  std::string msg(1000, 'x');
  for (std::size_t i = 0; i < msg.size(); ++i) msg[i] = static_cast<char>('a' + i % 26);
  for (std::size_t piece : {1u, 3u, 55u, 63u, 64u, 65u, 999u}) {
    CAPTURE(piece);
    Sha256 h;
    for (std::size_t i = 0; i < msg.size(); i += piece) h.update(std::string_view(msg).substr(i, piece));
    CHECK(h.hex_digest() == sha256_hex(msg));
  }
}

namespace {

json::Document doc(const char* text) {
  auto d = json::parse(text, "test");
  REQUIRE(d.has_value());
  return std::move(*d);
}

constexpr const char* kState = R"({"users":[{"id":1,"name":"Zoë","created_at":"2024-01-01T00:00:00","score":1.5,
  "big":1e16,"small":0.00001,"f":100.0,"tiny":0.0001,"neg":-0.0,"emoji":"😀","ctl":"a\nb\u0001\"\\/",
  "nested":{"b":2,"a":[true,false,null]}}],"orders":[{"id":"o1","ts":5,"total":12.25}]})";

}  // namespace

TEST_CASE("sha256: python_json writes what Python's json.dumps(sort_keys, compact) writes") {
  CHECK(python_json(doc(kState)) ==
        R"({"orders":[{"id":"o1","total":12.25,"ts":5}],"users":[{"big":1e+16,"created_at":"2024-01-01T00:00:00",)"
        R"("ctl":"a\nb\u0001\"\\/","emoji":"\ud83d\ude00","f":100.0,"id":1,"name":"Zo\u00eb","neg":-0.0,)"
        R"("nested":{"a":[true,false,null],"b":2},"score":1.5,"small":1e-05,"tiny":0.0001}]})");
  auto floats = doc("[1.0, 1e16, 1e15, 123456789.123, 0.1, 1e-5, 1.5e-7, 2.5e22, -3.0, 1e100, 5e-324]");
  CHECK(python_json(floats) ==
        "[1.0,1e+16,1000000000000000.0,123456789.123,0.1,1e-05,1.5e-07,2.5e+22,-3.0,1e+100,5e-324]");
}

TEST_CASE("sha256: the state hash matches Tolokaforge's, with and without unstable fields") {
  auto state = doc(kState);
  CHECK(state_hash(state) == "48ecc5e36e46837b213f651144578f897ceba317d982ea3e6ad0e6b6f2810d1d");
  // "table.field" drops from that table, a bare "field" from every table.
  CHECK(state_hash(state, {"users.created_at", "ts"}) ==
        "773bba266a31ae28df123840136e139daecf09957523fa1e0f29ca019a4dbbcc");
  // Key order never matters.
  auto reordered = doc(R"({"b":[{"y":2,"x":1}],"a":[]})");
  CHECK(state_hash(reordered) == state_hash(doc(R"({"a":[],"b":[{"x":1,"y":2}]})")));
}

TEST_CASE("elf build id: this test binary's, as the linker wrote it; none for a file that is not ELF") {
  auto id = forge::elf_build_id("/proc/self/exe");
  REQUIRE(id.has_value());  // Debian's gcc links with --build-id
  CHECK(id->size() == 40);   // SHA-1
  CHECK(id->find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(forge::elf_build_id("/proc/self/exe") == id);  // stable
  forge::test::TempFiles d("forgectl-elf-");
  d.write("text", "#!/bin/sh\necho not elf\n");
  CHECK_FALSE(forge::elf_build_id(d.file("text")).has_value());
  d.write("short", std::string("\x7f" "ELF\x02", 5));  // a header cut short
  CHECK_FALSE(forge::elf_build_id(d.file("short")).has_value());
  CHECK_FALSE(forge::elf_build_id(d.file("missing")).has_value());
}
