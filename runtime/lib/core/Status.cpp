//===- Status.cpp - Error values of the fa runtime ------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements Status formatting and the context setters.
//
//===----------------------------------------------------------------------===//

#include "fa/Status.h"

using namespace fa;

const char *fa::errorCodeName(ErrorCode code) {
  switch (code) {
  case ErrorCode::Ok:
    return "ok";
  case ErrorCode::InvalidArgument:
    return "invalid-argument";
  case ErrorCode::NotFound:
    return "not-found";
  case ErrorCode::Unavailable:
    return "unavailable";
  case ErrorCode::Unsupported:
    return "unsupported";
  case ErrorCode::CorruptCodeObject:
    return "corrupt-code-object";
  case ErrorCode::ManifestError:
    return "manifest-error";
  case ErrorCode::LoadFailed:
    return "load-failed";
  case ErrorCode::OutOfMemory:
    return "out-of-memory";
  case ErrorCode::IoError:
    return "io-error";
  case ErrorCode::LaunchFailed:
    return "launch-failed";
  case ErrorCode::RaceDetected:
    return "race-detected";
  case ErrorCode::BarrierDivergence:
    return "barrier-divergence";
  case ErrorCode::Internal:
    return "internal";
  }
  return "unknown";
}

Status Status::error(ErrorCode code, std::string message) {
  assert(code != ErrorCode::Ok && "an error needs an error code");
  Status s;
  s.code_ = code;
  s.message_ = std::move(message);
  return s;
}

#define FA_STATUS_SETTER(NAME, FIELD)                                          \
  Status &Status::NAME(std::string v) & {                                      \
    FIELD = std::move(v);                                                      \
    return *this;                                                              \
  }                                                                            \
  Status &&Status::NAME(std::string v) && {                                    \
    FIELD = std::move(v);                                                      \
    return std::move(*this);                                                   \
  }
FA_STATUS_SETTER(withFile, file_)
FA_STATUS_SETTER(withKernel, kernel_)
FA_STATUS_SETTER(withTarget, target_)
FA_STATUS_SETTER(withDevice, device_)
FA_STATUS_SETTER(withLog, log_)
#undef FA_STATUS_SETTER

Status &Status::withCall(std::string call, std::string backendError) & {
  call_ = std::move(call);
  backendError_ = std::move(backendError);
  return *this;
}

Status &&Status::withCall(std::string call, std::string backendError) && {
  call_ = std::move(call);
  backendError_ = std::move(backendError);
  return std::move(*this);
}

Status &&Status::prepend(const std::string &what) && {
  message_ = what + ": " + message_;
  return std::move(*this);
}

std::string Status::toString() const {
  if (ok())
    return "ok";
  std::string out = message_;
  std::string context;
  auto add = [&](const char *key, const std::string &value) {
    if (value.empty())
      return;
    context += context.empty() ? "" : ", ";
    context += key;
    context += value;
  };
  if (!call_.empty())
    add("call: ",
        backendError_.empty() ? call_ : call_ + " -> " + backendError_);
  add("file: ", file_);
  add("kernel: ", kernel_);
  add("target: ", target_);
  add("device: ", device_);
  if (!context.empty())
    out += " [" + context + "]";
  if (!log_.empty()) {
    out += "\n  log:";
    size_t start = 0;
    while (start <= log_.size()) {
      size_t end = log_.find('\n', start);
      if (end == std::string::npos)
        end = log_.size();
      if (end > start)
        out += "\n    " + log_.substr(start, end - start);
      start = end + 1;
    }
  }
  return out;
}
