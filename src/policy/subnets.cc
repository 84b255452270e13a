// The address pool, with reservations under an exclusive lock (flock) in the state directory.
#include "policy/subnets.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/file_lock.h"
#include "core/process_identity.h"

namespace forge::policy {

std::string Ipv4Net::str() const {
  return std::to_string(base >> 24) + "." + std::to_string(base >> 16 & 255) + "." + std::to_string(base >> 8 & 255) +
         "." + std::to_string(base & 255) + "/" + std::to_string(prefix);
}

std::string Ipv4Net::gateway() const {
  Ipv4Net g{base + 1, 32};
  auto s = g.str();
  return s.substr(0, s.find('/'));
}

std::string Ipv4Net::last_host() const {
  Ipv4Net h{base + static_cast<std::uint32_t>(size()) - 2, 32};
  auto s = h.str();
  return s.substr(0, s.find('/'));
}

bool Ipv4Net::overlaps(const Ipv4Net& o) const {
  std::uint64_t a0 = base, a1 = a0 + size(), b0 = o.base, b1 = b0 + o.size();
  return a0 < b1 && b0 < a1;
}

Result<Ipv4Net> parse_cidr(std::string_view s) {
  std::string str(s);
  unsigned a, b, c, d;
  int prefix;
  char tail;
  if (std::sscanf(str.c_str(), "%u.%u.%u.%u/%d%c", &a, &b, &c, &d, &prefix, &tail) != 5 || a > 255 || b > 255 ||
      c > 255 || d > 255 || prefix < 0 || prefix > 32)
    return fail(Errc::kInvalid, "'" + str + "' is not an IPv4 subnet like 10.231.0.0/16");
  std::uint32_t base = a << 24 | b << 16 | c << 8 | d;
  std::uint32_t mask = prefix == 0 ? 0 : ~0u << (32 - prefix);
  if (base & ~mask) return fail(Errc::kInvalid, "'" + str + "' has host bits set; did you mean " + Ipv4Net{base & mask, prefix}.str() + "?");
  return Ipv4Net{base, prefix};
}

int prefix_for(int containers) {
  int prefix = 28;
  while (prefix > 16 && (1 << (32 - prefix)) - 3 < containers) --prefix;
  return prefix;
}

Result<SubnetPool> SubnetPool::from_settings(const HostSettings& s) {
  auto pool = parse_cidr(s.subnet_pool.empty() ? kDefaultPool : s.subnet_pool);
  if (!pool) return pool.fail_with("FORGECTL_SUBNET_POOL");
  if (pool->prefix > 28) return fail(Errc::kInvalid, "FORGECTL_SUBNET_POOL " + pool->str() + " is smaller than one /28");
  return SubnetPool(*pool, s.state_dir);
}

namespace {

struct Reservation {
  std::string subnet;
  std::string owner;  // ProcessIdentity::str()
  long long expires = 0;
};

std::vector<Reservation> load(const std::string& path) {
  std::vector<Reservation> out;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    Reservation r;
    if (ss >> r.subnet >> r.owner >> r.expires) out.push_back(r);
  }
  return out;
}

Status store(const std::string& path, const std::vector<Reservation>& rs) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    for (const auto& r : rs) f << r.subnet << ' ' << r.owner << ' ' << r.expires << '\n';
    if (!f) return fail(Errc::kIo, "cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return fail(Errc::kIo, "cannot replace " + path + ": " + std::strerror(errno));
  return {};
}

bool live(const Reservation& r, long long now) {
  if (r.expires <= now) return false;
  auto owner = ProcessIdentity::parse(r.owner);
  return owner && owner->liveness() != ProcessIdentity::Liveness::kDead;
}

// What a new subnet must not overlap: the live reservations (also returned, to be stored again)
// and the daemon's own subnets (IPv6 and odd entries cannot overlap ours and are skipped).
struct Taken {
  std::vector<Reservation> live;
  std::vector<Ipv4Net> nets;
};
Taken taken_subnets(const std::string& path, const std::vector<std::string>& in_use, long long now) {
  Taken t;
  for (const auto& r : load(path)) {
    if (!live(r, now)) continue;
    t.live.push_back(r);
    if (auto n = parse_cidr(r.subnet)) t.nets.push_back(*n);
  }
  for (const auto& s : in_use)
    if (auto n = parse_cidr(s)) t.nets.push_back(*n);
  return t;
}

bool clashes(const Ipv4Net& cand, const std::vector<Ipv4Net>& taken) {
  for (const auto& t : taken)
    if (cand.overlaps(t)) return true;
  return false;
}

}  // namespace

