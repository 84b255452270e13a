// Archive API against the real daemon: files and modes round-trip; stat; errors.
#include <doctest/doctest.h>

#include <algorithm>

#include "engine/archive.h"
#include "engine/exec.h"
#include "engine/tar.h"
#include "support/containers.h"

using namespace forge;
using namespace forge::test;

TEST_CASE("archive put then get round-trips files with their modes") {
  auto& c = *docker_env().client;
  engine::ContainerSpec s;
  s.host.network_mode = "none";
  TestContainer box(s);

  engine::TarWriter w;
  must(w.add_directory("data", 0750));
  must(w.add_file("data/run.sh", "#!/bin/sh\necho ran\n", 0755));
  must(w.add_file("data/secret.txt", std::string("bytes\0with nul", 14), 0600));
  must(w.add_symlink("data/link", "run.sh"));
  auto tar = w.finish();
  must(tar);
  must(engine::put_archive(c, box.id, "/work", *tar));

  // The files are really there, with their modes, as the container sees them.
  auto ran = engine::exec_run(c, box.id, {{"/work/data/run.sh"}});
  must(ran);
  CHECK(ran->out == "ran\n");

  auto back = engine::get_archive(c, box.id, "/work/data");
  must(back);
  CHECK(back->stat.is_dir());
  CHECK(back->stat.perm() == 0750);
  auto entries = engine::read_tar(back->tar);
  must(entries);
  auto find = [&](const std::string& p) {
    auto it = std::find_if(entries->begin(), entries->end(), [&](const engine::TarEntry& e) { return e.path == p; });
    REQUIRE_MESSAGE(it != entries->end(), "missing " << p);
    return *it;
  };
  CHECK(find("data/run.sh").mode == 0755);
  CHECK(find("data/run.sh").content == "#!/bin/sh\necho ran\n");
  CHECK(find("data/secret.txt").mode == 0600);
  CHECK(find("data/secret.txt").content == std::string("bytes\0with nul", 14));
  CHECK(find("data/link").type == engine::EntryType::kSymlink);
  CHECK(find("data/link").link_target == "run.sh");

  auto st = engine::stat_path(c, box.id, "/work/data/secret.txt");
  must(st);
  CHECK(st->name == "secret.txt");
  CHECK(st->size == 14);
  CHECK(st->perm() == 0600);
  CHECK_FALSE(st->is_dir());

  auto file = engine::get_archive(c, box.id, "/work/data/secret.txt");
  must(file);
  auto content = engine::read_single_file(file->tar);
  must(content);
  CHECK(*content == std::string("bytes\0with nul", 14));
}

TEST_CASE("archive errors name the path") {
  auto& c = *docker_env().client;
  engine::ContainerSpec s;
  s.host.network_mode = "none";
  TestContainer box(s);
  auto missing = engine::stat_path(c, box.id, "/no/such/file");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == Errc::kNotFound);
  CHECK(missing.error().what().find("/no/such/file") != std::string::npos);

  engine::TarWriter w;
  must(w.add_file("x", "y"));
  auto tar = w.finish();
  must(tar);
  auto into_missing = engine::put_archive(c, box.id, "/no/such/dir", *tar);
  REQUIRE_FALSE(into_missing.has_value());
  CHECK(into_missing.error().code == Errc::kNotFound);
}
