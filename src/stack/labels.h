// The labels on every object forgectl creates: how stacks are found, owned and reaped.
#pragma once

#include <ctime>
#include <map>
#include <optional>
#include <string>

#include "core/process_identity.h"

namespace forge::stack {

inline constexpr const char* kLabelStack = "io.forgectl.stack";
inline constexpr const char* kLabelRole = "io.forgectl.role";        // runner | service | proxy | network
inline constexpr const char* kLabelService = "io.forgectl.service";  // the compose service name
inline constexpr const char* kLabelRun = "io.forgectl.run";
inline constexpr const char* kLabelOwner = "io.forgectl.owner";      // host:pid:start
inline constexpr const char* kLabelLease = "io.forgectl.lease";      // expiry, unix seconds
inline constexpr const char* kLabelMode = "io.forgectl.mode";        // detached (up) | attached (run)
inline constexpr const char* kLabelPolicy = "io.forgectl.policy";
inline constexpr const char* kLabelSource = "io.forgectl.source";    // the task or manifest path
inline constexpr const char* kLabelBridge = "io.forgectl.bridge";    // networks: the host bridge, for firewall cleanup

enum class OwnerMode { kDetached, kAttached };

// The labels every object of one stack carries.
struct StackLabels {
  std::string stack, run, policy, source;
  ProcessIdentity owner;
  std::time_t lease_expires = 0;
  OwnerMode mode = OwnerMode::kDetached;

  std::map<std::string, std::string> to_map() const;
};

// Read back from an object's labels; nullopt when it is not a forgectl stack object.
struct StackOwnership {
  std::string stack;
  std::optional<ProcessIdentity> owner;
  std::time_t lease_expires = 0;
  OwnerMode mode = OwnerMode::kDetached;
};
std::optional<StackOwnership> ownership_of(const std::map<std::string, std::string>& labels);

}  // namespace forge::stack
