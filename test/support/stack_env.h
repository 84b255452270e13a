// Helpers for stack tests: temp task directories, in-process up with guaranteed teardown.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/service_token.h"
#include "core/strings.h"
#include "engine/images.h"
#include "engine/tar.h"
#include "manifest/environment_parse.h"
#include "stack/teardown.h"
#include "stack/up.h"
#include "support/docker_env.h"

namespace forge::test {

// A fresh directory under /tmp, removed at scope exit.
class TempDir {
 public:
  TempDir() : path_(std::filesystem::temp_directory_path() / ("forgectl-test-" + random_hex(6))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string write(const std::string& name, const std::string& text) const {
    auto p = path_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// The control token test stacks give json-db, and rag its derivation (a fixed one: tests send it
// themselves).
inline const std::string kTestControlToken = std::string(64, 'c');

// Up options with the suite's host settings, and the services' control tokens.
inline stack::UpOptions test_up_options() {
  stack::UpOptions o;
  o.host = docker_env().host;
  o.service_env = service_token_env(kTestControlToken);
  return o;
}

// A stack brought up in-process; removed at scope exit, pass or fail.
class TestStack {
 public:
  explicit TestStack(const std::string& manifest_path, stack::UpOptions opts = test_up_options()) {
    auto env = manifest::load_environment(manifest_path);
    REQUIRE_MESSAGE(env.has_value(), (env ? "" : env.error().what()));
    opts.run_id = docker_env().run_value;
    auto r = stack::up_stack(*docker_env().client, *env, opts);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
    result = std::move(*r);
  }
  ~TestStack() {
    if (!result.name.empty()) (void)stack::remove_stack(*docker_env().client, result.name);
  }
  TestStack(const TestStack&) = delete;
  TestStack& operator=(const TestStack&) = delete;

  const std::string& id(const std::string& key) const { return result.containers.at(key); }
  stack::UpResult result;
};

}  // namespace forge::test

namespace forge::test {

// A runner image that is not forgectl's own (so its root is writable and it runs as root, as a
// task's own image may): FROM forgectl/runner:local, USER root. Attacks that need to change the
// runner's files (a fake `nc` first on PATH) run in it, so grading is shown safe even then.
// Built once per suite run, labelled, removed by the suite's leftover sweep.
inline std::string writable_root_runner_image() {
  static std::string tag = [] {
    engine::TarWriter tar;
    REQUIRE(tar.add_file("Dockerfile", "FROM forgectl/runner:local\nUSER root\n").has_value());
    auto bytes = tar.finish();
    REQUIRE(bytes.has_value());
    engine::BuildSpec spec;
    spec.context_tar = std::move(*bytes);
    std::string t = "forgectl-test/writable-runner:" + docker_env().run_value;
    spec.tags = {t};
    spec.labels = test_labels();
    auto built = engine::build_image(*docker_env().client, spec);
    REQUIRE_MESSAGE(built.has_value(), (built ? "" : built.error().what()));
    return t;
  }();
  return tag;
}

}  // namespace forge::test
