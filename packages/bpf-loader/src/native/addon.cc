// Module entry: class registration and the raw exports described by src/native.ts.
#include <cerrno>

#include "btf.h"
#include "credentials.h"
#include "common.h"
#include "errors.h"
#include "log.h"
#include "map.h"
#include "object.h"
#include "program.h"
#include "ringbuf.h"
#include "stats.h"

namespace blkheat {

AddonData& Data(Napi::Env env) { return *env.GetInstanceData<AddonData>(); }

namespace {

// init(BpfError): the TypeScript layer hands over its error class once, before anything else.
Napi::Value InitErrors(const Napi::CallbackInfo& info) {
  if (info.Length() != 1 || !info[0].IsFunction())
    ThrowUsage(info.Env(), "init", EINVAL, "init: expects the BpfError class");
  Data(info.Env()).errorClass = Napi::Persistent(info[0].As<Napi::Function>());
  return info.Env().Undefined();
}

void CloseLiveRings(AddonData* data) {
  for (auto& weak : data->liveRings) {
    if (auto ring = weak.lock()) ring->Close();
  }
  data->liveRings.clear();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  InstallLibbpfPrint();
  auto* data = new AddonData();
  env.SetInstanceData(data);
  data->objectClass = Napi::Persistent(ObjectWrap::Define(env));
  data->programClass = Napi::Persistent(ProgramWrap::Define(env));
  data->linkClass = Napi::Persistent(LinkWrap::Define(env));
  data->mapClass = Napi::Persistent(MapWrap::Define(env));
  data->ringBufferClass = Napi::Persistent(RingBufferWrap::Define(env));
  data->btfClass = Napi::Persistent(BtfWrap::Define(env));
  data->statsClass = Napi::Persistent(StatsWrap::Define(env));
  env.AddCleanupHook(CloseLiveRings, data);

  exports.Set("init", Napi::Function::New<InitErrors>(env, "init"));
  exports.Set("openObject", Napi::Function::New<ObjectWrap::Open>(env, "openObject"));
  exports.Set("loadKernelBtf", Napi::Function::New<BtfWrap::Load>(env, "loadKernelBtf"));
  exports.Set("enableStats", Napi::Function::New<StatsWrap::Enable>(env, "enableStats"));
  exports.Set("possibleCpus", Napi::Function::New<PossibleCpus>(env, "possibleCpus"));
  exports.Set("libbpfVersion", Napi::Function::New<LibbpfVersion>(env, "libbpfVersion"));
  exports.Set("releaseFreeHeap", Napi::Function::New<ReleaseFreeHeap>(env, "releaseFreeHeap"));
  exports.Set("switchUser", Napi::Function::New<SwitchUser>(env, "switchUser"));
  return exports;
}

}  // namespace
}  // namespace blkheat

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return blkheat::Init(env, exports); }

NODE_API_MODULE(bpf_loader, InitModule)
