// Program and Link wrappers.
#include "program.h"

#include <cerrno>
#include <cstring>

#include "args.h"
#include "errors.h"

namespace blkheat {

std::string ProgramTypeName(bpf_prog_type type) {
  const char* name = libbpf_bpf_prog_type_str(type);
  return name != nullptr ? name : "unknown(" + std::to_string(static_cast<int>(type)) + ")";
}

Napi::Function ProgramWrap::Define(Napi::Env env) {
  return DefineClass(env, "Program",
                     {
                         InstanceAccessor<&ProgramWrap::Name>("name"),
                         InstanceAccessor<&ProgramWrap::Section>("section"),
                         InstanceAccessor<&ProgramWrap::Fd>("fd"),
                         InstanceMethod<&ProgramWrap::Stats>("stats"),
                         InstanceMethod<&ProgramWrap::Run>("run"),
                     });
}

Napi::Object ProgramWrap::Create(Napi::Env env, std::shared_ptr<ObjectState> state, bpf_program* prog) {
  NativeToken token;
  Napi::Object obj = Data(env).programClass.New({Napi::External<NativeToken>::New(env, &token)});
  ProgramWrap* wrap = Unwrap(obj);
  wrap->state_ = std::move(state);
  wrap->prog_ = prog;
  wrap->name_ = bpf_program__name(prog);
  wrap->section_ = bpf_program__section_name(prog);
  return obj;
}

ProgramWrap::ProgramWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ProgramWrap>(info) {
  RequireNativeToken(info, "Program", "BpfObject.program() to get programs");
}

Napi::Value ProgramWrap::Name(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), name_); }
Napi::Value ProgramWrap::Section(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), section_); }
Napi::Value ProgramWrap::Fd(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), state_->closed ? -1 : bpf_program__fd(prog_));
}

int ProgramWrap::CheckedFd(Napi::Env env, const std::string& op) {
  state_->CheckLoaded(env, op, "program '" + name_ + "' (its object)");
  int fd = bpf_program__fd(prog_);
  if (fd < 0) ThrowUsage(env, op, EBADF, op + ": program '" + name_ + "' is not loaded");
  return fd;
}

Napi::Value ProgramWrap::Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "program.stats";
  int fd = CheckedFd(env, op);
  bpf_prog_info progInfo;
  std::memset(&progInfo, 0, sizeof(progInfo));
  __u32 len = sizeof(progInfo);
  // libbpf 1.1 predates bpf_prog_get_info_by_fd(); this is the same BPF_OBJ_GET_INFO_BY_FD call.
  if (bpf_obj_get_info_by_fd(fd, &progInfo, &len) != 0) {
    int err = errno;
    ThrowBpf(env, Failure{op, err, "program '" + name_ + "' get_info_by_fd", PrivilegeHint(Privilege::MapAccess, err), ""});
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("runCount", Napi::Number::New(env, static_cast<double>(progInfo.run_cnt)));
  out.Set("runTimeNs", Napi::Number::New(env, static_cast<double>(progInfo.run_time_ns)));
  out.Set("recursionMisses", Napi::Number::New(env, static_cast<double>(progInfo.recursion_misses)));
  return out;
}

// The largest context a caller may hand run(); BPF_PROG_TEST_RUN contexts are small structs.
constexpr size_t kMaxRunContext = 64 * 1024;

Napi::Value ProgramWrap::Run(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "program.run";
  int fd = CheckedFd(env, op);
  const uint8_t* ctx = nullptr;
  size_t ctxLen = 0;
  if (info.Length() > 0 && !info[0].IsUndefined()) {
    if (!info[0].IsBuffer()) ThrowUsage(env, op, EINVAL, op + ": context must be a Buffer");
    Napi::Buffer<uint8_t> buf = info[0].As<Napi::Buffer<uint8_t>>();
    if (buf.Length() > kMaxRunContext)
      ThrowUsage(env, op, EINVAL, op + ": context of " + std::to_string(buf.Length()) + " bytes exceeds " + std::to_string(kMaxRunContext));
    ctx = buf.Data();
    ctxLen = buf.Length();
  }
  bpf_test_run_opts opts;
  std::memset(&opts, 0, sizeof(opts));
  opts.sz = sizeof(opts);
  opts.ctx_in = ctx;
  opts.ctx_size_in = static_cast<__u32>(ctxLen);
  if (bpf_prog_test_run_opts(fd, &opts) != 0) {
    int err = errno;
    ThrowBpf(env, Failure{op, err, "program '" + name_ + "' test_run", PrivilegeHint(Privilege::MapAccess, err), ""});
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("retval", Napi::Number::New(env, static_cast<double>(opts.retval)));
  out.Set("durationNs", Napi::Number::New(env, static_cast<double>(opts.duration)));
  return out;
}

// ---- Link ---------------------------------------------------------------------------------

Napi::Function LinkWrap::Define(Napi::Env env) {
  return DefineClass(env, "Link",
                     {
                         InstanceAccessor<&LinkWrap::Program>("program"),
                         InstanceMethod<&LinkWrap::Close>("close"),
                     });
}

Napi::Object LinkWrap::Create(Napi::Env env, std::shared_ptr<ObjectState> state, std::shared_ptr<LinkRecord> record) {
  NativeToken token;
  Napi::Object obj = Data(env).linkClass.New({Napi::External<NativeToken>::New(env, &token)});
  LinkWrap* wrap = Unwrap(obj);
  wrap->state_ = std::move(state);
  wrap->record_ = std::move(record);
  return obj;
}

LinkWrap::LinkWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<LinkWrap>(info) {
  RequireNativeToken(info, "Link", "BpfObject.attach() to create links");
}

Napi::Value LinkWrap::Program(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), record_->program); }

Napi::Value LinkWrap::Close(const Napi::CallbackInfo& info) {
  record_->Destroy();
  auto& links = state_->links;
  for (auto it = links.begin(); it != links.end(); ++it) {
    if (it->get() == record_.get()) {
      links.erase(it);
      break;
    }
  }
  return info.Env().Undefined();
}

}  // namespace blkheat
