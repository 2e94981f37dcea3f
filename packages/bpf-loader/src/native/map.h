// BpfMap: lookups, updates, deletes, key iteration and whole-map batch operations on a loaded map.
#pragma once

#include "common.h"
#include "state.h"

namespace blkheat {

bool IsPerCpuMapType(bpf_map_type type);
// libbpf's name for a map type ("hash", "percpu_array", ...), "unknown" if it has none.
std::string MapTypeName(bpf_map_type type);

class MapWrap : public Napi::ObjectWrap<MapWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  static Napi::Object Create(Napi::Env env, std::shared_ptr<ObjectState> state, bpf_map* map);
  explicit MapWrap(const Napi::CallbackInfo& info);

 private:
  Napi::Value Name(const Napi::CallbackInfo& info);
  Napi::Value Type(const Napi::CallbackInfo& info);
  Napi::Value Fd(const Napi::CallbackInfo& info);
  Napi::Value KeySize(const Napi::CallbackInfo& info);
  Napi::Value ValueSize(const Napi::CallbackInfo& info);
  Napi::Value ValueBufferSize(const Napi::CallbackInfo& info);
  Napi::Value MaxEntries(const Napi::CallbackInfo& info);
  Napi::Value Lookup(const Napi::CallbackInfo& info);
  Napi::Value Update(const Napi::CallbackInfo& info);
  Napi::Value Delete(const Napi::CallbackInfo& info);
  Napi::Value Keys(const Napi::CallbackInfo& info);
  Napi::Value LookupBatch(const Napi::CallbackInfo& info);
  Napi::Value LookupAndDeleteBatch(const Napi::CallbackInfo& info);
  Napi::Value SupportsBatch(const Napi::CallbackInfo& info);

  // The map's fd after checking the object is open and loaded.
  int CheckedFd(Napi::Env env, const std::string& op);
  std::string What() const { return "map '" + name_ + "'"; }
  [[noreturn]] void ThrowErrno(Napi::Env env, const std::string& op, const std::string& action, int err);
  Napi::Value Batch(const Napi::CallbackInfo& info, bool andDelete);

  std::shared_ptr<ObjectState> state_;
  bpf_map* map_ = nullptr;
  std::string name_;
  bpf_map_type type_ = BPF_MAP_TYPE_UNSPEC;
  uint32_t keySize_ = 0;
  uint32_t valueSize_ = 0;
  size_t valueBufferSize_ = 0;
  uint32_t maxEntries_ = 0;
  bool frozen_ = false;
  int batchSupport_ = -1;  // -1 unknown, 0 no, 1 yes
};

}  // namespace blkheat
