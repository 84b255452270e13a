// Unit tests for engine/tar: round trips, path rejection, malformed input, host files.
#include "engine/tar.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

using forge::Errc;
using forge::engine::EntryType;
using forge::engine::read_single_file;
using forge::engine::read_tar;
using forge::engine::TarEntry;
using forge::engine::TarWriter;

namespace {

std::string binary_blob(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  return s;
}

std::string finish_ok(TarWriter& w) {
  auto bytes = w.finish();
  REQUIRE(bytes);
  return std::move(*bytes);
}

// A scratch directory removed at scope exit.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/tar_test.XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

}  // namespace

TEST_CASE("tar: files, directories, symlinks round trip") {
  const std::string with_nul("a\0b\0\xff\x01", 6);
  const std::string big = binary_blob(1 << 20);

  TarWriter w;
  REQUIRE(w.add_directory("dir", 0755));
  REQUIRE(w.add_file("dir/sub/nested.bin", with_nul, 0600));
  REQUIRE(w.add_file("run.sh", "#!/bin/sh\n", 0755));
  REQUIRE(w.add_file("big", big));
  REQUIRE(w.add_file("empty", ""));
  REQUIRE(w.add_symlink("link", "dir/sub/nested.bin"));
  REQUIRE(w.add_symlink("up", "../outside"));  // link targets are not restricted
  const std::string bytes = finish_ok(w);
  CHECK(bytes.size() % 512 == 0);

  auto entries = read_tar(bytes);
  REQUIRE(entries);
  REQUIRE(entries->size() == 7);
  const auto& e = *entries;

  CHECK(e[0].type == EntryType::kDirectory);
  CHECK(e[0].path.starts_with("dir"));  // libarchive adds the conventional trailing '/'
  CHECK(e[0].mode == 0755);

  CHECK(e[1].path == "dir/sub/nested.bin");
  CHECK(e[1].type == EntryType::kFile);
  CHECK(e[1].content == with_nul);
  CHECK(e[1].content.size() == 6);
  CHECK(e[1].mode == 0600);

  CHECK(e[2].path == "run.sh");
  CHECK(e[2].mode == 0755);
  CHECK(e[2].content == "#!/bin/sh\n");

  CHECK(e[3].path == "big");
  CHECK(e[3].mode == 0644);
  CHECK(e[3].content == big);

  CHECK(e[4].type == EntryType::kFile);
  CHECK(e[4].content.empty());

  CHECK(e[5].type == EntryType::kSymlink);
  CHECK(e[5].link_target == "dir/sub/nested.bin");
  CHECK(e[5].content.empty());
  CHECK(e[6].link_target == "../outside");

  for (const TarEntry& x : e) {
    CHECK(x.mtime == 0);
    CHECK(x.uid == 0);
    CHECK(x.gid == 0);
  }
}

TEST_CASE("tar: add_entry keeps metadata; long and non-ascii paths survive") {
  const std::string long_path = std::string(150, 'p') + "/" + std::string(120, 'q') + ".txt";
  TarWriter w;
  TarEntry f;
  f.path = "meta.txt";
  f.mode = 0640;
  f.content = "x";
  f.mtime = 1700000000;
  f.uid = 1000;
  f.gid = 3000000;
  REQUIRE(w.add_entry(f));
  TarEntry l;
  l.path = "l";
  l.type = EntryType::kSymlink;
  l.link_target = "meta.txt";
  REQUIRE(w.add_entry(l));
  REQUIRE(w.add_file(long_path, "long"));
  REQUIRE(w.add_file("caf\xc3\xa9.txt", "utf8"));
  auto entries = read_tar(finish_ok(w));
  REQUIRE(entries);
  REQUIRE(entries->size() == 4);
  const TarEntry& r = (*entries)[0];
  CHECK(r.content == "x");
  CHECK(r.mode == 0640);
  CHECK(r.mtime == 1700000000);
  CHECK(r.uid == 1000);
  CHECK(r.gid == 3000000);  // beyond ustar's octal field: needs a pax header
  CHECK((*entries)[1].link_target == "meta.txt");
  CHECK((*entries)[2].path == long_path);
  CHECK((*entries)[2].content == "long");
  CHECK((*entries)[3].path == "caf\xc3\xa9.txt");
}

TEST_CASE("tar: output is reproducible") {
  auto build = [] {
    TarWriter w;
    REQUIRE(w.add_directory("d"));
    REQUIRE(w.add_file("d/f", "same"));
    return finish_ok(w);
  };
  CHECK(build() == build());
}

