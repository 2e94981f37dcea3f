// Over 400 lines: one N-API class (BpfObject); its methods share the lifecycle checks and the libbpf handle.
// BpfObject wrapper over bpf_object.
#include "object.h"

#include <cerrno>
#include <cstring>

#include "args.h"
#include "errors.h"
#include "globals.h"
#include "log.h"
#include "map.h"
#include "program.h"
#include "ringbuf.h"

namespace blkheat {
namespace {

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

// bpf_object__load() on the libuv thread pool. The print callback writes into this worker's
// capture (thread_local), so concurrent loads of different objects keep separate logs.
class LoadWorker : public Napi::AsyncWorker {
 public:
  LoadWorker(Napi::Object receiver, ObjectWrap* wrap)
      : Napi::AsyncWorker(receiver.Env(), "blkheat.load"),
        receiver_(Napi::Persistent(receiver)),
        wrap_(wrap),
        state_(wrap->state()),
        capture_(wrap->captureLevel()),
        deferred_(Napi::Promise::Deferred::New(receiver.Env())) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    LogScope scope(&capture_);
    int rc = bpf_object__load(state_->obj);
    err_ = rc < 0 ? -rc : 0;
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    state_->phase = err_ == 0 ? Phase::Loaded : Phase::LoadFailed;
    if (state_->closed) {
      // close() was called while loading: free now and report the cancellation.
      state_->Release();
      deferred_.Reject(MakeBpfError(env, Failure{"load", ECANCELED, "load " + state_->path, "the object was closed while loading", ""}));
      return;
    }
    try {
      wrap_->DeliverLog(env, capture_);
    } catch (const Napi::Error& error) {
      deferred_.Reject(error.Value());
      return;
    }
    if (err_ == 0) {
      deferred_.Resolve(env.Undefined());
      return;
    }
    Failure failure{"load", err_, "load " + state_->path, PrivilegeHint(Privilege::Load, err_), ""};
    if (failure.detail.empty() && err_ == EPERM)
      failure.detail = "permission denied although the process has CAP_BPF/CAP_SYS_ADMIN: check RLIMIT_MEMLOCK, kernel lockdown and LSM policy";
    AttachLog(failure, capture_);
    deferred_.Reject(MakeBpfError(env, failure));
  }

 private:
  Napi::ObjectReference receiver_;  // keeps the JS object (and so wrap_) alive while loading
  ObjectWrap* wrap_;
  std::shared_ptr<ObjectState> state_;
  LogCapture capture_;
  Napi::Promise::Deferred deferred_;
  int err_ = 0;
};

}  // namespace

Napi::Function ObjectWrap::Define(Napi::Env env) {
  return DefineClass(env, "BpfObject",
                     {
                         InstanceAccessor<&ObjectWrap::Path>("path"),
                         InstanceAccessor<&ObjectWrap::Loaded>("loaded"),
                         InstanceMethod<&ObjectWrap::Programs>("programs"),
                         InstanceMethod<&ObjectWrap::Maps>("maps"),
                         InstanceMethod<&ObjectWrap::Globals>("globals"),
                         InstanceMethod<&ObjectWrap::SetGlobal>("setGlobal"),
                         InstanceMethod<&ObjectWrap::GetGlobal>("getGlobal"),
                         InstanceMethod<&ObjectWrap::SetAutoload>("setAutoload"),
                         InstanceMethod<&ObjectWrap::SetMaxEntries>("setMaxEntries"),
                         InstanceMethod<&ObjectWrap::Load>("load"),
                         InstanceMethod<&ObjectWrap::Attach>("attach"),
                         InstanceMethod<&ObjectWrap::Program>("program"),
                         InstanceMethod<&ObjectWrap::Map>("map"),
                         InstanceMethod<&ObjectWrap::OpenRingBuffer>("openRingBuffer"),
                         InstanceMethod<&ObjectWrap::Close>("close"),
                     });
}

ObjectWrap::ObjectWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ObjectWrap>(info) {
  RequireNativeToken(info, "BpfObject", "openObject() to open BPF objects");
  state_ = std::make_shared<ObjectState>();
}

