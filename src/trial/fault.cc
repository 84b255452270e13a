// The classification rule.
#include "trial/fault.h"

namespace forge::trial {

Fault classify(const Error& e, results::InfraKind kind) {
  switch (e.code) {
    case Errc::kCancelled: return Fault::interruption();
    case Errc::kExceeded:
      return Fault::model(e.what());
    case Errc::kBroken:
      return Fault::infra(results::InfraKind::kSandbox, e.what());
    case Errc::kUnavailable:
    case Errc::kTimeout:
    case Errc::kServer:
    case Errc::kIo:
    case Errc::kConflict:
    case Errc::kProtocol: return Fault::infra(kind, e.what());
    case Errc::kNotFound:
    case Errc::kBadRequest:
    case Errc::kForbidden:
    case Errc::kInvalid:
    case Errc::kUnsupported: return Fault::setup(e.what());
  }
  return Fault::infra(kind, e.what());
}

Fault classify_running(const Error& e, results::InfraKind kind) {
  if (e.code == Errc::kNotFound) return Fault::infra(kind, e.what());
  return classify(e, kind);
}

}  // namespace forge::trial
