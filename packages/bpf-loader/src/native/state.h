// The libbpf object and everything that hangs off it, shared by the object's JS wrapper and its
// children (programs, maps, links, ring buffers) so that any of them can outlive the others and
// the last one to go frees it all. close() frees everything at once; later use throws EBADF.
#pragma once

#include "common.h"

namespace blkheat {

// An attachment made by attach(). Owned by the object: dropping the JS Link does not detach.
struct LinkRecord {
  bpf_link* link = nullptr;
  std::string program;
  void Destroy();
};

enum class Phase { Opened, Loading, Loaded, LoadFailed };

struct ObjectState {
  bpf_object* obj = nullptr;
  std::string path;
  Phase phase = Phase::Opened;
  // close() was called (resources are freed at once, or when a running load() finishes).
  bool closed = false;
  std::vector<std::shared_ptr<LinkRecord>> links;
  std::vector<std::shared_ptr<RingRecord>> rings;

  ObjectState() = default;
  ObjectState(const ObjectState&) = delete;
  ObjectState& operator=(const ObjectState&) = delete;
  ~ObjectState();

  // Closes ring buffers, detaches links and closes the libbpf object. Main thread only.
  void Release();

  // Throws EBADF if closed, EBUSY while a load() runs. `what` names the handle for messages.
  void CheckUsable(Napi::Env env, const std::string& op, const std::string& what) const;
  // CheckUsable plus: load() must have succeeded.
  void CheckLoaded(Napi::Env env, const std::string& op, const std::string& what) const;
};

}  // namespace blkheat
