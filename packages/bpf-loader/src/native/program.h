// Program (a loaded BPF program: fd and run statistics) and Link (an attachment).
#pragma once

#include "common.h"
#include "state.h"

namespace blkheat {

std::string ProgramTypeName(bpf_prog_type type);

class ProgramWrap : public Napi::ObjectWrap<ProgramWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  static Napi::Object Create(Napi::Env env, std::shared_ptr<ObjectState> state, bpf_program* prog);
  explicit ProgramWrap(const Napi::CallbackInfo& info);

 private:
  Napi::Value Name(const Napi::CallbackInfo& info);
  Napi::Value Section(const Napi::CallbackInfo& info);
  Napi::Value Fd(const Napi::CallbackInfo& info);
  Napi::Value Stats(const Napi::CallbackInfo& info);
  Napi::Value Run(const Napi::CallbackInfo& info);

  // The program's fd after checking the object is open and loaded (as MapWrap::CheckedFd).
  int CheckedFd(Napi::Env env, const std::string& op);

  std::shared_ptr<ObjectState> state_;
  bpf_program* prog_ = nullptr;
  std::string name_;
  std::string section_;
};

class LinkWrap : public Napi::ObjectWrap<LinkWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  static Napi::Object Create(Napi::Env env, std::shared_ptr<ObjectState> state, std::shared_ptr<LinkRecord> record);
  explicit LinkWrap(const Napi::CallbackInfo& info);

 private:
  Napi::Value Program(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);

  std::shared_ptr<ObjectState> state_;
  std::shared_ptr<LinkRecord> record_;
};

}  // namespace blkheat
