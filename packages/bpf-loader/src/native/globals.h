// Global variables: found through the object's BTF DATASECs (.rodata*, .data*, .bss*), backed
// by libbpf's internal array maps.
#pragma once

#include "common.h"

namespace blkheat {

struct GlobalVar {
  std::string name;
  std::string section;
  uint32_t offset = 0;
  uint32_t size = 0;
  bool readOnly = false;  // .rodata*: const volatile knobs, frozen at load
  bpf_map* map = nullptr;
};

std::vector<GlobalVar> ListGlobals(bpf_object* obj);

// After load: read or write the variable's bytes in the kernel map (key 0 of the internal array).
// Returns 0 or a positive errno.
int ReadLiveGlobal(const GlobalVar& var, std::vector<uint8_t>* out);
int WriteLiveGlobal(const GlobalVar& var, const uint8_t* data, size_t length);

}  // namespace blkheat
