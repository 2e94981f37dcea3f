// StatsHandle (BPF_ENABLE_STATS) and small process-wide queries.
#pragma once

#include "common.h"

namespace blkheat {

class StatsWrap : public Napi::ObjectWrap<StatsWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  // enableStats()
  static Napi::Value Enable(const Napi::CallbackInfo& info);
  explicit StatsWrap(const Napi::CallbackInfo& info);
  ~StatsWrap() override;

 private:
  Napi::Value Close(const Napi::CallbackInfo& info);
  int fd_ = -1;
};

Napi::Value PossibleCpus(const Napi::CallbackInfo& info);
Napi::Value LibbpfVersion(const Napi::CallbackInfo& info);
// releaseFreeHeap(): malloc_trim(0) where the C library is glibc; true if memory went back.
Napi::Value ReleaseFreeHeap(const Napi::CallbackInfo& info);

}  // namespace blkheat
