// BpfMap. Every key/value length is checked against the map's sizes before any syscall.
#include "map.h"

#include <cerrno>
#include <cstring>
#include <set>

#include "args.h"
#include "errors.h"

namespace blkheat {
namespace {

constexpr int kEnotsupp = 524;

size_t RoundUp8(size_t n) { return (n + 7) & ~static_cast<size_t>(7); }

}  // namespace

bool IsPerCpuMapType(bpf_map_type type) {
  return type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
         type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

std::string MapTypeName(bpf_map_type type) {
  const char* name = libbpf_bpf_map_type_str(type);
  return name != nullptr ? name : "unknown(" + std::to_string(static_cast<int>(type)) + ")";
}

Napi::Function MapWrap::Define(Napi::Env env) {
  return DefineClass(env, "BpfMap",
                     {
                         InstanceAccessor<&MapWrap::Name>("name"),
                         InstanceAccessor<&MapWrap::Type>("type"),
                         InstanceAccessor<&MapWrap::Fd>("fd"),
                         InstanceAccessor<&MapWrap::KeySize>("keySize"),
                         InstanceAccessor<&MapWrap::ValueSize>("valueSize"),
                         InstanceAccessor<&MapWrap::ValueBufferSize>("valueBufferSize"),
                         InstanceAccessor<&MapWrap::MaxEntries>("maxEntries"),
                         InstanceMethod<&MapWrap::Lookup>("lookup"),
                         InstanceMethod<&MapWrap::Update>("update"),
                         InstanceMethod<&MapWrap::Delete>("delete"),
                         InstanceMethod<&MapWrap::Keys>("keys"),
                         InstanceMethod<&MapWrap::LookupBatch>("lookupBatch"),
                         InstanceMethod<&MapWrap::LookupAndDeleteBatch>("lookupAndDeleteBatch"),
                         InstanceMethod<&MapWrap::SupportsBatch>("supportsBatch"),
                     });
}

Napi::Object MapWrap::Create(Napi::Env env, std::shared_ptr<ObjectState> state, bpf_map* map) {
  NativeToken token;
  Napi::Object obj = Data(env).mapClass.New({Napi::External<NativeToken>::New(env, &token)});
  MapWrap* wrap = Unwrap(obj);
  wrap->state_ = std::move(state);
  wrap->map_ = map;
  wrap->name_ = bpf_map__name(map);
  wrap->type_ = bpf_map__type(map);
  wrap->keySize_ = bpf_map__key_size(map);
  wrap->valueSize_ = bpf_map__value_size(map);
  wrap->maxEntries_ = bpf_map__max_entries(map);
  wrap->valueBufferSize_ = wrap->valueSize_;
  if (IsPerCpuMapType(wrap->type_)) {
    int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) ThrowBpf(env, Failure{"map", cpus < 0 ? -cpus : EINVAL, "count possible CPUs for per-CPU map '" + wrap->name_ + "'", "", ""});
    wrap->valueBufferSize_ = RoundUp8(wrap->valueSize_) * static_cast<size_t>(cpus);
  }
  // .rodata maps are frozen by libbpf at load; BPF_F_RDONLY maps refuse user-space writes.
  const char* name = wrap->name_.c_str();
  size_t len = wrap->name_.size();
  bool rodata = bpf_map__is_internal(map) && (len >= 7 && std::strcmp(name + len - 7, ".rodata") == 0);
  rodata = rodata || (bpf_map__is_internal(map) && std::strstr(name, ".rodata.") != nullptr);
  wrap->frozen_ = rodata || (bpf_map__map_flags(map) & BPF_F_RDONLY) != 0;
  return obj;
}

MapWrap::MapWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<MapWrap>(info) {
  RequireNativeToken(info, "BpfMap", "BpfObject.map() to get maps");
}

int MapWrap::CheckedFd(Napi::Env env, const std::string& op) {
  state_->CheckLoaded(env, op, What() + " (its object)");
  int fd = bpf_map__fd(map_);
  if (fd < 0) ThrowUsage(env, op, EBADF, op + ": " + What() + " has no fd (was it created?)");
  return fd;
}

void MapWrap::ThrowErrno(Napi::Env env, const std::string& op, const std::string& action, int err) {
  std::string detail = PrivilegeHint(Privilege::MapAccess, err);
  if (detail.empty() && err == EPERM && frozen_)
    detail = What() + " is read-only from user space (.rodata maps are frozen at load; BPF_F_RDONLY maps refuse writes)";
  if (detail.empty() && (err == EINVAL || err == kEnotsupp || err == EOPNOTSUPP))
    detail = MapTypeName(type_) + " maps may not support this operation";
  ThrowBpf(env, Failure{op, err, What() + " " + action, detail, ""});
}

Napi::Value MapWrap::Name(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), name_); }
Napi::Value MapWrap::Type(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), MapTypeName(type_)); }
Napi::Value MapWrap::Fd(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), state_->closed ? -1 : bpf_map__fd(map_));
}
Napi::Value MapWrap::KeySize(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), keySize_); }
Napi::Value MapWrap::ValueSize(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), valueSize_); }
Napi::Value MapWrap::ValueBufferSize(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(valueBufferSize_));
}
Napi::Value MapWrap::MaxEntries(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), maxEntries_); }