Napi::Value ObjectWrap::Open(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "openObject";
  std::string path = ArgString(info, 0, op, "path");
  if (path.empty()) ThrowUsage(env, op, EINVAL, op + ": path must not be empty");
  Napi::Object options = ArgOptions(info, 1, op);

  Napi::Value onLog = options.Get("onLog");
  if (!onLog.IsUndefined() && !onLog.IsFunction()) ThrowUsage(env, op, EINVAL, op + ": options.onLog must be a function");
  // With an onLog callback and no level, warnings are delivered; without one nothing is.
  int level = onLog.IsFunction() ? LIBBPF_WARN : kLogQuiet;
  Napi::Value levelValue = options.Get("logLevel");
  if (!levelValue.IsUndefined()) {
    if (!levelValue.IsString() || !ParseLogLevel(levelValue.As<Napi::String>().Utf8Value(), &level))
      ThrowUsage(env, op, EINVAL, op + ": options.logLevel must be 'quiet', 'warn', 'info' or 'debug'");
  }
  std::string objectName;
  Napi::Value nameValue = options.Get("objectName");
  if (!nameValue.IsUndefined()) {
    if (!nameValue.IsString()) ThrowUsage(env, op, EINVAL, op + ": options.objectName must be a string");
    objectName = nameValue.As<Napi::String>().Utf8Value();
  }
  std::string btfPath;
  Napi::Value btfValue = options.Get("btfCustomPath");
  if (!btfValue.IsUndefined()) {
    if (!btfValue.IsString() || btfValue.As<Napi::String>().Utf8Value().empty())
      ThrowUsage(env, op, EINVAL, op + ": options.btfCustomPath must be a non-empty string");
    btfPath = btfValue.As<Napi::String>().Utf8Value();
  }

  NativeToken token;
  Napi::Object obj = Data(env).objectClass.New({Napi::External<NativeToken>::New(env, &token)});
  ObjectWrap* wrap = Unwrap(obj);
  wrap->logLevel_ = level;
  if (onLog.IsFunction()) wrap->onLog_ = Napi::Persistent(onLog.As<Napi::Function>());
  wrap->state_->path = path;

  bpf_object_open_opts opts;
  std::memset(&opts, 0, sizeof(opts));
  opts.sz = sizeof(opts);
  if (!objectName.empty()) opts.object_name = objectName.c_str();
  // CO-RE relocations against this BTF instead of /sys/kernel/btf/vmlinux (kernels without
  // built-in BTF, with a BTF file from e.g. BTFHub).
  if (!btfPath.empty()) opts.btf_custom_path = btfPath.c_str();
  LogCapture capture(wrap->captureLevel());
  bpf_object* handle;
  int err = 0;
  {
    LogScope scope(&capture);
    handle = bpf_object__open_file(path.c_str(), &opts);
    if (handle == nullptr) err = errno != 0 ? errno : EINVAL;
  }
  wrap->DeliverLog(env, capture);
  if (handle == nullptr) {
    Failure failure{op, err, "open " + path, "", ""};
    if (err == LIBBPF_ERRNO__FORMAT || err == LIBBPF_ERRNO__LIBELF) failure.detail = "not a BPF ELF object";
    AttachLog(failure, capture);
    ThrowBpf(env, failure);
  }
  wrap->state_->obj = handle;
  return obj;
}

int ObjectWrap::captureLevel() const { return logLevel_ < LIBBPF_WARN ? LIBBPF_WARN : logLevel_; }

void ObjectWrap::DeliverLog(Napi::Env env, LogCapture& capture) {
  if (onLog_.IsEmpty() || logLevel_ == kLogQuiet) return;
  for (const LogLine& line : capture.Lines()) {
    if (line.level > logLevel_) continue;
    onLog_.Call({Napi::String::New(env, LogLevelName(line.level)), Napi::String::New(env, line.text)});
  }
}

Napi::Value ObjectWrap::Path(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), state_->path); }

Napi::Value ObjectWrap::Loaded(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), !state_->closed && state_->phase == Phase::Loaded);
}

