// Names of error codes, for messages and JSON output.
#include "core/result.h"

namespace forge {

const char* errc_name(Errc code) {
  switch (code) {
    case Errc::kNotFound: return "not_found";
    case Errc::kConflict: return "conflict";
    case Errc::kBadRequest: return "bad_request";
    case Errc::kForbidden: return "forbidden";
    case Errc::kUnavailable: return "unavailable";
    case Errc::kTimeout: return "timeout";
    case Errc::kServer: return "server";
    case Errc::kProtocol: return "protocol";
    case Errc::kInvalid: return "invalid";
    case Errc::kUnsupported: return "unsupported";
    case Errc::kIo: return "io";
    case Errc::kCancelled: return "cancelled";
    case Errc::kExceeded:
      return "exceeded";
    case Errc::kBroken:
      return "broken";
  }
  return "unknown";
}

}  // namespace forge
