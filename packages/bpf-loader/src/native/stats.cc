// BPF run-time statistics stay enabled while the fd from BPF_ENABLE_STATS is open.
#include "stats.h"

#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cerrno>

#include "errors.h"

namespace blkheat {

Napi::Function StatsWrap::Define(Napi::Env env) {
  return DefineClass(env, "StatsHandle", {InstanceMethod<&StatsWrap::Close>("close")});
}

StatsWrap::StatsWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<StatsWrap>(info) {
  RequireNativeToken(info, "StatsHandle", "enableStats() to enable BPF statistics");
}

StatsWrap::~StatsWrap() {
  if (fd_ >= 0) close(fd_);
}

Napi::Value StatsWrap::Enable(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (fd < 0) {
    int err = errno;
    ThrowBpf(env, Failure{"enableStats", err, "enable BPF run-time statistics (BPF_ENABLE_STATS)", PrivilegeHint(Privilege::Stats, err), ""});
  }
  NativeToken token;
  Napi::Object obj = Data(env).statsClass.New({Napi::External<NativeToken>::New(env, &token)});
  Unwrap(obj)->fd_ = fd;
  return obj;
}

Napi::Value StatsWrap::Close(const Napi::CallbackInfo& info) {
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  return info.Env().Undefined();
}

Napi::Value PossibleCpus(const Napi::CallbackInfo& info) {
  int n = libbpf_num_possible_cpus();
  if (n < 0) ThrowBpf(info.Env(), Failure{"possibleCpus", -n, "read /sys/devices/system/cpu/possible", "", ""});
  return Napi::Number::New(info.Env(), n);
}

Napi::Value LibbpfVersion(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), std::to_string(libbpf_major_version()) + "." + std::to_string(libbpf_minor_version()));
}

// glibc keeps the pages of freed blocks in its arenas, and its mmap threshold rises as big
// blocks are freed, so a burst of large Buffers (a server's answers) leaves the process that
// much bigger until something asks for them back. malloc_trim(0) returns every free page of
// every arena to the kernel (madvise), not only the top of the main heap.
Napi::Value ReleaseFreeHeap(const Napi::CallbackInfo& info) {
#if defined(__GLIBC__)
  return Napi::Boolean::New(info.Env(), malloc_trim(0) != 0);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

}  // namespace blkheat
