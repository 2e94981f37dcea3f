// Switching the process's user: not BPF, but the agent gives up root right after attaching its
// programs, and this addon is the project's one native module (see credentials.cc).
#pragma once

#include "common.h"

namespace blkheat {

// switchUser(uid, gid): setgroups(0), setgid(gid), setuid(uid) for every thread of the process.
Napi::Value SwitchUser(const Napi::CallbackInfo& info);

}  // namespace blkheat