bpf_program* ObjectWrap::FindProgram(Napi::Env env, const std::string& op, const std::string& name) {
  bpf_program* prog = bpf_object__find_program_by_name(state_->obj, name.c_str());
  if (prog != nullptr) return prog;
  std::vector<std::string> names;
  bpf_program* p;
  bpf_object__for_each_program(p, state_->obj) names.emplace_back(bpf_program__name(p));
  ThrowUsage(env, op, ENOENT, op + ": " + What() + " has no program '" + name + "' (programs: " + JoinNames(names) + ")");
}

bpf_map* ObjectWrap::FindMap(Napi::Env env, const std::string& op, const std::string& name) {
  bpf_map* map = bpf_object__find_map_by_name(state_->obj, name.c_str());
  if (map != nullptr) return map;
  std::vector<std::string> names;
  bpf_map* m;
  bpf_object__for_each_map(m, state_->obj) names.emplace_back(bpf_map__name(m));
  ThrowUsage(env, op, ENOENT, op + ": " + What() + " has no map '" + name + "' (maps: " + JoinNames(names) + ")");
}

GlobalVar ObjectWrap::FindGlobal(Napi::Env env, const std::string& op, const std::string& name) {
  std::vector<GlobalVar> vars = ListGlobals(state_->obj);
  std::vector<std::string> names;
  for (GlobalVar& var : vars) {
    if (var.name == name) return var;
    names.push_back(var.name);
  }
  ThrowUsage(env, op, ENOENT, op + ": " + What() + " has no global variable '" + name + "' (globals: " + JoinNames(names) + ")");
}

Napi::Value ObjectWrap::Programs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  state_->CheckUsable(env, "programs", What());
  Napi::Array out = Napi::Array::New(env);
  uint32_t i = 0;
  bpf_program* prog;
  bpf_object__for_each_program(prog, state_->obj) {
    Napi::Object spec = Napi::Object::New(env);
    spec.Set("name", bpf_program__name(prog));
    spec.Set("section", bpf_program__section_name(prog));
    spec.Set("type", ProgramTypeName(bpf_program__type(prog)));
    spec.Set("autoload", Napi::Boolean::New(env, bpf_program__autoload(prog)));
    out.Set(i++, spec);
  }
  return out;
}

Napi::Value ObjectWrap::Maps(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  state_->CheckUsable(env, "maps", What());
  Napi::Array out = Napi::Array::New(env);
  uint32_t i = 0;
  bpf_map* map;
  bpf_object__for_each_map(map, state_->obj) {
    Napi::Object spec = Napi::Object::New(env);
    spec.Set("name", bpf_map__name(map));
    spec.Set("type", MapTypeName(bpf_map__type(map)));
    spec.Set("keySize", Napi::Number::New(env, bpf_map__key_size(map)));
    spec.Set("valueSize", Napi::Number::New(env, bpf_map__value_size(map)));
    spec.Set("maxEntries", Napi::Number::New(env, bpf_map__max_entries(map)));
    out.Set(i++, spec);
  }
  return out;
}

Napi::Value ObjectWrap::Globals(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  state_->CheckUsable(env, "globals", What());
  std::vector<GlobalVar> vars = ListGlobals(state_->obj);
  Napi::Array out = Napi::Array::New(env, vars.size());
  for (size_t i = 0; i < vars.size(); i++) {
    Napi::Object spec = Napi::Object::New(env);
    spec.Set("name", vars[i].name);
    spec.Set("section", vars[i].section);
    spec.Set("offset", Napi::Number::New(env, vars[i].offset));
    spec.Set("size", Napi::Number::New(env, vars[i].size));
    spec.Set("readOnly", Napi::Boolean::New(env, vars[i].readOnly));
    out.Set(static_cast<uint32_t>(i), spec);
  }
  return out;
}

