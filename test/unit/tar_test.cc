// Unit tests for engine/tar: round trips, path rejection, malformed input, host files, streams.
#include "engine/tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>

using forge::Errc;
using forge::engine::concat_tars;
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

// ---- streaming: reading with caps, and the ownership-rewriting copy --------------------------

namespace {

// A TarSource over `bytes`, handing out at most `step` bytes per pull (as a network would).
forge::engine::TarSource source_of(const std::string& bytes, std::size_t step = 1000, std::size_t* pulled = nullptr) {
  auto pos = std::make_shared<std::size_t>(0);
  return [&bytes, pos, step, pulled](std::span<char> buf) -> forge::Result<std::size_t> {
    std::size_t n = std::min({buf.size(), step, bytes.size() - *pos});
    std::memcpy(buf.data(), bytes.data() + *pos, n);
    *pos += n;
    if (pulled) *pulled = *pos;
    return n;
  };
}

// A tar written with libarchive itself, holding what TarWriter never writes: a device node, an
// extended attribute (a file capability), setuid bits, foreign owners and a hard link.
std::string hostile_tar() {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_pax(a);
  archive_write_open2(
      a, &out, nullptr,
      [](archive*, void* s, const void* b, size_t n) -> la_ssize_t {
        static_cast<std::string*>(s)->append(static_cast<const char*>(b), n);
        return static_cast<la_ssize_t>(n);
      },
      nullptr, nullptr);
  auto add = [&](const char* path, mode_t type, unsigned perm, const std::string& data,
                 const char* hardlink = nullptr) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, path);
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, perm);
    archive_entry_set_uid(e, 0);
    archive_entry_set_gid(e, 0);
    archive_entry_set_uname(e, "root");
    if (type == AE_IFREG) archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
    if (type == AE_IFCHR) archive_entry_set_rdev(e, makedev(1, 3));
    if (hardlink) {
      archive_entry_set_hardlink(e, hardlink);
      archive_entry_set_size(e, 0);
    }
    if (std::string(path) == "work/bin/tool") archive_entry_xattr_add_entry(e, "security.capability", "\x01\x02", 2);
    archive_write_header(a, e);
    if (!data.empty() && !hardlink) archive_write_data(a, data.data(), data.size());
    archive_entry_free(e);
  };
  add("work/", AE_IFDIR, 0755, "");
  add("work/bin/", AE_IFDIR, 02755, "");
  add("work/bin/tool", AE_IFREG, 04755, "#!/bin/sh\necho hi\n");
  add("work/bin/same", AE_IFREG, 0644, "", "work/bin/tool");
  add("work/null", AE_IFCHR, 0666, "");
  add(("work/" + std::string(120, 'n') + "/deep.txt").c_str(), AE_IFREG, 0600, "deep");
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

}  // namespace

TEST_CASE("tar stream: the copy belongs to the agent: owner rewritten, setuid/setgid, xattrs and devices dropped") {
  const std::string in = hostile_tar();
  std::string out;
  auto st = forge::engine::rewrite_tar_stream(source_of(in),
                                              [&](std::string_view b) -> forge::Status {
                                                out.append(b);
                                                return {};
                                              },
                                              {1000, 1000});
  REQUIRE_MESSAGE(st.has_value(), (st ? "" : st.error().what()));

  auto entries = read_tar(out);
  REQUIRE(entries.has_value());
  std::vector<std::string> paths;
  for (const auto& e : *entries) {
    CAPTURE(e.path);
    paths.push_back(e.path);
    CHECK(e.uid == 1000);
    CHECK(e.gid == 1000);
    CHECK((e.mode & 06000) == 0);
  }
  CHECK(paths == std::vector<std::string>{"work/", "work/bin/", "work/bin/tool", "work/bin/same",
                                          "work/" + std::string(120, 'n') + "/deep.txt"});
  CHECK((*entries)[2].mode == 0755);
  CHECK((*entries)[2].content == "#!/bin/sh\necho hi\n");
  CHECK((*entries)[3].content == "#!/bin/sh\necho hi\n");  // still a hard link to the tool
  CHECK((*entries)[4].content == "deep");

  // No extended attribute (a file capability would be one) and no owner name survives.
  archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  REQUIRE(archive_read_open_memory(a, out.data(), out.size()) == ARCHIVE_OK);
  archive_entry* e = nullptr;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    CHECK(archive_entry_xattr_count(e) == 0);
    CHECK(std::string(archive_entry_uname(e) ? archive_entry_uname(e) : "") == "");
  }
  archive_read_free(a);
}

TEST_CASE("tar stream: a destination that fails stops the copy with its error; a broken source is kInvalid") {
  const std::string in = hostile_tar();
  int calls = 0;
  auto st = forge::engine::rewrite_tar_stream(source_of(in),
                                              [&](std::string_view) -> forge::Status {
                                                ++calls;
                                                return forge::fail(Errc::kUnavailable, "the daemon went away");
                                              },
                                              {1000, 1000});
  REQUIRE_FALSE(st.has_value());
  CHECK(st.error().code == Errc::kUnavailable);
  CHECK(calls == 1);

  std::string cut = in.substr(0, 700);
  auto broken =
      forge::engine::rewrite_tar_stream(source_of(cut), [](std::string_view) { return forge::Status(); }, {1, 1});
  REQUIRE_FALSE(broken.has_value());
  CHECK(broken.error().code == Errc::kInvalid);
}

