// Ring buffer reader. Delivery path: kernel wakeup -> epoll fd readable -> uv_poll callback on the
// event loop -> ring_buffer__consume() copies records into a bounded queue -> onRecords(batch).
#include "ringbuf.h"

#include <cerrno>
#include <cstring>
#include <new>

#include "args.h"
#include "errors.h"
#include "log.h"

namespace blkheat {

RingRecord::RingRecord(Napi::Env env, std::string mapName, size_t maxQueued)
    : env_(env), mapName_(std::move(mapName)), maxQueued_(maxQueued) {}

RingRecord::~RingRecord() { Close(); }

void RingRecord::Open(int mapFd, Napi::Value onRecords) {
  const std::string op = "openRingBuffer";
  LogCapture capture(LIBBPF_WARN);
  int err = 0;
  {
    LogScope scope(&capture);
    rb_ = ring_buffer__new(mapFd, &RingRecord::OnSample, this, nullptr);
    if (rb_ == nullptr) err = errno;
  }
  if (rb_ == nullptr) {
    Failure failure{op, err != 0 ? err : EINVAL, "openRingBuffer '" + mapName_ + "'", PrivilegeHint(Privilege::MapAccess, err), ""};
    AttachLog(failure, capture);
    ThrowBpf(env_, failure);
  }
  if (!onRecords.IsFunction()) return;

  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env_, &loop) != napi_ok || loop == nullptr) {
    Close();
    ThrowUsage(env_, op, EINVAL, op + ": no libuv loop in this environment");
  }
  poll_ = new uv_poll_t;
  int rc = uv_poll_init(loop, poll_, ring_buffer__epoll_fd(rb_));
  if (rc == 0) {
    poll_->data = this;
    rc = uv_poll_start(poll_, UV_READABLE, &RingRecord::OnPoll);
  } else {
    delete poll_;
    poll_ = nullptr;
  }
  if (rc != 0) {
    Close();
    ThrowBpf(env_, Failure{op, -rc, "openRingBuffer '" + mapName_ + "': uv_poll on the epoll fd", "", ""});
  }
  onRecords_ = Napi::Persistent(onRecords.As<Napi::Function>());
  asyncContext_ = std::make_unique<Napi::AsyncContext>(env_, "blkheat.RingBuffer");
  // Closed by the environment's cleanup hook if still polling when the environment (a worker
  // thread, say) goes away: libuv refuses to close a loop with open handles.
  auto& live = Data(env_).liveRings;
  for (auto it = live.begin(); it != live.end();) it = it->expired() ? live.erase(it) : it + 1;
  live.push_back(weak_from_this());
}

int RingRecord::OnSample(void* ctx, void* data, size_t size) {
  auto* self = static_cast<RingRecord*>(ctx);
  if (self->queued_.size() >= self->maxQueued_) {
    self->dropped_++;
    return 0;  // keep draining: the kernel ring must not stay full because JS is slow
  }
  size_t offset = self->arena_.size();
  self->arena_.resize(offset + size);
  if (size > 0) std::memcpy(self->arena_.data() + offset, data, size);
  self->queued_.emplace_back(offset, size);
  return 0;
}

int RingRecord::Drain() {
  if (rb_ == nullptr) return -EBADF;
  return ring_buffer__consume(rb_);
}

Napi::Array RingRecord::TakeQueue(Napi::Env env) {
  Napi::Array out = Napi::Array::New(env, queued_.size());
  for (size_t i = 0; i < queued_.size(); i++) {
    const auto& rec = queued_[i];
    out.Set(static_cast<uint32_t>(i), Napi::Buffer<uint8_t>::Copy(env, arena_.data() + rec.first, rec.second));
  }
  queued_.clear();
  arena_.clear();
  return out;
}

Napi::Array RingRecord::Consume(Napi::Env env) {
  if (rb_ == nullptr) ThrowUsage(env, "ringBuffer.consume", EBADF, "ringBuffer.consume: ring buffer '" + mapName_ + "' is closed");
  int rc = Drain();
  if (rc < 0) {
    queued_.clear();
    arena_.clear();
    ThrowBpf(env, Failure{"ringBuffer.consume", -rc, "ring buffer '" + mapName_ + "' consume", "", ""});
  }
  return TakeQueue(env);
}

