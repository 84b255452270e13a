#include "trial/snapshot_cache.h"

#include <cctype>
#include <cstdint>

#include "engine/images.h"
#include "stack/labels.h"

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

Result<std::optional<ForkState>> find_kept_snapshot(engine::Client& c, const std::string& content_key) {
  auto is = engine::list_images(c, {{"label", {std::string(stack::kLabelSnapshotKey) + "=" + content_key}}});
  if (!is) return is.fail_with("looking for a kept snapshot");
  const engine::ImageInfo* newest = nullptr;
  for (const auto& i : *is)
    if (i.labels.count(stack::kLabelSnapshotWorkspace) && (!newest || std::pair(i.created.size(), i.created) > std::pair(newest->created.size(), newest->created))) newest = &i;
  if (!newest) return std::optional<ForkState>();
  ForkState f;
  f.image_id = newest->id;
  f.workspace_sha256 = newest->labels.at(stack::kLabelSnapshotWorkspace);
  f.kept = true;
  return std::optional<ForkState>(std::move(f));
}

SnapshotCache::Lease SnapshotCache::acquire(engine::Client& c, const std::string& key, const std::string& content_key) {
  Entry* e = nullptr;
  {
    std::lock_guard lock(mu_);
    auto& slot = entries_[key + "\n" + std::to_string(reinterpret_cast<std::uintptr_t>(&c))];
    if (!slot) {
      slot = std::make_unique<Entry>();
      slot->client = &c;
      slot->index = entries_.size();
      slot->content_key = content_key;
    }
    e = slot.get();
  }
  Lease l;
  l.e_ = e;
  std::unique_lock hold(e->taking);
  std::lock_guard lock(e->mu);
  if (!e->looked && !e->content_key.empty() && !e->state && !e->refused) {
    e->looked = true;  // once: a lookup that fails leaves the run taking its own (kept) snapshot
    if (auto kept = find_kept_snapshot(c, e->content_key); kept && *kept) e->state = std::move(**kept);
  }
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
    if (!e->state || !e->content_key.empty()) continue;  // a kept snapshot outlives the run
    std::vector<std::string> images{e->state->image_id};
    images.insert(images.end(), e->state->service_images.begin(), e->state->service_images.end());
    for (const auto& image : images)
      if (auto st = engine::remove_image(*e->client, image, true); !st && st.error().code != Errc::kNotFound)
        errors.push_back(st.error().what());
    e->state.reset();
    e->refused = true;
  }
  return errors;
}

}  // namespace forge::trial