Result<std::vector<Ipv4Net>> SubnetPool::reserve(const std::vector<int>& prefixes, const InUse& in_use_fn,
                                                 std::chrono::seconds ttl) {
  auto lock = lock_reservations();
  if (!lock) return lock.fail_with("reserving subnets");
  auto in_use = in_use_fn();
  if (!in_use) return in_use.fail_with("reserving subnets");
  std::string path = state_dir_ + "/subnets.reserved";
  long long now = std::time(nullptr);
  auto [kept, taken] = taken_subnets(path, *in_use, now);

  std::string me = ProcessIdentity::current().str();
  std::vector<Ipv4Net> out;
  for (int prefix : prefixes) {
    if (prefix < pool_.prefix) return fail(Errc::kInvalid, "a /" + std::to_string(prefix) + " does not fit in the pool " + pool_.str());
    std::uint64_t step = 1ULL << (32 - prefix);
    bool found = false;
    for (std::uint64_t b = pool_.base; b + step <= std::uint64_t(pool_.base) + pool_.size(); b += step) {
      Ipv4Net cand{static_cast<std::uint32_t>(b), prefix};
      if (clashes(cand, taken)) continue;
      taken.push_back(cand);
      out.push_back(cand);
      kept.push_back({cand.str(), me, now + ttl.count()});
      found = true;
      break;
    }
    if (!found)
      return fail(Errc::kUnavailable, "the subnet pool " + pool_.str() + " is exhausted (" + std::to_string(taken.size()) +
                                          " subnets in use or reserved); remove stale stacks with 'forgectl down --orphans' "
                                          "or set FORGECTL_SUBNET_POOL to a larger range");
  }
  if (auto st = store(path, kept); !st) return st.fail_with("reserving subnets");
  return out;
}

Status SubnetPool::release(const std::vector<Ipv4Net>& subnets) {
  if (subnets.empty()) return {};
  auto lock = lock_reservations();
  if (!lock) return lock.fail_with("releasing subnets");
  std::string path = state_dir_ + "/subnets.reserved";
  std::vector<Reservation> kept;
  for (const auto& r : load(path)) {
    bool drop = false;
    for (const auto& s : subnets) drop = drop || r.subnet == s.str();
    if (!drop) kept.push_back(r);
  }
  return store(path, kept);
}

Result<FileLock> SubnetPool::lock_reservations() const { return FileLock::acquire(state_dir_ + "/subnets.lock"); }

Result<std::size_t> SubnetPool::prune() {
  auto lock = lock_reservations();
  if (!lock) return lock.fail_with("pruning subnet reservations");
  std::string path = state_dir_ + "/subnets.reserved";
  auto all = load(path);
  std::vector<Reservation> kept;
  long long now = std::time(nullptr);
  for (const auto& r : all)
    if (live(r, now)) kept.push_back(r);
  if (kept.size() == all.size()) return std::size_t{0};
  if (auto st = store(path, kept); !st) return st.fail_with("pruning subnet reservations");
  return all.size() - kept.size();
}

Result<std::uint64_t> SubnetPool::free_count(int prefix, const InUse& in_use_fn) {
  if (prefix < pool_.prefix) return std::uint64_t{0};
  auto lock = lock_reservations();
  if (!lock) return lock.fail_with("counting free subnets");
  auto in_use = in_use_fn();
  if (!in_use) return in_use.fail_with("counting free subnets");
  auto taken = taken_subnets(state_dir_ + "/subnets.reserved", *in_use, std::time(nullptr)).nets;
  std::uint64_t step = 1ULL << (32 - prefix), free = 0;
  for (std::uint64_t b = pool_.base; b + step <= std::uint64_t(pool_.base) + pool_.size(); b += step)
    free += !clashes(Ipv4Net{static_cast<std::uint32_t>(b), prefix}, taken);
  return free;
}

}  // namespace forge::policy
