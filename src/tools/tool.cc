// Names for the tool layer's enums.
#include "tools/tool.h"

namespace forge::tools {

const char* actor_name(Actor a) { return a == Actor::kUser ? "user" : "agent"; }

}  // namespace forge::tools
