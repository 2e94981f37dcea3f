// BpfObject: open -> inspect -> configure -> load (off the event loop) -> attach / maps -> close.
#pragma once

#include "common.h"
#include "state.h"

namespace blkheat {

class LogCapture;
struct GlobalVar;

class ObjectWrap : public Napi::ObjectWrap<ObjectWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  // openObject(path, options?)
  static Napi::Value Open(const Napi::CallbackInfo& info);
  explicit ObjectWrap(const Napi::CallbackInfo& info);

  // Hands captured lines to onLog (lines at or above the object's log level).
  void DeliverLog(Napi::Env env, LogCapture& capture);
  int captureLevel() const;
  const std::shared_ptr<ObjectState>& state() const { return state_; }

 private:
  Napi::Value Path(const Napi::CallbackInfo& info);
  Napi::Value Loaded(const Napi::CallbackInfo& info);
  Napi::Value Programs(const Napi::CallbackInfo& info);
  Napi::Value Maps(const Napi::CallbackInfo& info);
  Napi::Value Globals(const Napi::CallbackInfo& info);
  Napi::Value SetGlobal(const Napi::CallbackInfo& info);
  Napi::Value GetGlobal(const Napi::CallbackInfo& info);
  Napi::Value SetAutoload(const Napi::CallbackInfo& info);
  Napi::Value SetMaxEntries(const Napi::CallbackInfo& info);
  Napi::Value Load(const Napi::CallbackInfo& info);
  Napi::Value Attach(const Napi::CallbackInfo& info);
  Napi::Value Program(const Napi::CallbackInfo& info);
  Napi::Value Map(const Napi::CallbackInfo& info);
  Napi::Value OpenRingBuffer(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);

  std::string What() const { return "object '" + state_->path + "'"; }
  bpf_program* FindProgram(Napi::Env env, const std::string& op, const std::string& name);
  bpf_map* FindMap(Napi::Env env, const std::string& op, const std::string& name);
  GlobalVar FindGlobal(Napi::Env env, const std::string& op, const std::string& name);

  std::shared_ptr<ObjectState> state_;
  Napi::FunctionReference onLog_;
  int logLevel_ = -1;  // kLogQuiet
};

}  // namespace blkheat