Napi::Value MapWrap::Lookup(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "map.lookup";
  Bytes key = ArgBytes(info, 0, op, "key");
  CheckLength(env, op, "key", key.length, keySize_, "keySize");
  int fd = CheckedFd(env, op);
  std::vector<uint8_t> value(valueBufferSize_);
  if (bpf_map_lookup_elem(fd, key.data, value.data()) != 0) {
    int err = errno;
    if (err == ENOENT) return env.Undefined();
    ThrowErrno(env, op, "lookup", err);
  }
  return Napi::Buffer<uint8_t>::Copy(env, value.data(), value.size());
}

Napi::Value MapWrap::Update(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "map.update";
  Bytes key = ArgBytes(info, 0, op, "key");
  Bytes value = ArgBytes(info, 1, op, "value");
  CheckLength(env, op, "key", key.length, keySize_, "keySize");
  CheckLength(env, op, "value", value.length, valueBufferSize_, "valueBufferSize");
  uint64_t flags = BPF_ANY;
  if (info.Length() > 2 && !info[2].IsUndefined()) {
    std::string flag = ArgString(info, 2, op, "flag");
    if (flag == "any") flags = BPF_ANY;
    else if (flag == "noexist") flags = BPF_NOEXIST;
    else if (flag == "exist") flags = BPF_EXIST;
    else ThrowUsage(env, op, EINVAL, op + ": flag must be 'any', 'noexist' or 'exist', got '" + flag + "'");
  }
  int fd = CheckedFd(env, op);
  if (bpf_map_update_elem(fd, key.data, value.data, flags) != 0) ThrowErrno(env, op, "update", errno);
  return env.Undefined();
}

Napi::Value MapWrap::Delete(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "map.delete";
  Bytes key = ArgBytes(info, 0, op, "key");
  CheckLength(env, op, "key", key.length, keySize_, "keySize");
  int fd = CheckedFd(env, op);
  if (bpf_map_delete_elem(fd, key.data) != 0) {
    int err = errno;
    if (err == ENOENT) return Napi::Boolean::New(env, false);
    ThrowErrno(env, op, "delete", err);
  }
  return Napi::Boolean::New(env, true);
}

Napi::Value MapWrap::Keys(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "map.keys";
  int fd = CheckedFd(env, op);
  std::vector<uint8_t> current(keySize_), next(keySize_);
  std::vector<std::vector<uint8_t>> keys;
  std::set<std::vector<uint8_t>> seen;
  // A hash map restarts iteration from the first key when the current one is deleted under us;
  // bound the walk and skip repeats so concurrent deletes cannot loop forever.
  const uint64_t limit = 2 * static_cast<uint64_t>(maxEntries_) + 16;
  bool first = true;
  for (uint64_t i = 0; i < limit; i++) {
    if (bpf_map_get_next_key(fd, first ? nullptr : current.data(), next.data()) != 0) {
      int err = errno;
      if (err == ENOENT) break;
      ThrowErrno(env, op, "get_next_key", err);
    }
    first = false;
    if (seen.insert(next).second) keys.push_back(next);
    current.swap(next);
  }
  Napi::Array out = Napi::Array::New(env, keys.size());
  for (size_t i = 0; i < keys.size(); i++)
    out.Set(static_cast<uint32_t>(i), Napi::Buffer<uint8_t>::Copy(env, keys[i].data(), keys[i].size()));
  return out;
}

