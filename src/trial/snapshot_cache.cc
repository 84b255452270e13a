#include "trial/snapshot_cache.h"

#include <cctype>
#include <cstdint>

#include "engine/images.h"

namespace forge::trial {

std::string snapshot_tag(const std::string& run_id, std::size_t n) {
  std::string t;
  for (char ch : run_id) {
    auto u = static_cast<unsigned char>(ch);
    if (std::isalnum(u) || ch == '.' || ch == '-' || ch == '_') t += static_cast<char>(std::tolower(u));
    if (t.size() >= 100) break;
  }
  if (t.empty() || t.front() == '.' || t.front() == '-') t = "run" + t;
  return t + "-" + std::to_string(n);
}

void SnapshotCache::Lease::publish(ForkState s) {
  if (!taking()) return;
  std::lock_guard lock(e_->mu);
  e_->state = std::move(s);
  hold_.unlock();
}

void SnapshotCache::Lease::refuse() {
  if (!taking()) return;
  std::lock_guard lock(e_->mu);
  e_->refused = true;
  hold_.unlock();
}

SnapshotCache::Lease SnapshotCache::acquire(engine::Client& c, const std::string& key) {
  Entry* e = nullptr;
  {
    std::lock_guard lock(mu_);
    auto& slot = entries_[key + "\n" + std::to_string(reinterpret_cast<std::uintptr_t>(&c))];
    if (!slot) {
      slot = std::make_unique<Entry>();
      slot->client = &c;
      slot->index = entries_.size();
    }
    e = slot.get();
  }
  Lease l;
  l.e_ = e;
  std::unique_lock hold(e->taking);
  std::lock_guard lock(e->mu);
  if (e->state) {
    l.fork_ = e->state;
  } else if (!e->refused) {
    l.hold_ = std::move(hold);
    l.tag_ = snapshot_tag(run_id_, e->index);
  }
  return l;
}

std::vector<std::string> SnapshotCache::remove_all() {
  std::vector<std::string> errors;
  std::lock_guard lock(mu_);
  for (auto& [key, e] : entries_) {
    std::lock_guard el(e->mu);
    if (!e->state) continue;
    if (auto st = engine::remove_image(*e->client, e->state->image_id, true); !st && st.error().code != Errc::kNotFound)
      errors.push_back(st.error().what());
    e->state.reset();
    e->refused = true;
  }
  return errors;
}

}  // namespace forge::trial
