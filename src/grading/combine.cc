// The combine rules of grading.yaml (combine.method, weights, pass_threshold).
#include "grading/combine.h"

#include <algorithm>
#include <cmath>

#include "grading/component.h"

namespace forge::grading {

namespace {

const char* method_name(manifest::CombineMethod m) {
  switch (m) {
    case manifest::CombineMethod::kWeighted: return "weighted";
    case manifest::CombineMethod::kAll: return "all";
    case manifest::CombineMethod::kAny: return "any";
  }
  return "?";
}

}  // namespace

Combined combine(manifest::CombineMethod method, const std::map<std::string, double>& weights, double threshold,
                 const std::map<std::string, double>& scores) {
  Combined out;
  if (scores.empty()) {
    out.score = 1;
    out.pass = true;
    out.reasons.push_back("combine: no grading component is configured: score 1, pass");
    return out;
  }
  std::string terms;
  switch (method) {
    case manifest::CombineMethod::kWeighted: {
      double sum = 0, total = 0;
      for (const auto& [name, s] : scores) {
        auto it = weights.find(name);
        double w = it == weights.end() ? 1.0 : it->second;
        if (!std::isfinite(w) || w < 0) {
          out.reasons.push_back("combine: the weight of " + name + " (" + format_score(w) + ") is invalid; counted as 0");
          w = 0;
        }
        sum += w * s;
        total += w;
        terms += (terms.empty() ? "" : " + ") + format_score(w) + "×" + name + " " + format_score(s);
      }
      if (total <= 0) out.reasons.push_back("combine: every configured component has weight 0: score 0");
      // Tolokaforge rounds to 6 places, so that 0.8 built from thirds still reaches a 0.8 threshold.
      out.score = total > 0 ? std::round(sum / total * 1e6) / 1e6 : 0;
      terms = "(" + terms + ") / " + format_score(total);
      break;
    }
    case manifest::CombineMethod::kAll:
    case manifest::CombineMethod::kAny: {
      const bool all = method == manifest::CombineMethod::kAll;
      out.score = all ? 1 : 0;
      for (const auto& [name, s] : scores) {
        out.score = all ? std::min(out.score, s) : std::max(out.score, s);
        terms += (terms.empty() ? "" : ", ") + name + " " + format_score(s);
      }
      terms = std::string(all ? "min(" : "max(") + terms + ")";
      break;
    }
  }
  out.pass = out.score >= threshold;
  out.reasons.push_back("combine: " + std::string(method_name(method)) + " " + terms + " = " + format_score(out.score) +
                        (out.pass ? " ≥ " : " < ") + "threshold " + format_score(threshold) + ": " +
                        (out.pass ? "pass" : "fail"));
  return out;
}

}  // namespace forge::grading
