// Global variables from BTF DATASECs. libbpf fixes up DATASEC sizes and VAR offsets at open, so
// the object's BTF is authoritative from openObject() on.
#include "globals.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace blkheat {
namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool IsDataSection(const std::string& name) {
  return name == ".rodata" || name == ".data" || name == ".bss" || StartsWith(name, ".rodata.") || StartsWith(name, ".data.") ||
         StartsWith(name, ".bss.");
}

}  // namespace

std::vector<GlobalVar> ListGlobals(bpf_object* obj) {
  std::vector<GlobalVar> out;
  const btf* b = bpf_object__btf(obj);
  if (b == nullptr) return out;
  __u32 count = btf__type_cnt(b);
  for (__u32 id = 1; id < count; id++) {
    const btf_type* t = btf__type_by_id(b, id);
    if (t == nullptr || !btf_is_datasec(t)) continue;
    const char* secName = btf__name_by_offset(b, t->name_off);
    if (secName == nullptr || !IsDataSection(secName)) continue;
    // libbpf names internal maps "<obj>.rodata" but finds them by their ELF section name too.
    bpf_map* map = bpf_object__find_map_by_name(obj, secName);
    if (map == nullptr) continue;
    const btf_var_secinfo* vsi = btf_var_secinfos(t);
    for (__u16 i = 0; i < btf_vlen(t); i++, vsi++) {
      const btf_type* var = btf__type_by_id(b, vsi->type);
      if (var == nullptr || !btf_is_var(var)) continue;
      // Static variables are private to the BPF side (BPF skeletons skip them as well).
      if (btf_var(var)->linkage == BTF_VAR_STATIC) continue;
      GlobalVar g;
      g.name = btf__name_by_offset(b, var->name_off);
      g.section = secName;
      g.offset = vsi->offset;
      g.size = vsi->size;
      g.readOnly = StartsWith(g.section, ".rodata");
      g.map = map;
      out.push_back(std::move(g));
    }
  }
  return out;
}

int ReadLiveGlobal(const GlobalVar& var, std::vector<uint8_t>* out) {
  int fd = bpf_map__fd(var.map);
  if (fd < 0) return EBADF;
  std::vector<uint8_t> value(bpf_map__value_size(var.map));
  __u32 key = 0;
  if (bpf_map_lookup_elem(fd, &key, value.data()) != 0) return errno;
  if (static_cast<size_t>(var.offset) + var.size > value.size()) return ERANGE;
  out->assign(value.begin() + var.offset, value.begin() + var.offset + var.size);
  return 0;
}

int WriteLiveGlobal(const GlobalVar& var, const uint8_t* data, size_t length) {
  int fd = bpf_map__fd(var.map);
  if (fd < 0) return EBADF;
  size_t valueSize = bpf_map__value_size(var.map);
  if (static_cast<size_t>(var.offset) + length > valueSize) return ERANGE;
  // Internal maps are BPF_F_MMAPABLE: writing through a shared mapping touches only this
  // variable's bytes, so concurrent updates of its neighbours by BPF programs are not lost.
  long page = sysconf(_SC_PAGESIZE);
  size_t mapLength = (valueSize + static_cast<size_t>(page) - 1) / static_cast<size_t>(page) * static_cast<size_t>(page);
  void* mem = mmap(nullptr, mapLength, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mem != MAP_FAILED) {
    std::memcpy(static_cast<uint8_t*>(mem) + var.offset, data, length);
    munmap(mem, mapLength);
    return 0;
  }
  // Not mmapable (older kernels): read-modify-write the whole value.
  std::vector<uint8_t> value(valueSize);
  __u32 key = 0;
  if (bpf_map_lookup_elem(fd, &key, value.data()) != 0) return errno;
  std::memcpy(value.data() + var.offset, data, length);
  if (bpf_map_update_elem(fd, &key, value.data(), BPF_ANY) != 0) return errno;
  return 0;
}

}  // namespace blkheat
