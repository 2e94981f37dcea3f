// Static linking of Debian's libbpf.a into a shared object.
//
// Debian builds libbpf.a as position-independent *executable* code: every reference is
// PIC-safe except one, libbpf's default print function writing to `stderr`, which uses a
// PC-relative relocation that a shared object cannot resolve against libc. The build script
// (scripts/build-addon.mjs) copies libbpf.a with that one symbol renamed to the hidden variable
// below, so the reference binds inside this .node. It only matters if libbpf's default print
// function ever runs; the addon installs its own print callback before any libbpf call.
#include <cstdio>

extern "C" {
__attribute__((visibility("hidden"))) FILE* blkheat_libbpf_stderr = stderr;
}
