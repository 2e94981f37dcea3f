// BpfError construction. The class itself is defined in TypeScript and handed over by init().
#include "errors.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "log.h"

namespace blkheat {
namespace {

constexpr int kEnotsupp = 524;  // kernel-internal ENOTSUPP, returned by bpf() for unsupported map ops

const char* LibbpfErrnoName(int err) {
  switch (err) {
    case LIBBPF_ERRNO__LIBELF:
      return "LIBBPF_ERRNO__LIBELF";
    case LIBBPF_ERRNO__FORMAT:
      return "LIBBPF_ERRNO__FORMAT";
    case LIBBPF_ERRNO__KVERSION:
      return "LIBBPF_ERRNO__KVERSION";
    case LIBBPF_ERRNO__ENDIAN:
      return "LIBBPF_ERRNO__ENDIAN";
    case LIBBPF_ERRNO__INTERNAL:
      return "LIBBPF_ERRNO__INTERNAL";
    case LIBBPF_ERRNO__RELOC:
      return "LIBBPF_ERRNO__RELOC";
    case LIBBPF_ERRNO__LOAD:
      return "LIBBPF_ERRNO__LOAD";
    case LIBBPF_ERRNO__VERIFY:
      return "LIBBPF_ERRNO__VERIFY";
    case LIBBPF_ERRNO__PROG2BIG:
      return "LIBBPF_ERRNO__PROG2BIG";
    case LIBBPF_ERRNO__KVER:
      return "LIBBPF_ERRNO__KVER";
    case LIBBPF_ERRNO__PROGTYPE:
      return "LIBBPF_ERRNO__PROGTYPE";
    case LIBBPF_ERRNO__WRNGPID:
      return "LIBBPF_ERRNO__WRNGPID";
    case LIBBPF_ERRNO__INVSEQ:
      return "LIBBPF_ERRNO__INVSEQ";
    case LIBBPF_ERRNO__NLPARSE:
      return "LIBBPF_ERRNO__NLPARSE";
    default:
      return nullptr;
  }
}

std::string CapabilitySummary() {
  std::string missing;
  if (!HasCapability(CAP_BPF)) missing += "CAP_BPF, ";
  if (!HasCapability(CAP_PERFMON)) missing += "CAP_PERFMON, ";
  if (!HasCapability(CAP_SYS_ADMIN)) missing += "CAP_SYS_ADMIN, ";
  if (missing.empty()) return "";
  missing.resize(missing.size() - 2);
  return " (this process runs as euid " + std::to_string(geteuid()) + " without " + missing + ")";
}

}  // namespace

std::string ErrnoCode(int err) {
  if (err == kEnotsupp) return "ENOTSUPP";
  if (const char* name = LibbpfErrnoName(err)) return name;
  if (const char* name = strerrorname_np(err)) return name;
  return "E" + std::to_string(err);
}

std::string ErrnoMessage(int err) {
  if (err == kEnotsupp) return "Operation not supported";
  char buf[256];
  if (libbpf_strerror(err, buf, sizeof(buf)) != 0) return "Unknown error " + std::to_string(err);
  return buf;
}

bool HasCapability(int cap) {
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return geteuid() == 0;
  return (data[cap / 32].effective & (1u << (cap % 32))) != 0;
}

std::string PrivilegeHint(Privilege privilege, int err) {
  if (err != EPERM && err != EACCES) return "";
  bool bpf = HasCapability(CAP_BPF);
  bool perfmon = HasCapability(CAP_PERFMON);
  bool admin = HasCapability(CAP_SYS_ADMIN);
  switch (privilege) {
    case Privilege::Load:
      if ((bpf && perfmon) || admin) return "";
      return "loading BPF programs needs root (CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN on older kernels)" + CapabilitySummary();
    case Privilege::Attach:
      if ((bpf && perfmon) || admin) return "";
      return "attaching BPF programs to tracepoints needs root (CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN on older kernels)" +
             CapabilitySummary();
    case Privilege::Stats:
      if (admin) return "";
      return "enabling BPF run-time statistics needs root (CAP_SYS_ADMIN)" + CapabilitySummary();
    case Privilege::MapAccess:
      if (bpf || admin) return "";
      return "accessing BPF maps needs root (CAP_BPF, or CAP_SYS_ADMIN on older kernels)" + CapabilitySummary();
    case Privilege::Btf:
      return "reading kernel BTF needs read access to the BTF file (normally /sys/kernel/btf/vmlinux, mode 0444)";
    case Privilege::None:
      break;
  }
  return "";
}

void AttachLog(Failure& failure, LogCapture& capture) {
  failure.log = capture.Text();
  std::string first = capture.FirstWarning();
  std::string verdict = capture.VerifierVerdict();
  if (!verdict.empty()) {
    std::string prog = capture.FailedProgram();
    std::string text = "the BPF verifier rejected " + (prog.empty() ? std::string("a program") : "program '" + prog + "'") +
                       ": " + verdict + " (full verifier log in error.libbpfLog)";
    failure.detail = failure.detail.empty() ? text : failure.detail + "; " + text;
  } else if (!first.empty() && failure.detail.find("needs root") == std::string::npos) {
    // (A missing privilege explains everything; libbpf's first complaint would only distract,
    // e.g. "Failed to bump RLIMIT_MEMLOCK". The whole log stays in libbpfLog.)
    failure.detail = failure.detail.empty() ? first : failure.detail + "\n  " + first;
  }
}

Napi::Value MakeBpfError(Napi::Env env, const Failure& failure) {
  std::string message = failure.context + ": " + ErrnoMessage(failure.err) + " (" + ErrnoCode(failure.err) + ")";
  if (!failure.detail.empty()) message += ": " + failure.detail;
  Napi::Object details = Napi::Object::New(env);
  details.Set("errno", Napi::Number::New(env, failure.err));
  details.Set("code", Napi::String::New(env, ErrnoCode(failure.err)));
  details.Set("libbpfLog", Napi::String::New(env, failure.log));
  details.Set("op", Napi::String::New(env, failure.op));
  AddonData& data = Data(env);
  if (!data.errorClass.IsEmpty()) return data.errorClass.New({Napi::String::New(env, message), details});
  Napi::Error error = Napi::Error::New(env, message);
  for (const char* key : {"errno", "code", "libbpfLog", "op"}) error.Set(key, details.Get(key));
  return error.Value();
}

void ThrowBpf(Napi::Env env, const Failure& failure) { throw Napi::Error(env, MakeBpfError(env, failure)); }

void ThrowUsage(Napi::Env env, const std::string& op, int err, const std::string& message) {
  std::string text = message + " (" + ErrnoCode(err) + ")";
  Napi::Object details = Napi::Object::New(env);
  details.Set("errno", Napi::Number::New(env, err));
  details.Set("code", Napi::String::New(env, ErrnoCode(err)));
  details.Set("libbpfLog", Napi::String::New(env, ""));
  details.Set("op", Napi::String::New(env, op));
  AddonData& data = Data(env);
  if (!data.errorClass.IsEmpty()) throw Napi::Error(env, data.errorClass.New({Napi::String::New(env, text), details}));
  Napi::Error error = Napi::Error::New(env, text);
  for (const char* key : {"errno", "code", "libbpfLog", "op"}) error.Set(key, details.Get(key));
  throw error;
}

void RequireNativeToken(const Napi::CallbackInfo& info, const std::string& cls, const std::string& how) {
  if (info.Length() != 1 || !info[0].IsExternal()) ThrowUsage(info.Env(), cls, EINVAL, cls + ": use " + how);
}

}  // namespace blkheat
