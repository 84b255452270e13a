// Combining component scores into the trial's score and pass/fail: weighted | all | any.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "manifest/grading_config.h"

namespace forge::grading {

struct Combined {
  double score = 0;
  bool pass = false;
  std::vector<std::string> reasons;  // "combine: …"
};

// `scores` holds the active components: every configured one, scored. With w_c = weights[c]
// (1.0 when absent; a negative or non-finite weight counts as 0, with a reason):
//   weighted: Σ w_c·s_c / Σ w_c, rounded to 6 decimals; Σ w_c = 0 scores 0
//   all:      min s_c
//   any:      max s_c
// pass = score ≥ threshold for each method, which for `all` means every component passes and for
// `any` that some component does. No active component: score 1, pass.
Combined combine(manifest::CombineMethod method, const std::map<std::string, double>& weights, double threshold,
                 const std::map<std::string, double>& scores);

}  // namespace forge::grading
