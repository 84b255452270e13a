// forgectl's own address pool: small subnets per network, never Docker's default pools (about 30
// networks), safe between concurrent forgectl processes on one host.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/file_lock.h"
#include "core/host_settings.h"
#include "core/result.h"

namespace forge::policy {

struct Ipv4Net {
  std::uint32_t base = 0;  // host byte order, aligned to the prefix
  int prefix = 32;
  std::string str() const;      // "10.231.0.16/28"
  std::string gateway() const;  // the first host address
  std::string last_host() const;  // the last host address (before broadcast)
  bool overlaps(const Ipv4Net& o) const;
  std::uint64_t size() const { return 1ULL << (32 - prefix); }
};
Result<Ipv4Net> parse_cidr(std::string_view s);

inline constexpr const char* kDefaultPool = "10.231.0.0/16";

// The prefix that fits `containers` addresses plus network, gateway and broadcast: /28 for up
// to 13 containers, growing as needed.
int prefix_for(int containers);

class SubnetPool {
 public:
  // `state_dir` holds the lock and the reservations file.
  SubnetPool(Ipv4Net pool, std::string state_dir) : pool_(pool), state_dir_(std::move(state_dir)) {}
  // The host's pool (FORGECTL_SUBNET_POOL) and state directory (FORGECTL_STATE_DIR).
  static Result<SubnetPool> from_settings(const HostSettings& s);

  // What the daemon has in use, asked while the pool is locked: another process cannot create a
  // network between this answer and our reservation.
  using InUse = std::function<Result<std::vector<std::string>>()>;

  // Reserves one subnet per entry of `prefixes`, none overlapping the daemon's subnets or another
  // live reservation. Reservations lapse after `ttl` or when their owner process is gone; release
  // them once the networks exist, when the daemon's own list covers them.
  Result<std::vector<Ipv4Net>> reserve(const std::vector<int>& prefixes, const InUse& in_use,
                                       std::chrono::seconds ttl = std::chrono::seconds(600));
  Result<std::vector<Ipv4Net>> reserve(const std::vector<int>& prefixes, const std::vector<std::string>& in_use,
                                       std::chrono::seconds ttl = std::chrono::seconds(600)) {
    return reserve(prefixes, [&] { return Result<std::vector<std::string>>(in_use); }, ttl);
  }
  // How many more /`prefix` subnets the pool could give now (a sweep's admission check).
  Result<std::uint64_t> free_count(int prefix, const InUse& in_use);
  // Drops reservations of these subnets (once their networks exist, or on failure).
  Status release(const std::vector<Ipv4Net>& subnets);
  // Drops every reservation that has lapsed or whose owner process is gone (a forgectl killed
  // between reserving and creating its networks); returns how many. reserve() already ignores
  // them: this leaves the file holding only live ones (down --orphans).
  Result<std::size_t> prune();

  const Ipv4Net& pool() const { return pool_; }
  const std::string& state_dir() const { return state_dir_; }

 private:
  // Every change to the reservations file holds this lock (the file beside it, never the directory).
  Result<FileLock> lock_reservations() const;
  Ipv4Net pool_;
  std::string state_dir_;
};

}  // namespace forge::policy
