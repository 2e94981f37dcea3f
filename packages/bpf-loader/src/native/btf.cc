// KernelBtf over libbpf's btf API.
#include "btf.h"

#include <cerrno>

#include "args.h"
#include "errors.h"
#include "log.h"

namespace blkheat {
namespace {

// Skips typedefs and qualifiers down to the underlying type.
const btf_type* Resolve(const btf* b, __u32 id, __u32* resolvedId) {
  const btf_type* t = btf__type_by_id(b, id);
  for (int i = 0; t != nullptr && i < 32 && (btf_is_typedef(t) || btf_is_mod(t)); i++) {
    id = t->type;
    t = btf__type_by_id(b, id);
  }
  if (resolvedId != nullptr) *resolvedId = id;
  return t;
}

double EnumValue(const btf_type* t, __u16 index) {
  bool isSigned = btf_kflag(t);
  if (btf_is_enum(t)) {
    __s32 v = btf_enum(t)[index].val;
    return isSigned ? static_cast<double>(v) : static_cast<double>(static_cast<__u32>(v));
  }
  __u64 v = btf_enum64_value(&btf_enum64(t)[index]);
  return isSigned ? static_cast<double>(static_cast<__s64>(v)) : static_cast<double>(v);
}

const char* EnumeratorName(const btf* b, const btf_type* t, __u16 index) {
  __u32 nameOff = btf_is_enum(t) ? btf_enum(t)[index].name_off : btf_enum64(t)[index].name_off;
  return btf__name_by_offset(b, nameOff);
}

}  // namespace

Napi::Function BtfWrap::Define(Napi::Env env) {
  return DefineClass(env, "KernelBtf",
                     {
                         InstanceMethod<&BtfWrap::EnumValues>("enumValues"),
                         InstanceMethod<&BtfWrap::EnumeratorValue>("enumeratorValue"),
                         InstanceMethod<&BtfWrap::HasField>("hasField"),
                         InstanceMethod<&BtfWrap::FuncProtoParams>("funcProtoParams"),
                         InstanceMethod<&BtfWrap::StructLayout>("structLayout"),
                         InstanceMethod<&BtfWrap::Close>("close"),
                     });
}

BtfWrap::BtfWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<BtfWrap>(info) {
  RequireNativeToken(info, "KernelBtf", "loadKernelBtf() to load BTF");
}

BtfWrap::~BtfWrap() {
  if (btf_ != nullptr) btf__free(btf_);
}

Napi::Value BtfWrap::Load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "loadKernelBtf";
  std::string path;
  if (info.Length() > 0 && !info[0].IsUndefined()) {
    path = ArgString(info, 0, op, "path");
    if (path.empty()) ThrowUsage(env, op, EINVAL, op + ": path must not be empty");
  }
  LogCapture capture(LIBBPF_WARN);
  btf* handle;
  int err = 0;
  {
    LogScope scope(&capture);
    handle = path.empty() ? btf__load_vmlinux_btf() : btf__parse(path.c_str(), nullptr);
    if (handle == nullptr) err = errno != 0 ? errno : EINVAL;
  }
  if (handle == nullptr) {
    Failure failure{op, err, path.empty() ? "load the running kernel's BTF" : "parse BTF from " + path, PrivilegeHint(Privilege::Btf, err), ""};
    AttachLog(failure, capture);
    ThrowBpf(env, failure);
  }
  NativeToken token;
  Napi::Object obj = Data(env).btfClass.New({Napi::External<NativeToken>::New(env, &token)});
  BtfWrap* wrap = Unwrap(obj);
  wrap->btf_ = handle;
  wrap->source_ = path.empty() ? "kernel BTF" : "BTF " + path;
  return obj;
}

const btf* BtfWrap::Checked(Napi::Env env, const std::string& op) const {
  if (btf_ == nullptr) ThrowUsage(env, op, EBADF, op + ": " + (source_.empty() ? "KernelBtf" : source_) + " is closed");
  return btf_;
}

