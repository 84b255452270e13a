// The agent's system prompt, resolved in Tolokaforge's order of precedence (reference §2.5).
#include <filesystem>

#include "manifest/files.h"
#include "manifest/task_reader.h"

namespace forge::manifest {

namespace {

constexpr std::string_view kAdapterSentinel = "__adapter__";
// A system prompt is text for the model: 1 MiB is far beyond any context window.
constexpr std::size_t kPromptMax = std::size_t{1} << 20;

// Tolokaforge's "__adapter__" prompt wraps a τ-bench-style instruction around the adapter's
// policy; a native task's adapter has no policy text of its own, so its guidance stands in.
constexpr std::string_view kAdapterInstructions =
    "You are a customer service agent that helps the user according to the <policy> provided below.\n"
    "In each turn you can either send a message to the user or make a tool call, not both.\n"
    "Try to be helpful and always follow the policy.";

std::string bullets(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "- " : "\n- ") + l;
  return out;
}

}  // namespace

void resolve_system_prompt(YamlReader& r, const std::optional<Field>& field,
                           const std::optional<std::string>& policy_prompt, TaskConfig& task) {
  // The file is read even when the policy wins, so a broken reference is still reported.
  std::optional<std::string> file_text;
  bool adapter = false;
  if (field && !field->is_null()) {
    auto value = r.string(*field, "");
    if (value && *value == kAdapterSentinel) {
      adapter = true;
    } else if (value) {
      if (auto text = read_task_file(r, *field, "system_prompt", task.dir, *value, kPromptMax, Reach::kAgent)) {
        file_text = std::move(*text);
        task.system_prompt_file = (std::filesystem::path(task.dir) / *value).lexically_normal().string();
      }
    }
  }
  // An empty policy prompt does not count, as in Tolokaforge (it tests the string's truth).
  if (policy_prompt && !policy_prompt->empty()) {
    task.system_prompt = *policy_prompt;
    task.system_prompt_source = PromptSource::kPolicy;
  } else if (file_text) {
    task.system_prompt = *file_text;
    task.system_prompt_source = PromptSource::kFile;
  } else if (adapter) {
    task.system_prompt = "<instructions>\n" + std::string(kAdapterInstructions) + "\n</instructions>\n<policy>\n" +
                         bullets(task.guidance) + (task.guidance.empty() ? "" : "\n") + "</policy>";
    task.system_prompt_source = PromptSource::kAdapter;
  } else {
    task.system_prompt = "You are a helpful assistant.";
    if (!task.guidance.empty()) task.system_prompt += "\n\nGuidance:\n" + bullets(task.guidance);
    task.system_prompt_source = PromptSource::kFallback;
  }
}

}  // namespace forge::manifest
