// A tool the model can call: its declaration (name, description, JSON schema) and its action.
#pragma once

#include <memory>
#include <string>

#include <vector>

#include "core/chat.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/result.h"

namespace forge::tools {

enum class Actor { kAgent, kUser };
const char* actor_name(Actor a);  // "agent" | "user"

struct ToolSpec {
  std::string name;
  std::string description;
  std::string parameters;  // a JSON Schema (object, additionalProperties false), as JSON text
};

// Per-tool governance (task.yaml tools.policies.<name>).
struct ToolPolicy {
  Millis timeout{30000};
  int rate_limit = 0;       // calls per trial; 0 = unlimited
  int rate_per_minute = 0;  // 0 = unlimited
};

// What a tool's action needs besides its arguments.
struct CallContext {
  Deadline deadline = Deadline::never();  // the tool's timeout, already started
  // Where a tool puts images it returns besides its text (the browser's screenshots); null: the
  // caller takes none.
  std::vector<ImagePart>* images = nullptr;
};

class Tool {
 public:
  virtual ~Tool() = default;
  virtual const ToolSpec& spec() const = 0;
  // Runs with arguments already validated against spec().parameters. The returned text is what
  // the model receives; an error becomes "Error: <message>" for the model. A deadline that
  // passes is Errc::kTimeout.
  virtual Result<std::string> call(const json::Value& args, const CallContext& ctx) = 0;
};

}  // namespace forge::tools
