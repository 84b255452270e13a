// The trial's json-db namespace, from the host: initial fixtures, the final state for grading,
// and the snapshot/reset/restore that golden replay needs. The service sits on the task's
// internal network; the host reaches its address there directly (it owns the bridge).
#pragma once

#include <functional>
#include <string>

#include "core/result.h"
#include "grading/evidence.h"

namespace forge::sweep {

class DbClient {
 public:
  DbClient(std::string base_url, std::string trial) : base_(std::move(base_url)), trial_(std::move(trial)) {}
  const std::string& trial() const { return trial_; }

  // POST /trials/{id}/init with {tables, unstable_fields}.
  Status init(const std::string& init_body_json);
  Result<std::string> state_json();  // the `data` of GET /trials/{id}/state
  Result<std::string> stable_hash();
  Status snapshot(const std::string& name);
  Status restore(const std::string& name);
  Status reset();

 private:
  Result<std::string> call(const char* method, const std::string& path, const std::string& body);
  std::string base_, trial_;
};

// A StateStore for grading over a DbClient; golden actions replay through `replay`.
class DbStateStore final : public grading::StateStore {
 public:
  DbStateStore(DbClient& db, std::function<Status(const std::string&, const std::string&)> replay)
      : db_(db), replay_(std::move(replay)) {}
  Result<std::string> state_json() override { return db_.state_json(); }
  Result<std::string> stable_hash() override { return db_.stable_hash(); }
  Status snapshot(const std::string& name) override { return db_.snapshot(name); }
  Status restore(const std::string& name) override { return db_.restore(name); }
  Status reset() override { return db_.reset(); }
  Status replay(const std::string& tool, const std::string& args) override { return replay_(tool, args); }

 private:
  DbClient& db_;
  std::function<Status(const std::string&, const std::string&)> replay_;
};

}  // namespace forge::sweep
