// BpfError construction: errno names, libbpf messages, privilege hints.
#pragma once

#include "common.h"

namespace blkheat {

class LogCapture;

// What kind of privilege an operation needs, to name it when the kernel says EPERM/EACCES.
enum class Privilege { None, Load, Attach, Stats, MapAccess, Btf };

// A failed call, before it becomes a JS BpfError.
struct Failure {
  std::string op;       // which call failed: "openObject", "load", "map.update", ...
  int err = 0;          // positive errno (or libbpf's 4000+ codes)
  std::string context;  // what was being done: "open /x.bpf.o", "map 'counts' update"
  std::string detail;   // extra explanation appended to the message
  std::string log;      // libbpf's log captured during the call
};

// "EPERM", "ENOTSUPP", "LIBBPF_ERRNO__FORMAT", or "E<n>" for unknown numbers.
std::string ErrnoCode(int err);
// libbpf_strerror(), with a readable text for the kernel-internal ENOTSUPP (524).
std::string ErrnoMessage(int err);

// Effective capability check (capget), for privilege hints.
bool HasCapability(int cap);
// Names the missing privilege for EPERM/EACCES, or "" when the process has it.
std::string PrivilegeHint(Privilege privilege, int err);

// Fills failure.log/detail from a capture (first libbpf warning line, verifier verdict).
void AttachLog(Failure& failure, LogCapture& capture);

Napi::Value MakeBpfError(Napi::Env env, const Failure& failure);
[[noreturn]] void ThrowBpf(Napi::Env env, const Failure& failure);
// An error found by the binding itself (bad argument, closed handle, wrong phase): the message
// is `context: message`.
[[noreturn]] void ThrowUsage(Napi::Env env, const std::string& op, int err, const std::string& message);
// Guard of every wrapped class's constructor: only C++ (passing a NativeToken) creates them;
// from JS, `new` throws "<cls>: use <how>".
void RequireNativeToken(const Napi::CallbackInfo& info, const std::string& cls, const std::string& how);

}  // namespace blkheat