TEST_CASE("tar stream: a reader keeps only what it asks for, however large the file") {
  TarWriter w;
  REQUIRE(w.add_directory("work"));
  const std::string big = binary_blob(3u << 20);
  REQUIRE(w.add_file("work/big.bin", big));
  REQUIRE(w.add_file("work/note.txt", "a note"));
  REQUIRE(w.add_symlink("work/link", "/etc/passwd"));
  const std::string tar = finish_ok(w);

  std::vector<std::string> seen;
  std::map<std::string, std::string> kept;
  std::size_t pulled = 0;
  auto st = forge::engine::read_tar_stream(
      source_of(tar, 4096, &pulled),
      [&](const forge::engine::TarHeader& h) -> forge::engine::TarKeep {
        seen.push_back(h.path + (h.type == EntryType::kSymlink ? "->" + h.link_target : "") + ":" +
                       std::to_string(h.size));
        return {h.path == "work/big.bin" ? 10u : 1000u, false};
      },
      [&](const forge::engine::TarHeader& h, std::string data) -> forge::Status {
        kept[h.path] = std::move(data);
        return {};
      });
  REQUIRE_MESSAGE(st.has_value(), (st ? "" : st.error().what()));
  CHECK(seen == std::vector<std::string>{"work/:0", "work/big.bin:" + std::to_string(big.size()), "work/note.txt:6",
                                         "work/link->/etc/passwd:0"});
  CHECK(kept.at("work/big.bin") == big.substr(0, 10));
  CHECK(kept.at("work/big.bin").capacity() < 4096);  // never reserved at the file's size
  CHECK(kept.at("work/note.txt") == "a note");
  CHECK(pulled == tar.size());

  // Stopping early leaves the rest of the stream unread.
  pulled = 0;
  st = forge::engine::read_tar_stream(
      source_of(tar, 4096, &pulled),
      [](const forge::engine::TarHeader&) {
        return forge::engine::TarKeep{0, true};
      },
      [](const forge::engine::TarHeader&, std::string) { return forge::Status(); });
  CHECK(st.has_value());
  CHECK(pulled < 64 * 1024);
}

TEST_CASE("concat_tars: every entry of each archive, in order, owners and modes kept; a bad archive is an error") {
  TarWriter a;
  REQUIRE(a.add_directory("tests/"));
  TarEntry t{"tests/test.sh", EntryType::kFile, 0700, "echo hi\n", "", 0, 2000, 2000};
  REQUIRE(a.add_entry(t));
  auto first = a.finish();
  REQUIRE(first.has_value());
  TarWriter b;
  REQUIRE(b.add_symlink("logs/latest", "verifier"));
  REQUIRE(b.add_file("tests/test.sh", "echo later\n"));  // a later entry for the same path stays later
  auto second = b.finish();
  REQUIRE(second.has_value());
  auto both = concat_tars({*first, *second});
  REQUIRE_MESSAGE(both.has_value(), (both ? "" : both.error().what()));
  auto entries = read_tar(*both);
  REQUIRE(entries.has_value());
  REQUIRE(entries->size() == 4);
  CHECK((*entries)[1].path == "tests/test.sh");
  CHECK((*entries)[1].uid == 2000);
  CHECK((*entries)[1].mode == 0700);
  CHECK((*entries)[2].type == EntryType::kSymlink);
  CHECK((*entries)[3].content == "echo later\n");
  auto bad = concat_tars({*first, std::string(1024, 'x')});
  CHECK_FALSE(bad.has_value());
}

TEST_CASE("tar stream: a tail of ours follows the agent's entries in the same archive, its owners kept") {
  TarWriter tail;
  REQUIRE(tail.add_entry(TarEntry{"tests/test.sh", EntryType::kFile, 0700, "exit 0\n", "", 0, 2000, 2000}));
  auto tail_bytes = tail.finish();
  REQUIRE(tail_bytes.has_value());
  std::string out;
  auto sink = [&](std::string_view b) -> forge::Status {
    out.append(b);
    return {};
  };
  auto st = forge::engine::rewrite_tar_stream(source_of(hostile_tar()), sink, {1000, 1000}, {}, *tail_bytes);
  REQUIRE_MESSAGE(st.has_value(), (st ? "" : st.error().what()));
  auto entries = read_tar(out);
  REQUIRE(entries.has_value());
  REQUIRE(entries->size() == 6);
  const auto& last = entries->back();
  CHECK(last.path == "tests/test.sh");
  CHECK(last.uid == 2000);  // the verifier's, not rewritten to the agent's
  CHECK(last.mode == 0700);
  CHECK((*entries)[4].uid == 1000);
  // A tail that is no archive is an error, not a silently shorter copy.
  out.clear();
  auto bad = forge::engine::rewrite_tar_stream(source_of(hostile_tar()), sink, {1000, 1000}, {}, std::string(700, 'x'));
  CHECK_FALSE(bad.has_value());
}
