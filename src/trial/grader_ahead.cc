// The making of a grader ahead, on its own thread, and its removal when no grade phase took it.
#include "trial/grader_ahead.h"

#include "engine/containers.h"

namespace forge::trial {

std::string remove_ahead_grader(engine::Client& c, const AheadGrader& g) {
  std::string why;
  if (auto st = engine::remove_container(c, g.id, engine::RemoveMode::kForce);
      !st && st.error().code != Errc::kNotFound)
    why = "removing the grader made ahead: " + st.error().what();
  if (g.network)
    if (auto n = remove_verifier_network(c, *g.network); !n.empty()) why += (why.empty() ? "" : "; ") + n;
  return why;
}

void GraderAhead::start(Make make) {
  if (future_.valid()) return;
  future_ = std::async(std::launch::async, [make = std::move(make)]() {
    auto start = Clock::now();
    auto made = make();
    return std::pair<Result<AheadGrader>, Millis>(std::move(made), elapsed_since(start));
  });
}

std::optional<GraderAhead::Taken> GraderAhead::take() {
  if (!future_.valid()) return std::nullopt;
  auto [grader, took] = future_.get();
  return Taken{std::move(grader), took};
}

void GraderAhead::discard(engine::Client& c) {
  auto t = take();
  if (t && t->grader) (void)remove_ahead_grader(c, *t->grader);
}

}  // namespace forge::trial
