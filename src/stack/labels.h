// The labels on every object forgectl creates: how stacks are found, owned and reaped.
#pragma once

#include <chrono>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/process_identity.h"

namespace forge::stack {

inline constexpr const char* kLabelStack = "io.forgectl.stack";
// runner | service | proxy | probe | grader | golden | volume (containers and volumes), network
inline constexpr const char* kLabelRole = "io.forgectl.role";
inline constexpr const char* kLabelService = "io.forgectl.service";  // the compose service name
inline constexpr const char* kLabelRun = "io.forgectl.run";
inline constexpr const char* kLabelOwner = "io.forgectl.owner";      // host:pid:start
inline constexpr const char* kLabelLease = "io.forgectl.lease";      // expiry, unix seconds
inline constexpr const char* kLabelMode = "io.forgectl.mode";        // detached (up) | attached (run)
inline constexpr const char* kLabelPolicy = "io.forgectl.policy";
inline constexpr const char* kLabelSource = "io.forgectl.source";    // the task or manifest path
// Snapshot images of forked setups and the containers they are made in: the run's id. No stack
// label, since containers inherit their image's labels (docs/sweeps.md "Forks").
inline constexpr const char* kLabelSnapshot = "io.forgectl.snapshot";
// A snapshot kept past its run (`run --keep-snapshots`): its content key (SHA-256 of what setup
// read), which a later run looks it up by; and its workspace's SHA-256. Such an image is not the
// run's leftover, nor a dead owner's orphan: only `down --snapshots` removes it.
inline constexpr const char* kLabelSnapshotKey = "io.forgectl.snapshot-key";
inline constexpr const char* kLabelSnapshotWorkspace = "io.forgectl.snapshot-workspace";
inline constexpr const char* kLabelBridge = "io.forgectl.bridge";    // networks: the host bridge, for firewall cleanup

enum class OwnerMode { kDetached, kAttached };

// The labels every object of one stack carries.
struct StackLabels {
  std::string stack, run, policy, source;
  ProcessIdentity owner;
  std::time_t lease_expires = 0;
  OwnerMode mode = OwnerMode::kDetached;

  // A stack this process creates and owns, leased for `lease` from now.
  static StackLabels owned_here(std::string stack, std::string run, std::string policy, std::string source,
                                std::chrono::seconds lease, OwnerMode mode);

  std::map<std::string, std::string> to_map() const;
  // The labels of one container or volume made for this stack, whatever layer makes it: every
  // object names the owner, mode, run and lease, so none can hide the stack's owner (inventory.h).
  std::map<std::string, std::string> for_object(std::string_view role) const;
};

// One object's labels read back; nullopt when it is not a forgectl stack object. An object made
// by hand or by an older forgectl may lack any of the rest.
struct ObjectOwnership {
  std::string stack;
  std::optional<ProcessIdentity> owner;
  std::time_t lease_expires = 0;  // 0: no lease label
  std::optional<OwnerMode> mode;
};
std::optional<ObjectOwnership> ownership_of(const std::map<std::string, std::string>& labels);

// A stack's ownership, from all of its objects: whichever object is listed first decides nothing.
struct StackOwnership {
  std::vector<ProcessIdentity> owners;    // every distinct owner an object names
  std::time_t lease_expires = 0;          // the latest lease an object carries; 0: none carries one
  OwnerMode mode = OwnerMode::kDetached;  // attached when any object says so

  void add(const ObjectOwnership& o);
  // The owner to show: a live one when there is one, else the first named; nullopt: none named.
  std::optional<ProcessIdentity> shown_owner() const;
};

}  // namespace forge::stack