Napi::Value ObjectWrap::SetGlobal(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "setGlobal";
  std::string name = ArgString(info, 0, op, "name");
  Bytes value = ArgBytes(info, 1, op, "value");
  state_->CheckUsable(env, op, What());
  GlobalVar var = FindGlobal(env, op, name);
  CheckLength(env, op, ("value for '" + name + "'").c_str(), value.length, var.size, "the variable's size");
  if (state_->phase == Phase::LoadFailed) ThrowUsage(env, op, EINVAL, op + ": " + What() + " failed to load");
  if (state_->phase == Phase::Loaded) {
    if (var.readOnly)
      ThrowUsage(env, op, EBUSY,
                 op + ": '" + name + "' is in " + var.section +
                     ", which is frozen once the object is loaded: set const volatile knobs before load()");
    int err = WriteLiveGlobal(var, value.data, value.length);
    if (err != 0) ThrowBpf(env, Failure{op, err, "setGlobal '" + name + "' in the loaded " + var.section + " map", "", ""});
    return env.Undefined();
  }
  size_t size = 0;
  const void* initial = bpf_map__initial_value(var.map, &size);
  if (initial == nullptr || static_cast<size_t>(var.offset) + var.size > size)
    ThrowUsage(env, op, EINVAL, op + ": " + var.section + " has no initial value buffer covering '" + name + "'");
  std::vector<uint8_t> data(static_cast<const uint8_t*>(initial), static_cast<const uint8_t*>(initial) + size);
  std::memcpy(data.data() + var.offset, value.data, value.length);
  int rc = bpf_map__set_initial_value(var.map, data.data(), data.size());
  if (rc != 0) ThrowBpf(env, Failure{op, -rc, "setGlobal '" + name + "'", "", ""});
  return env.Undefined();
}

Napi::Value ObjectWrap::GetGlobal(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "getGlobal";
  std::string name = ArgString(info, 0, op, "name");
  state_->CheckUsable(env, op, What());
  GlobalVar var = FindGlobal(env, op, name);
  if (state_->phase == Phase::Loaded) {
    std::vector<uint8_t> bytes;
    int err = ReadLiveGlobal(var, &bytes);
    if (err != 0) ThrowBpf(env, Failure{op, err, "getGlobal '" + name + "' from the loaded " + var.section + " map", "", ""});
    return Napi::Buffer<uint8_t>::Copy(env, bytes.data(), bytes.size());
  }
  size_t size = 0;
  const void* initial = bpf_map__initial_value(var.map, &size);
  if (initial == nullptr || static_cast<size_t>(var.offset) + var.size > size)
    ThrowUsage(env, op, EINVAL, op + ": " + var.section + " has no initial value buffer covering '" + name + "'");
  return Napi::Buffer<uint8_t>::Copy(env, static_cast<const uint8_t*>(initial) + var.offset, var.size);
}

Napi::Value ObjectWrap::SetAutoload(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "setAutoload";
  std::string name = ArgString(info, 0, op, "program");
  bool autoload = ArgBool(info, 1, op, "autoload");
  state_->CheckUsable(env, op, What());
  bpf_program* prog = FindProgram(env, op, name);
  if (state_->phase != Phase::Opened) ThrowUsage(env, op, EBUSY, op + ": " + What() + " is already loaded: set autoload before load()");
  int rc = bpf_program__set_autoload(prog, autoload);
  if (rc != 0) ThrowBpf(env, Failure{op, -rc, "setAutoload '" + name + "'", "", ""});
  return env.Undefined();
}

Napi::Value ObjectWrap::SetMaxEntries(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "setMaxEntries";
  std::string name = ArgString(info, 0, op, "map");
  double maxEntries = ArgInteger(info.Length() > 1 ? info[1] : env.Undefined(), env, op, "maxEntries", 1, 4294967295.0);
  state_->CheckUsable(env, op, What());
  bpf_map* map = FindMap(env, op, name);
  if (state_->phase != Phase::Opened) ThrowUsage(env, op, EBUSY, op + ": " + What() + " is already loaded: set max entries before load()");
  int rc = bpf_map__set_max_entries(map, static_cast<__u32>(maxEntries));
  if (rc != 0) ThrowBpf(env, Failure{op, -rc, "setMaxEntries '" + name + "'", "", ""});
  return env.Undefined();
}