Napi::Value BtfWrap::EnumValues(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "btf.enumValues";
  std::string name = ArgString(info, 0, op, "enumName");
  const btf* b = Checked(env, op);
  __s32 id = btf__find_by_name_kind(b, name.c_str(), BTF_KIND_ENUM);
  if (id < 0) id = btf__find_by_name_kind(b, name.c_str(), BTF_KIND_ENUM64);
  if (id < 0) return env.Undefined();
  const btf_type* t = btf__type_by_id(b, static_cast<__u32>(id));
  Napi::Function mapClass = env.Global().Get("Map").As<Napi::Function>();
  Napi::Object map = mapClass.New({});
  Napi::Function set = map.Get("set").As<Napi::Function>();
  for (__u16 i = 0; i < btf_vlen(t); i++)
    set.Call(map, {Napi::String::New(env, EnumeratorName(b, t, i)), Napi::Number::New(env, EnumValue(t, i))});
  return map;
}

Napi::Value BtfWrap::EnumeratorValue(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "btf.enumeratorValue";
  std::string name = ArgString(info, 0, op, "enumerator");
  const btf* b = Checked(env, op);
  if (!enumeratorsIndexed_) {
    __u32 count = btf__type_cnt(b);
    for (__u32 id = 1; id < count; id++) {
      const btf_type* t = btf__type_by_id(b, id);
      if (t == nullptr || !btf_is_any_enum(t)) continue;
      for (__u16 i = 0; i < btf_vlen(t); i++) enumerators_.emplace(EnumeratorName(b, t, i), EnumValue(t, i));
    }
    enumeratorsIndexed_ = true;
  }
  auto it = enumerators_.find(name);
  if (it == enumerators_.end()) return env.Undefined();
  return Napi::Number::New(env, it->second);
}

bool BtfWrap::HasMember(__u32 typeId, const std::string& field, int depth) const {
  if (depth > 16) return false;
  const btf_type* t = Resolve(btf_, typeId, nullptr);
  if (t == nullptr || !btf_is_composite(t)) return false;
  const btf_member* m = btf_members(t);
  for (__u16 i = 0; i < btf_vlen(t); i++, m++) {
    const char* name = btf__name_by_offset(btf_, m->name_off);
    if (name != nullptr && field == name) return true;
    // Members of anonymous structs and unions are reachable as if they were direct members.
    if ((name == nullptr || name[0] == '\0') && HasMember(m->type, field, depth + 1)) return true;
  }
  return false;
}

Napi::Value BtfWrap::HasField(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "btf.hasField";
  std::string structName = ArgString(info, 0, op, "struct");
  std::string field = ArgString(info, 1, op, "field");
  const btf* b = Checked(env, op);
  __s32 id = btf__find_by_name_kind(b, structName.c_str(), BTF_KIND_STRUCT);
  if (id < 0) id = btf__find_by_name_kind(b, structName.c_str(), BTF_KIND_UNION);
  if (id < 0) return Napi::Boolean::New(env, false);
  return Napi::Boolean::New(env, HasMember(static_cast<__u32>(id), field, 0));
}

