{
  "targets": [
    {
      "target_name": "bpf_loader",
      "sources": [
        "src/native/addon.cc",
        "src/native/btf.cc",
        "src/native/credentials.cc",
        "src/native/errors.cc",
        "src/native/globals.cc",
        "src/native/libbpf_static.cc",
        "src/native/log.cc",
        "src/native/map.cc",
        "src/native/object.cc",
        "src/native/program.cc",
        "src/native/ringbuf.cc",
        "src/native/state.cc",
        "src/native/stats.cc"
      ],
      "include_dirs": ["node_modules/node-addon-api"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-Wall", "-Wextra", "-fvisibility=hidden"],
      "ldflags": ["-Wl,-z,nodelete"],
      "libraries": ["<(module_root_dir)/build/libbpf-static/libbpf.a", "-lelf", "-lz", "-Wl,--exclude-libs,ALL"]
    }
  ]
}