Napi::Value ObjectWrap::Load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "load";
  state_->CheckUsable(env, op, What());
  if (state_->phase == Phase::Loaded) ThrowUsage(env, op, EBUSY, op + ": " + What() + " is already loaded");
  if (state_->phase == Phase::LoadFailed)
    ThrowUsage(env, op, EINVAL, op + ": " + What() + " failed to load before; libbpf cannot retry: open the file again");
  state_->phase = Phase::Loading;
  auto* worker = new LoadWorker(info.This().As<Napi::Object>(), this);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

Napi::Value ObjectWrap::Attach(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "attach";
  std::string name = ArgString(info, 0, op, "program");
  state_->CheckLoaded(env, op, What());
  bpf_program* prog = FindProgram(env, op, name);
  if (bpf_program__fd(prog) < 0)
    ThrowUsage(env, op, EINVAL, op + ": program '" + name + "' was not loaded (its autoload was off)");
  LogCapture capture(captureLevel());
  bpf_link* link;
  int err = 0;
  {
    LogScope scope(&capture);
    link = bpf_program__attach(prog);
    if (link == nullptr) err = errno != 0 ? errno : EINVAL;
  }
  DeliverLog(env, capture);
  if (link == nullptr) {
    Failure failure{op, err, "attach program '" + name + "' (" + bpf_program__section_name(prog) + ")", PrivilegeHint(Privilege::Attach, err), ""};
    AttachLog(failure, capture);
    ThrowBpf(env, failure);
  }
  auto record = std::make_shared<LinkRecord>();
  record->link = link;
  record->program = name;
  state_->links.push_back(record);
  return LinkWrap::Create(env, state_, record);
}

Napi::Value ObjectWrap::Program(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "program";
  std::string name = ArgString(info, 0, op, "name");
  state_->CheckLoaded(env, op, What());
  bpf_program* prog = FindProgram(env, op, name);
  if (bpf_program__fd(prog) < 0)
    ThrowUsage(env, op, EINVAL, op + ": program '" + name + "' was not loaded (its autoload was off)");
  return ProgramWrap::Create(env, state_, prog);
}

Napi::Value ObjectWrap::Map(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "map";
  std::string name = ArgString(info, 0, op, "name");
  state_->CheckLoaded(env, op, What());
  bpf_map* map = FindMap(env, op, name);
  if (bpf_map__fd(map) < 0) ThrowUsage(env, op, EINVAL, op + ": map '" + name + "' was not created");
  return MapWrap::Create(env, state_, map);
}

Napi::Value ObjectWrap::OpenRingBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string op = "openRingBuffer";
  std::string name = ArgString(info, 0, op, "map");
  Napi::Object options = ArgOptions(info, 1, op);
  state_->CheckLoaded(env, op, What());
  bpf_map* map = FindMap(env, op, name);
  if (bpf_map__type(map) != BPF_MAP_TYPE_RINGBUF)
    ThrowUsage(env, op, EINVAL, op + ": map '" + name + "' is a " + MapTypeName(bpf_map__type(map)) + " map, not a ringbuf");
  Napi::Value maxQueuedValue = options.Get("maxQueued");
  double maxQueued = 65536;
  if (!maxQueuedValue.IsUndefined()) maxQueued = ArgInteger(maxQueuedValue, env, op, "options.maxQueued", 1, 1 << 30);
  Napi::Value onRecords = options.Get("onRecords");
  if (!onRecords.IsUndefined() && !onRecords.IsFunction())
    ThrowUsage(env, op, EINVAL, op + ": options.onRecords must be a function");
  auto record = std::make_shared<RingRecord>(env, bpf_map__name(map), static_cast<size_t>(maxQueued));
  record->Open(bpf_map__fd(map), onRecords);
  state_->rings.push_back(record);
  return RingBufferWrap::Create(env, state_, record);
}

Napi::Value ObjectWrap::Close(const Napi::CallbackInfo& info) {
  if (state_->phase == Phase::Loading) state_->closed = true;  // the load worker frees it when done
  else state_->Release();
  return info.Env().Undefined();
}

}  // namespace blkheat