void RingRecord::OnPoll(uv_poll_t* handle, int status, int /*events*/) {
  auto* self = static_cast<RingRecord*>(handle->data);
  if (self == nullptr) return;
  // Keep the record alive even if onRecords closes the object and drops the last owner.
  std::shared_ptr<RingRecord> keep = self->shared_from_this();
  if (status < 0) {
    // The fd is unusable: stop polling rather than spin; consume() will report the error.
    uv_poll_stop(handle);
    return;
  }
  self->Deliver();
}

void RingRecord::Deliver() {
  // Called from libuv: no C++ exception may escape from here.
  int rc = Drain();
  if (rc < 0 || queued_.empty() || onRecords_.IsEmpty()) {
    queued_.clear();
    arena_.clear();
    return;
  }
  delivering_ = true;
  try {
    Napi::HandleScope scope(env_);
    Napi::Array batch = TakeQueue(env_);
    // Hold the function locally: close() inside the callback resets onRecords_.
    Napi::Function callback = onRecords_.Value();
    try {
      callback.MakeCallback(env_.Global(), {batch}, *asyncContext_);
    } catch (const Napi::Error& error) {
      // An exception from onRecords is an uncaught exception of the process, as for any event.
      napi_fatal_exception(env_, error.Value());
    }
  } catch (const Napi::Error&) {
    // The environment cannot run JavaScript any more (a worker shutting down): drop the batch.
  } catch (const std::bad_alloc&) {
    // Out of memory while copying records: drop the batch rather than abort.
  }
  queued_.clear();
  arena_.clear();
  delivering_ = false;
  if (rb_ == nullptr) {
    // close() ran inside the callback: the callback and its async context are released now.
    onRecords_.Reset();
    asyncContext_.reset();
  }
}

void RingRecord::OnClosed(uv_handle_t* handle) { delete reinterpret_cast<uv_poll_t*>(handle); }

void RingRecord::Close() {
  if (poll_ != nullptr) {
    poll_->data = nullptr;
    uv_poll_stop(poll_);
    uv_close(reinterpret_cast<uv_handle_t*>(poll_), &RingRecord::OnClosed);
    poll_ = nullptr;
  }
  if (rb_ != nullptr) {
    ring_buffer__free(rb_);
    rb_ = nullptr;
  }
  if (!delivering_) {
    onRecords_.Reset();
    asyncContext_.reset();
  }
  queued_.clear();
  arena_.clear();
}

// ---- JS wrapper ---------------------------------------------------------------------------

Napi::Function RingBufferWrap::Define(Napi::Env env) {
  return DefineClass(env, "RingBuffer",
                     {
                         InstanceMethod<&RingBufferWrap::Consume>("consume"),
                         InstanceAccessor<&RingBufferWrap::Dropped>("dropped"),
                         InstanceMethod<&RingBufferWrap::Close>("close"),
                     });
}

Napi::Object RingBufferWrap::Create(Napi::Env env, std::shared_ptr<ObjectState> state, std::shared_ptr<RingRecord> record) {
  NativeToken token;
  Napi::Object obj = Data(env).ringBufferClass.New({Napi::External<NativeToken>::New(env, &token)});
  RingBufferWrap* wrap = Unwrap(obj);
  wrap->state_ = std::move(state);
  wrap->record_ = std::move(record);
  return obj;
}

RingBufferWrap::RingBufferWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<RingBufferWrap>(info) {
  RequireNativeToken(info, "RingBuffer", "BpfObject.openRingBuffer() to create ring buffers");
}

Napi::Value RingBufferWrap::Consume(const Napi::CallbackInfo& info) {
  if (state_->closed && !record_->closed()) record_->Close();
  return record_->Consume(info.Env());
}

Napi::Value RingBufferWrap::Dropped(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), record_->dropped()); }

Napi::Value RingBufferWrap::Close(const Napi::CallbackInfo& info) {
  record_->Close();
  auto& rings = state_->rings;
  for (auto it = rings.begin(); it != rings.end(); ++it) {
    if (it->get() == record_.get()) {
      rings.erase(it);
      break;
    }
  }
  return info.Env().Undefined();
}

}  // namespace blkheat
