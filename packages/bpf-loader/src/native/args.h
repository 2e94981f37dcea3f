// Argument checks shared by every binding method: each one throws a BpfError (EINVAL) that names
// the call and the argument.
#pragma once

#include <cerrno>

#include "errors.h"

namespace blkheat {

struct Bytes {
  const uint8_t* data;
  size_t length;
};

inline std::string ArgString(const Napi::CallbackInfo& info, size_t index, const std::string& op, const char* what) {
  if (info.Length() <= index || !info[index].IsString())
    ThrowUsage(info.Env(), op, EINVAL, op + ": " + what + " must be a string");
  return info[index].As<Napi::String>().Utf8Value();
}

// A Buffer or any Uint8Array.
inline Bytes ArgBytes(const Napi::CallbackInfo& info, size_t index, const std::string& op, const char* what) {
  if (info.Length() > index && info[index].IsTypedArray()) {
    Napi::TypedArray array = info[index].As<Napi::TypedArray>();
    if (array.TypedArrayType() == napi_uint8_array) {
      Napi::Uint8Array bytes = array.As<Napi::Uint8Array>();
      return Bytes{bytes.Data(), bytes.ByteLength()};
    }
  }
  ThrowUsage(info.Env(), op, EINVAL, op + ": " + what + " must be a Buffer");
}

inline void CheckLength(Napi::Env env, const std::string& op, const char* what, size_t got, size_t want, const char* wantName) {
  if (got != want)
    ThrowUsage(env, op, EINVAL,
               op + ": " + what + " is " + std::to_string(got) + " bytes, expected " + std::to_string(want) + " (" + wantName + ")");
}

inline bool ArgBool(const Napi::CallbackInfo& info, size_t index, const std::string& op, const char* what) {
  if (info.Length() <= index || !info[index].IsBoolean())
    ThrowUsage(info.Env(), op, EINVAL, op + ": " + what + " must be a boolean");
  return info[index].As<Napi::Boolean>().Value();
}

// An integer in [min, max] (doubles are exact up to 2^53).
inline double ArgInteger(const Napi::Value& value, Napi::Env env, const std::string& op, const char* what, double min, double max) {
  if (!value.IsNumber()) ThrowUsage(env, op, EINVAL, op + ": " + what + " must be a number");
  double v = value.As<Napi::Number>().DoubleValue();
  if (!(v >= min && v <= max) || v != static_cast<double>(static_cast<int64_t>(v)))
    ThrowUsage(env, op, EINVAL,
               op + ": " + what + " must be an integer in [" + std::to_string(static_cast<int64_t>(min)) + ", " +
                   std::to_string(static_cast<int64_t>(max)) + "]");
  return v;
}

// An optional plain object (undefined -> empty object).
inline Napi::Object ArgOptions(const Napi::CallbackInfo& info, size_t index, const std::string& op) {
  if (info.Length() <= index || info[index].IsUndefined()) return Napi::Object::New(info.Env());
  if (!info[index].IsObject() || info[index].IsArray() || info[index].IsFunction())
    ThrowUsage(info.Env(), op, EINVAL, op + ": options must be an object");
  return info[index].As<Napi::Object>();
}

}  // namespace blkheat
