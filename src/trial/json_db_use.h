// Whether a task uses the built-in stack's json-db: the one definition the local executor's
// refusals and the sweep's sandbox sizing share. A task that uses none gets no json-db container
// (and, with no other service under no_internet, no network at all: docs/stacks.md).
#pragma once

#include <string>
#include <vector>

#include "manifest/task_config.h"

namespace forge::trial {

// Whether either actor may call built-in `name` (a task without a tools block enables every built-in).
bool tool_enabled(const manifest::ToolsConfig& tools, const std::string& name);

// One reason a task needs json-db, where it is said (a file, or file:line).
struct JsonDbUse {
  std::string where;
  std::string what;  // "initial_state.json_db", "tool 'db_query'", "state_checks.hash (golden replay)", …
};

// Every use, in file order: json_db fixtures; a db_query/db_update tool either actor may call (a
// task without a tools block enables every built-in); a state hash (golden replay); a JSONPath
// assertion on the final state ($.db…); an MCP server (task servers may reach db-service over
// the task network, which forgectl cannot see into).
std::vector<JsonDbUse> json_db_uses(const manifest::TaskConfig& task);
inline bool uses_json_db(const manifest::TaskConfig& task) { return !json_db_uses(task).empty(); }

// A task on the built-in core stack (no compose file) that uses no json-db loses the json-db
// service from its environment, before its trials are keyed and planned; true when it did.
bool drop_unused_json_db(manifest::TaskConfig& task);

}  // namespace forge::trial
