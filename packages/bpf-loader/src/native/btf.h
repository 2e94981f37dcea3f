// KernelBtf: queries over kernel BTF for choosing programs and knobs at load time.
#pragma once

#include <unordered_map>

#include "common.h"

namespace blkheat {

class BtfWrap : public Napi::ObjectWrap<BtfWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  // loadKernelBtf(path?)
  static Napi::Value Load(const Napi::CallbackInfo& info);
  explicit BtfWrap(const Napi::CallbackInfo& info);
  ~BtfWrap() override;

 private:
  Napi::Value EnumValues(const Napi::CallbackInfo& info);
  Napi::Value EnumeratorValue(const Napi::CallbackInfo& info);
  Napi::Value HasField(const Napi::CallbackInfo& info);
  Napi::Value FuncProtoParams(const Napi::CallbackInfo& info);
  // structLayout(name): {size, members: [{name, offset, size}]} in bytes, or undefined.
  Napi::Value StructLayout(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);

  const btf* Checked(Napi::Env env, const std::string& op) const;
  bool HasMember(__u32 typeId, const std::string& field, int depth) const;
  std::string TypeName(__u32 typeId, int depth) const;

  btf* btf_ = nullptr;
  std::string source_;
  bool enumeratorsIndexed_ = false;
  std::unordered_map<std::string, double> enumerators_;
};

}  // namespace blkheat
