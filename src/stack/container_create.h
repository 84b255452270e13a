// One planned container created and its hardening read back (up, and a fork's service swap).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/result.h"
#include "engine/client.h"
#include "engine/containers.h"
#include "policy/topology.h"
#include "stack/labels.h"

namespace forge::stack {

// Creates `p`'s container on its first network (`net_names`: plan key → network name), reads
// its hardening back and refuses it (removed by the caller's stack teardown) if anything is
// missing. A daemon that refuses StorageOpt size gets the create again without it (`p` then says
// so; the cap is the trial layer's watch). `adjust` may change the spec before it is sent.
Result<std::string> create_verified(engine::Client& c, policy::ContainerPlan& p, const StackLabels& labels,
                                    const std::map<std::string, std::string>& net_names,
                                    const std::function<void(std::string_view)>& progress,
                                    const std::function<void(engine::ContainerSpec&)>& adjust = {});

}  // namespace forge::stack
