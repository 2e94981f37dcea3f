// Shared includes and per-environment addon state.
#pragma once

#include <napi.h>
#include <uv.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blkheat {

class RingRecord;

// One per Node environment (main thread or worker): constructors of the wrapped classes and the
// BpfError class handed over by the TypeScript layer.
struct AddonData {
  Napi::FunctionReference errorClass;
  Napi::FunctionReference objectClass;
  Napi::FunctionReference programClass;
  Napi::FunctionReference linkClass;
  Napi::FunctionReference mapClass;
  Napi::FunctionReference ringBufferClass;
  Napi::FunctionReference btfClass;
  Napi::FunctionReference statsClass;
  // Ring buffers still polling, closed by the environment cleanup hook so the loop can close.
  std::vector<std::weak_ptr<RingRecord>> liveRings;
};

AddonData& Data(Napi::Env env);

// Marker passed to wrapped-class constructors: objects are created from C++ only.
struct NativeToken {};

}  // namespace blkheat