TEST_CASE("tar: unsafe paths are rejected and the writer stays usable") {
  TarWriter w;
  for (const char* bad : {"../x", "/abs", "a/../b", "..", "a/..", ""}) {
    CAPTURE(bad);
    auto s = w.add_file(bad, "nope");
    REQUIRE_FALSE(s);
    CHECK(s.error().code == Errc::kInvalid);
  }
  CHECK_FALSE(w.add_directory("/etc"));
  CHECK_FALSE(w.add_symlink("../l", "t"));
  CHECK_FALSE(w.add_file(std::string_view("a\0b", 3), "nul in path"));
  CHECK(w.add_file("..a/b..", "dots inside names are fine"));
  auto entries = read_tar(finish_ok(w));
  REQUIRE(entries);
  REQUIRE(entries->size() == 1);
  CHECK((*entries)[0].path == "..a/b..");
}

TEST_CASE("tar: writer is spent after finish and after a move") {
  TarWriter w;
  REQUIRE(w.add_file("a", "1"));
  TarWriter moved = std::move(w);
  CHECK_FALSE(w.add_file("b", "2"));
  REQUIRE(moved.add_file("b", "2"));
  auto bytes = moved.finish();
  REQUIRE(bytes);
  CHECK_FALSE(moved.finish());
  CHECK_FALSE(moved.add_file("c", "3"));
  auto entries = read_tar(*bytes);
  REQUIRE(entries);
  CHECK(entries->size() == 2);

  TarWriter assigned;
  REQUIRE(assigned.add_file("old", "dropped"));
  TarWriter source;
  REQUIRE(source.add_file("new", "kept"));
  assigned = std::move(source);
  auto single = read_single_file(finish_ok(assigned));
  REQUIRE(single);
  CHECK(*single == "kept");
}

TEST_CASE("tar: malformed input is an error, not a crash") {
  auto garbage = read_tar("this is certainly not a tar archive, just some words");
  REQUIRE_FALSE(garbage);
  CHECK(garbage.error().code == Errc::kInvalid);

  auto noise = read_tar(binary_blob(4096));
  REQUIRE_FALSE(noise);
  CHECK(noise.error().code == Errc::kInvalid);

  TarWriter w;
  REQUIRE(w.add_file("f", binary_blob(10000)));
  std::string bytes = finish_ok(w);
  auto truncated = read_tar(std::string_view(bytes).substr(0, 3000));
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().code == Errc::kInvalid);
  CHECK(truncated.error().message.find("'f'") != std::string::npos);

  auto empty = read_tar("");
  REQUIRE(empty);
  CHECK(empty->empty());
  auto zeros = read_tar(std::string(1024, '\0'));  // an empty archive's end marker
  REQUIRE(zeros);
  CHECK(zeros->empty());
}

TEST_CASE("tar: read_single_file") {
  {
    TarWriter w;
    REQUIRE(w.add_file("hosts", "127.0.0.1 localhost\n"));
    auto content = read_single_file(finish_ok(w));
    REQUIRE(content);
    CHECK(*content == "127.0.0.1 localhost\n");
  }
  {
    TarWriter w;
    REQUIRE(w.add_directory("d"));
    REQUIRE(w.add_symlink("s", "x"));
    auto none = read_single_file(finish_ok(w));
    REQUIRE_FALSE(none);
    CHECK(none.error().code == Errc::kInvalid);
  }
  {
    TarWriter w;
    REQUIRE(w.add_file("a", "1"));
    REQUIRE(w.add_file("b", "2"));
    auto two = read_single_file(finish_ok(w));
    REQUIRE_FALSE(two);
    CHECK(two.error().code == Errc::kInvalid);
  }
  CHECK_FALSE(read_single_file("garbage garbage garbage"));
}

TEST_CASE("tar: add_host_file") {
  TempDir dir;
  const std::string file = dir.path + "/script";
  const std::string content = binary_blob(700000);  // more than one read chunk
  {
    std::ofstream out(file, std::ios::binary);
    out << content;
  }
  REQUIRE(::chmod(file.c_str(), 0750) == 0);
  REQUIRE(::symlink(file.c_str(), (dir.path + "/via-link").c_str()) == 0);

  TarWriter w;
  REQUIRE(w.add_host_file("bin/script", file));
  REQUIRE(w.add_host_file("followed", dir.path + "/via-link"));

  auto missing = w.add_host_file("m", dir.path + "/missing");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == Errc::kNotFound);
  auto directory = w.add_host_file("d", dir.path);
  REQUIRE_FALSE(directory);
  CHECK(directory.error().code == Errc::kInvalid);
  CHECK_FALSE(w.add_host_file("../escape", file));

  auto entries = read_tar(finish_ok(w));
  REQUIRE(entries);
  REQUIRE(entries->size() == 2);
  for (const TarEntry& e : *entries) {
    CHECK(e.type == EntryType::kFile);
    CHECK(e.mode == 0750);
    CHECK(e.content == content);
    CHECK(e.mtime == 0);
  }
  CHECK((*entries)[0].path == "bin/script");
}
