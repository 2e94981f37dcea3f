// ObjectState: teardown order is ring buffers (they read the maps), links, then the object.
#include "state.h"

#include <cerrno>

#include "errors.h"
#include "ringbuf.h"

namespace blkheat {

void LinkRecord::Destroy() {
  if (link != nullptr) {
    bpf_link__destroy(link);
    link = nullptr;
  }
}

ObjectState::~ObjectState() { Release(); }

void ObjectState::Release() {
  closed = true;
  for (auto& ring : rings) ring->Close();
  rings.clear();
  for (auto& link : links) link->Destroy();
  links.clear();
  if (obj != nullptr) {
    bpf_object__close(obj);
    obj = nullptr;
  }
}

void ObjectState::CheckUsable(Napi::Env env, const std::string& op, const std::string& what) const {
  if (closed) ThrowUsage(env, op, EBADF, op + ": " + what + " is closed");
  if (phase == Phase::Loading) ThrowUsage(env, op, EBUSY, op + ": " + what + " is being loaded (await load() first)");
}

void ObjectState::CheckLoaded(Napi::Env env, const std::string& op, const std::string& what) const {
  CheckUsable(env, op, what);
  if (phase == Phase::Opened) ThrowUsage(env, op, EINVAL, op + ": " + what + " is not loaded yet (await load() first)");
  if (phase == Phase::LoadFailed)
    ThrowUsage(env, op, EINVAL, op + ": " + what + " failed to load; close it and open the file again");
}

}  // namespace blkheat
