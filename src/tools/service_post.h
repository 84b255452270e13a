// One JSON POST to a service on the task network (json-db, rag), sent from inside the sandbox with
// nc, so it leaves from where the agent is, as Tolokaforge's tools did; the tools that use it carry
// only the agent token of their own permission (core/service_token.h).
#pragma once

#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "tools/sandbox.h"

namespace forge::tools {

struct ServiceEndpoint {
  std::string host;
  int port = 0;
  std::string noun;  // the service in messages: "database", "knowledge base"
};

// POSTs `body` to `path` (with `token` as a bearer token, none when empty) and returns the reply's
// body. A non-2xx reply is kInvalid "<noun>: <the service's message>"; no reply in time kTimeout;
// anything that is not an HTTP reply kUnavailable.
Result<std::string> post_json(Sandbox& sb, const ServiceEndpoint& to, const std::string& token, const std::string& path,
                              const std::string& body, Deadline deadline);

}  // namespace forge::tools