std::string BtfWrap::TypeName(__u32 typeId, int depth) const {
  if (typeId == 0) return "void";
  if (depth > 32) return "...";
  const btf_type* t = btf__type_by_id(btf_, typeId);
  if (t == nullptr) return "?";
  const char* rawName = btf__name_by_offset(btf_, t->name_off);
  std::string name = rawName != nullptr ? rawName : "";
  switch (btf_kind(t)) {
    case BTF_KIND_INT:
    case BTF_KIND_FLOAT:
    case BTF_KIND_TYPEDEF:
      return name;
    case BTF_KIND_STRUCT:
      return "struct " + (name.empty() ? std::string("{...}") : name);
    case BTF_KIND_UNION:
      return "union " + (name.empty() ? std::string("{...}") : name);
    case BTF_KIND_ENUM:
    case BTF_KIND_ENUM64:
      return "enum " + (name.empty() ? std::string("{...}") : name);
    case BTF_KIND_FWD:
      return std::string(btf_kflag(t) ? "union " : "struct ") + name;
    case BTF_KIND_CONST:
      return "const " + TypeName(t->type, depth + 1);
    case BTF_KIND_VOLATILE:
      return "volatile " + TypeName(t->type, depth + 1);
    case BTF_KIND_RESTRICT:
    case BTF_KIND_TYPE_TAG:
      return TypeName(t->type, depth + 1);
    case BTF_KIND_PTR: {
      const btf_type* target = btf__type_by_id(btf_, t->type);
      if (target != nullptr && btf_is_func_proto(target)) {
        std::string out = TypeName(target->type, depth + 1) + " (*)(";
        const btf_param* p = btf_params(target);
        for (__u16 i = 0; i < btf_vlen(target); i++, p++) out += (i > 0 ? ", " : "") + TypeName(p->type, depth + 1);
        return out + ")";
      }
      std::string inner = TypeName(t->type, depth + 1);
      return inner + (!inner.empty() && inner.back() == '*' ? "*" : " *");
    }
    case BTF_KIND_ARRAY:
      return TypeName(btf_array(t)->type, depth + 1) + "[" + std::to_string(btf_array(t)->nelems) + "]";
    default:
      return name.empty() ? "?" : name;
  }
}

Napi::Value BtfWrap::FuncProtoParams(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "btf.funcProtoParams";
  std::string name = ArgString(info, 0, op, "typedefName");
  const btf* b = Checked(env, op);
  __s32 id = btf__find_by_name_kind(b, name.c_str(), BTF_KIND_TYPEDEF);
  if (id < 0) return env.Undefined();
  const btf_type* t = Resolve(b, static_cast<__u32>(id), nullptr);
  if (t != nullptr && btf_is_ptr(t)) t = Resolve(b, t->type, nullptr);
  if (t == nullptr || !btf_is_func_proto(t)) return env.Undefined();
  Napi::Array out = Napi::Array::New(env, btf_vlen(t));
  const btf_param* p = btf_params(t);
  for (__u16 i = 0; i < btf_vlen(t); i++, p++) out.Set(static_cast<uint32_t>(i), Napi::String::New(env, TypeName(p->type, 0)));
  return out;
}

Napi::Value BtfWrap::StructLayout(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "btf.structLayout";
  std::string name = ArgString(info, 0, op, "struct");
  const btf* b = Checked(env, op);
  __s32 id = btf__find_by_name_kind(b, name.c_str(), BTF_KIND_STRUCT);
  if (id < 0) return env.Undefined();
  const btf_type* t = btf__type_by_id(b, static_cast<__u32>(id));
  if (t == nullptr) return env.Undefined();
  Napi::Object out = Napi::Object::New(env);
  out.Set("size", Napi::Number::New(env, t->size));
  Napi::Array members = Napi::Array::New(env, btf_vlen(t));
  const btf_member* m = btf_members(t);
  for (__u16 i = 0; i < btf_vlen(t); i++, m++) {
    const char* memberName = btf__name_by_offset(b, m->name_off);
    __s64 size = btf__resolve_size(b, m->type);
    Napi::Object member = Napi::Object::New(env);
    member.Set("name", Napi::String::New(env, memberName != nullptr ? memberName : ""));
    // Bit offsets: blkheat's records have no bitfields, so a whole byte offset is exact.
    member.Set("offset", Napi::Number::New(env, btf_member_bit_offset(t, i) / 8.0));
    member.Set("size", Napi::Number::New(env, size < 0 ? -1 : static_cast<double>(size)));
    members.Set(static_cast<uint32_t>(i), member);
  }
  out.Set("members", members);
  return out;
}

Napi::Value BtfWrap::Close(const Napi::CallbackInfo& info) {
  if (btf_ != nullptr) {
    btf__free(btf_);
    btf_ = nullptr;
  }
  enumerators_.clear();
  return info.Env().Undefined();
}

}  // namespace blkheat
