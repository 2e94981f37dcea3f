// Node.js refuses process.setuid()/setgid()/setgroups() when its libuv may use io_uring
// (CVE-2024-22017: a ring set up as root keeps root's credentials for what it does later). It
// asks its own patched libuv whether io_uring is in use; a Node built on the system's libuv
// (Debian 13's) cannot ask, so it refuses always, whatever UV_USE_IO_URING says. The caller
// (the agent's service/drop-root.ts) calls this only where libuv was told not to use io_uring
// before the process started (UV_USE_IO_URING=0), which is the condition Node's check stands for.
//
// glibc's setgroups/setgid/setuid apply to every thread of the process (its setxid broadcast),
// as Node's own do; the raw syscalls would change the calling thread only.
#include "credentials.h"

#include <grp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "args.h"
#include "errors.h"

namespace blkheat {

Napi::Value SwitchUser(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "switchUser";
  if (info.Length() != 2) ThrowUsage(env, op, EINVAL, op + ": expects (uid, gid)");
  // (uid_t)-1 means "unchanged" to the kernel: not a user to switch to.
  auto uid = static_cast<uid_t>(ArgInteger(info[0], env, op, "uid", 0, 4294967294.0));
  auto gid = static_cast<gid_t>(ArgInteger(info[1], env, op, "gid", 0, 4294967294.0));
  if (setgroups(0, nullptr) != 0) ThrowUsage(env, op, errno, op + ": setgroups(0): " + std::strerror(errno));
  if (setgid(gid) != 0) ThrowUsage(env, op, errno, op + ": setgid(" + std::to_string(gid) + "): " + std::strerror(errno));
  if (setuid(uid) != 0) ThrowUsage(env, op, errno, op + ": setuid(" + std::to_string(uid) + "): " + std::strerror(errno));
  return env.Undefined();
}

}  // namespace blkheat