Napi::Value MapWrap::Batch(const Napi::CallbackInfo& info, bool andDelete) {
  Napi::Env env = info.Env();
  const std::string op = andDelete ? "map.lookupAndDeleteBatch" : "map.lookupBatch";
  int fd = CheckedFd(env, op);
  size_t capacity = maxEntries_ > 0 ? maxEntries_ : 1;
  std::vector<uint8_t> keys(capacity * keySize_), values(capacity * valueBufferSize_);
  // The batch token is a bucket index (u32) for hash maps and a key for arrays.
  size_t tokenSize = keySize_ > 8 ? keySize_ : 8;
  std::vector<uint8_t> inBatch(tokenSize), outBatch(tokenSize);
  bpf_map_batch_opts opts;
  std::memset(&opts, 0, sizeof(opts));
  opts.sz = sizeof(opts);
  size_t total = 0;
  bool first = true;
  int stalls = 0;
  for (;;) {
    if (total == capacity) {
      capacity *= 2;
      keys.resize(capacity * keySize_);
      values.resize(capacity * valueBufferSize_);
    }
    __u32 count = static_cast<__u32>(capacity - total);
    void* in = first ? nullptr : inBatch.data();
    int rc = andDelete ? bpf_map_lookup_and_delete_batch(fd, in, outBatch.data(), keys.data() + total * keySize_,
                                                         values.data() + total * valueBufferSize_, &count, &opts)
                       : bpf_map_lookup_batch(fd, in, outBatch.data(), keys.data() + total * keySize_,
                                              values.data() + total * valueBufferSize_, &count, &opts);
    int err = rc < 0 ? errno : 0;
    if (err == 0 || err == ENOENT) total += count;
    if (err == ENOENT) break;
    if (err == ENOSPC && count == 0) {
      // A hash bucket holds more entries than the space left: grow and retry the same batch.
      capacity *= 2;
      keys.resize(capacity * keySize_);
      values.resize(capacity * valueBufferSize_);
      continue;
    }
    if (err != 0) ThrowErrno(env, op, andDelete ? "lookup_and_delete_batch" : "lookup_batch", err);
    if (count == 0 && ++stalls > 64)
      ThrowUsage(env, op, EAGAIN, op + ": " + What() + ": the kernel returned no entries 64 times in a row without ENOENT");
    inBatch.swap(outBatch);
    first = false;
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("count", Napi::Number::New(env, static_cast<double>(total)));
  result.Set("keys", Napi::Buffer<uint8_t>::Copy(env, keys.data(), total * keySize_));
  result.Set("values", Napi::Buffer<uint8_t>::Copy(env, values.data(), total * valueBufferSize_));
  return result;
}

Napi::Value MapWrap::LookupBatch(const Napi::CallbackInfo& info) { return Batch(info, false); }

Napi::Value MapWrap::LookupAndDeleteBatch(const Napi::CallbackInfo& info) { return Batch(info, true); }

Napi::Value MapWrap::SupportsBatch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "map.supportsBatch";
  int fd = CheckedFd(env, op);
  if (batchSupport_ < 0) {
    std::vector<uint8_t> key(keySize_ > 0 ? keySize_ : 1), value(valueBufferSize_ > 0 ? valueBufferSize_ : 1);
    std::vector<uint8_t> out(keySize_ > 8 ? keySize_ : 8);
    bpf_map_batch_opts opts;
    std::memset(&opts, 0, sizeof(opts));
    opts.sz = sizeof(opts);
    __u32 count = 1;
    int rc = bpf_map_lookup_batch(fd, nullptr, out.data(), key.data(), value.data(), &count, &opts);
    int err = rc < 0 ? errno : 0;
    if (err == 0 || err == ENOENT || err == ENOSPC) batchSupport_ = 1;
    else if (err == EINVAL || err == kEnotsupp || err == EOPNOTSUPP) batchSupport_ = 0;
    else ThrowErrno(env, op, "lookup_batch probe", err);
  }
  return Napi::Boolean::New(env, batchSupport_ == 1);
}

}  // namespace blkheat
