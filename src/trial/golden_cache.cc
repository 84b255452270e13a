// The golden state once per run: computed twice and compared, kept in memory and in DIR/golden.
#include "trial/golden_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include "core/files.h"
#include "core/json.h"
#include "core/service_token.h"
#include "core/sha256.h"
#include "grading/diff.h"

namespace forge::trial {

namespace fs = std::filesystem;

namespace {

constexpr int kFormat = 1;
// A golden state is the task's whole domain state, kept whole: the same cap as one state file.
constexpr std::uintmax_t kMaxFileBytes = limits::kMaxTaskFileBytes;

std::string entry_json(const GoldenEntry& e) {
  json::Writer w;
  w.begin_object()
      .field("task_id", e.task_id)
      .field("content_key", e.key)
      .field("deterministic", e.deterministic)
      .field("differing", e.differing)
      .field("state_hash", e.replay.hash)
      .field("state", e.replay.state_json)
      .key("actions")
      .begin_array();
  for (const auto& s : e.replay.steps) w.begin_object().field("tool", s.tool).field("refusal", s.refusal).end_object();
  w.end_array().end_object();
  return w.take();
}

// What differs between two replays of the same golden actions, for the warning.
std::string what_differs(const GoldenReplay& a, const GoldenReplay& b) {
  std::string out;
  if (a.steps.size() == b.steps.size())
    for (std::size_t i = 0; i < a.steps.size(); ++i)
      if (a.steps[i].refusal != b.steps[i].refusal) out += "action " + std::to_string(i + 1) + "'s outcome; ";
  if (a.hash == b.hash) return out.empty() ? "nothing" : out.substr(0, out.size() - 2);
  auto d = grading::diff_states(a.state_json, b.state_json);
  std::string fields;
  if (d) {
    // The field names of every "different" record: what the warning should name.
    if (auto doc = json::parse(d->json, "golden diff"); doc && doc->IsObject())
      if (const auto* tables = json::get_object(*doc, "tables"))
        for (auto t = tables->MemberBegin(); t != tables->MemberEnd(); ++t)
          if (const auto* diffs = t->value.IsObject() ? json::get_array(t->value, "different") : nullptr)
            for (const auto& rec : diffs->GetArray())
              if (const auto* fd = rec.IsObject() ? json::get_array(rec, "field_diffs") : nullptr)
                for (const auto& f : fd->GetArray()) {
                  std::string name = std::string(t->name.GetString()) + "." + json::get_string(f, "field");
                  if (fields.find(name) == std::string::npos) fields += (fields.empty() ? "" : ", ") + name;
                }
    out += "fields " + (fields.empty() ? std::string("?") : fields) + " (" + d->summary + ")";
  } else {
    out += "the states (" + d.error().what() + ")";
  }
  return out;
}

}  // namespace

const char* to_string(GoldenSource s) {
  switch (s) {
    case GoldenSource::kComputed: return "computed";
    case GoldenSource::kReused: return "reused";
    case GoldenSource::kOwn: return "replayed";
  }
  return "replayed";
}

std::string golden_file_text(const GoldenEntry& e, const std::string& secret) {
  std::string body = entry_json(e);
  json::Writer w;
  w.begin_object().field("format", kFormat).field("hmac", hmac_sha256_hex(secret, body)).field("entry", body).end_object();
  return w.take() + "\n";
}

Result<GoldenEntry> parse_golden_file(std::string_view text, const std::string& key,
                                      const std::vector<std::string>& tools, const std::string& secret) {
  if (secret.empty()) return fail(Errc::kInvalid, "there is no key to check it with");
  auto doc = json::parse(text, "golden cache file", kMaxFileBytes + 1024);
  if (!doc) return doc.fail();
  if (!doc->IsObject() || json::get_int(*doc, "format") != kFormat) return fail(Errc::kInvalid, "not a format 1 file");
  std::string body = json::get_string(*doc, "entry");
  if (hmac_sha256_hex(secret, body) != json::get_string(*doc, "hmac"))
    return fail(Errc::kInvalid, "its HMAC does not match: it was changed, or made on another host");
  auto e = json::parse(body, "golden cache entry", kMaxFileBytes);
  if (!e) return e.fail();
  if (!e->IsObject()) return fail(Errc::kInvalid, "the entry is not an object");
  GoldenEntry g;
  g.task_id = json::get_string(*e, "task_id");
  g.key = json::get_string(*e, "content_key");
  g.deterministic = json::get_bool(*e, "deterministic");
  g.differing = json::get_string(*e, "differing");
  g.replay.hash = json::get_string(*e, "state_hash");
  g.replay.state_json = json::get_string(*e, "state");
  if (g.key != key) return fail(Errc::kInvalid, "it is for content key " + g.key.substr(0, 16) + "…, not this task's");
  if (sha256_hex(g.replay.state_json) != g.replay.hash) return fail(Errc::kInvalid, "its state does not hash to its hash");
  if (const auto* actions = json::get_array(*e, "actions"))
    for (const auto& a : actions->GetArray())
      if (a.IsObject()) g.replay.steps.push_back({json::get_string(a, "tool"), json::get_string(a, "refusal")});
  bool same = g.replay.steps.size() == tools.size();
  for (std::size_t i = 0; same && i < tools.size(); ++i) same = g.replay.steps[i].tool == tools[i];
  if (!same) return fail(Errc::kInvalid, "its actions are not the task's golden actions");
  return g;
}

Result<std::string> golden_cache_secret(const std::string& state_dir) {
  const std::string path = (fs::path(state_dir) / "golden-cache.key").string();
  std::error_code ec;
  fs::create_directories(state_dir, ec);
  if (auto token = new_control_token()) {
    // Written whole under a name of its own, then linked into place: link(2) fails when another
    // process made the key first, and no reader ever sees a part of one.
    const std::string tmp = path + "." + std::to_string(::getpid()) + ".tmp";
    ::unlink(tmp.c_str());  // a leftover of a killed process of this pid
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      bool ok = ::write(fd, token->data(), token->size()) == static_cast<ssize_t>(token->size()) && ::fsync(fd) == 0;
      ::close(fd);
      int linked = ok ? ::link(tmp.c_str(), path.c_str()) : -1;
      ::unlink(tmp.c_str());
      if (linked == 0) return *token;
    }
  }
  auto text = read_text(path, 4096);
  if (!text) return text.fail_with("the golden cache's key");
  if (auto st = check_control_token(*text); !st) return fail(Errc::kInvalid, path + " is not a key of 64 hex digits");
  return *text;
}

