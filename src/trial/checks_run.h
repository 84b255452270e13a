// Tolokaforge's checks.py, run by forgectl's checks driver (python3 -m forgectl_checks.run) in a
// fresh container of forgectl/python:local as the verifier: never on the host, never where the
// agent ran. The transcript and the states go in as files; the driver's result file comes out.
#pragma once

#include <string>
#include <vector>

#include "core/chat.h"
#include "engine/client.h"
#include "manifest/task_config.h"
#include "stack/labels.h"

namespace forge::trial {

struct ChecksInputs {
  stack::StackLabels labels;       // the trial's stack: the container's labels, so teardown finds a leftover
  std::string transcript_json;     // {"messages": [...]} (checks_transcript_json)
  std::string initial_state_json;  // {table: [records]}
  std::string final_state_json;    // {"db": {...}}
};

// The messages as the driver reads them: OpenAI wire tool calls, tool results by tool_call_id.
std::string checks_transcript_json(const std::vector<ChatMessage>& messages);

// Runs the task's checks and returns the result file's text (at most 16 MiB). The driver's own
// timeout is custom_checks.timeout_seconds; forgectl's exec deadline backs it up. `ahead`: the
// container prepare_python_checks made for this trial (empty: one is made now); removed at the end.
Result<std::string> run_python_checks_container(engine::Client& c, const manifest::TaskConfig& task,
                                                const ChecksInputs& in, const std::string& ahead = "");

// The checks' container made ahead of the trial's grade phase (grader_ahead.h): created with the
// task's checks tree and empty evidence directories, started; its id. The trial's transcript and
// states go in only when run_python_checks_container takes it.
Result<std::string> prepare_python_checks(engine::Client& c, const manifest::TaskConfig& task,
                                          const stack::StackLabels& labels);

}  // namespace forge::trial
