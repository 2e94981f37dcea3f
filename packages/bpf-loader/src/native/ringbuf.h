// Ring buffer reader: libbpf's ring_buffer, woken by uv_poll on its epoll fd (no thread, no busy
// loop), plus a synchronous consume() for producers that submit with BPF_RB_NO_WAKEUP.
#pragma once

#include "common.h"
#include "state.h"

namespace blkheat {

class RingRecord : public std::enable_shared_from_this<RingRecord> {
 public:
  RingRecord(Napi::Env env, std::string mapName, size_t maxQueued);
  ~RingRecord();
  RingRecord(const RingRecord&) = delete;
  RingRecord& operator=(const RingRecord&) = delete;

  // Creates the libbpf ring buffer and, when onRecords is a function, starts polling. Throws.
  void Open(int mapFd, Napi::Value onRecords);
  // Drains what is available now and returns it (oldest first). Throws if closed.
  Napi::Array Consume(Napi::Env env);
  // Stops polling and frees everything; idempotent, safe from inside onRecords.
  void Close();

  bool closed() const { return rb_ == nullptr; }
  double dropped() const { return static_cast<double>(dropped_); }
  const std::string& mapName() const { return mapName_; }

 private:
  static int OnSample(void* ctx, void* data, size_t size);
  static void OnPoll(uv_poll_t* handle, int status, int events);
  static void OnClosed(uv_handle_t* handle);
  // ring_buffer__consume() into the queue; returns libbpf's result (negative errno on error).
  int Drain();
  Napi::Array TakeQueue(Napi::Env env);
  void Deliver();

  Napi::Env env_;
  std::string mapName_;
  size_t maxQueued_;
  uint64_t dropped_ = 0;
  bool delivering_ = false;
  ring_buffer* rb_ = nullptr;
  uv_poll_t* poll_ = nullptr;
  Napi::FunctionReference onRecords_;
  std::unique_ptr<Napi::AsyncContext> asyncContext_;
  // Records drained but not yet handed to JS: one byte arena plus (offset, length) pairs.
  std::vector<uint8_t> arena_;
  std::vector<std::pair<size_t, size_t>> queued_;
};

class RingBufferWrap : public Napi::ObjectWrap<RingBufferWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  static Napi::Object Create(Napi::Env env, std::shared_ptr<ObjectState> state, std::shared_ptr<RingRecord> record);
  explicit RingBufferWrap(const Napi::CallbackInfo& info);

 private:
  Napi::Value Consume(const Napi::CallbackInfo& info);
  Napi::Value Dropped(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);

  std::shared_ptr<ObjectState> state_;
  std::shared_ptr<RingRecord> record_;
};

}  // namespace blkheat