std::string GoldenCache::path_of(const std::string& key) const { return (fs::path(dir_) / (key + ".json")).string(); }

void GoldenCache::warn(const std::string& msg) {
  if (log_) log_->warn(msg);
}

std::shared_ptr<const GoldenEntry> GoldenCache::load(const std::string& task_id, const std::string& key,
                                                     const std::vector<std::string>& tools) {
  const std::string path = path_of(key);
  auto text = read_text(path, kMaxFileBytes + 2048);
  if (!text) {
    if (text.error().code != Errc::kNotFound) warn("golden cache: cannot read " + path + ": " + text.error().what());
    return nullptr;
  }
  auto e = parse_golden_file(*text, key, tools, secret_);
  if (!e) {
    warn("golden cache: " + path + " is not trusted (" + e.error().what() + "): task '" + task_id +
         "''s golden state is computed again");
    return nullptr;
  }
  auto entry = std::make_shared<const GoldenEntry>(std::move(*e));
  if (!entry->deterministic)
    warn("golden replay of task '" + task_id + "' is not deterministic (" + entry->differing +
         "): every trial replays its own golden state (list such fields in initial_state.unstable_fields)");
  return entry;
}

Result<std::shared_ptr<const GoldenEntry>> GoldenCache::compute(const std::string& task_id, const std::string& key,
                                                                 const Replay& replay) {
  // The two replays at once: each brings up a server of its own.
  auto second = std::async(std::launch::async, replay);
  auto first = replay();
  auto other = second.get();
  if (!first) return first.fail();
  if (!other) return other.fail();
  auto e = std::make_shared<GoldenEntry>();
  e->task_id = task_id;
  e->key = key;
  e->replay = std::move(*first);
  bool same = e->replay.hash == other->hash && e->replay.steps.size() == other->steps.size();
  for (std::size_t i = 0; same && i < other->steps.size(); ++i) same = e->replay.steps[i].refusal == other->steps[i].refusal;
  if (!same) {
    e->deterministic = false;
    e->differing = what_differs(e->replay, *other);
    warn("golden replay of task '" + task_id + "' is not deterministic (two replays differ: " + e->differing +
         "): every trial replays its own golden state (list such fields in initial_state.unstable_fields)");
  }
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (auto st = write_file_atomic(path_of(key), golden_file_text(*e, secret_)); !st)
    warn("golden cache: cannot keep task '" + task_id + "''s golden state for --resume: " + st.error().what());
  return std::shared_ptr<const GoldenEntry>(std::move(e));
}

Result<GoldenCache::Got> GoldenCache::get(const std::string& task_id, const std::string& key,
                                          const std::vector<std::string>& tools, const Replay& replay) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(mu_);
    auto& s = slots_[key];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  std::lock_guard lock(slot->mu);  // concurrent trials of the task wait for the one computation
  if (slot->entry) return Got{slot->entry, GoldenSource::kReused, 0};
  if (auto loaded = load(task_id, key, tools)) {
    slot->entry = loaded;
    return Got{loaded, GoldenSource::kReused, 0};
  }
  auto made = compute(task_id, key, replay);
  if (!made) {
    warn("golden cache: task '" + task_id + "': " + made.error().what() + "; this trial replays its own");
    return made.fail_with("computing the golden state once for the run");
  }
  slot->entry = *made;
  return Got{*made, GoldenSource::kComputed, 2};
}

}  // namespace forge::trial
