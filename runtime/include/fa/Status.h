//===- Status.h - Error values of the fa runtime ----------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Every fallible runtime call returns a `Status` or an `Expected<T>`. An error
// carries a code, a lowercase message with the actual numbers, and optional
// context: the failing backend call and the backend's error name, the file,
// kernel, target and device involved, and the loader's log. The runtime never
// prints; callers decide what to show (`Status::toString`).
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_STATUS_H
#define FA_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace fa {

/// Broad classes of failure, so callers can react without parsing messages.
enum class ErrorCode {
  Ok = 0,
  InvalidArgument,   ///< a caller-supplied value is out of range
  NotFound,          ///< a file, kernel or symbol does not exist
  Unavailable,       ///< a device or vendor runtime is not present
  Unsupported,       ///< valid request this device or runtime cannot serve
  CorruptCodeObject, ///< code object bytes are damaged or of the wrong kind
  ManifestError,     ///< manifest missing fields, malformed or inconsistent
  LoadFailed,        ///< the loader (dlopen, hipModuleLoad...) refused it
  OutOfMemory,       ///< an allocation failed
  IoError,           ///< reading or writing a file failed
  LaunchFailed,      ///< the kernel could not run to completion
  RaceDetected,      ///< the LDS race checker found conflicting accesses
  BarrierDivergence, ///< threads of a workgroup can never meet again
  Internal,          ///< a bug in the runtime
};

/// Returns the spelling of `code`, e.g. "manifest-error".
const char *errorCodeName(ErrorCode code);

/// Success, or an error with its context. Cheap to move; `ok()` is the test.
class [[nodiscard]] Status {
public:
  /// Constructs success.
  Status() = default;

  static Status success() { return Status(); }
  static Status error(ErrorCode code, std::string message);

  bool ok() const { return code_ == ErrorCode::Ok; }
  ErrorCode code() const { return code_; }
  const std::string &message() const { return message_; }

  /// The backend call that failed ("dlopen", "hipModuleLoadData") and the
  /// backend's name for the error ("hipErrorNoBinaryForGpu").
  const std::string &call() const { return call_; }
  const std::string &backendError() const { return backendError_; }
  const std::string &file() const { return file_; }
  const std::string &kernel() const { return kernel_; }
  const std::string &target() const { return target_; }
  const std::string &device() const { return device_; }
  /// Loader or JIT log, or the list of individual reports (race checker).
  const std::string &log() const { return log_; }

  // Context setters; each returns the status so they chain on temporaries:
  //   return Status::error(...).withCall("dlopen").withFile(path);
  Status &withCall(std::string call, std::string backendError = {}) &;
  Status &&withCall(std::string call, std::string backendError = {}) &&;
  Status &withFile(std::string file) &;
  Status &&withFile(std::string file) &&;
  Status &withKernel(std::string kernel) &;
  Status &&withKernel(std::string kernel) &&;
  Status &withTarget(std::string target) &;
  Status &&withTarget(std::string target) &&;
  Status &withDevice(std::string device) &;
  Status &&withDevice(std::string device) &&;
  Status &withLog(std::string log) &;
  Status &&withLog(std::string log) &&;

  /// Prefixes the message with `what: `; for adding the caller's view.
  Status &&prepend(const std::string &what) &&;

  /// One-line message followed by its context and, on further lines, the
  /// indented log. "ok" for success.
  std::string toString() const;

private:
  ErrorCode code_ = ErrorCode::Ok;
  std::string message_;
  std::string call_;
  std::string backendError_;
  std::string file_;
  std::string kernel_;
  std::string target_;
  std::string device_;
  std::string log_;
};

/// A `T` or the error that prevented producing it.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  Expected(Status status) : status_(std::move(status)) {
    assert(!status_.ok() && "Expected constructed from a success status");
  }

  explicit operator bool() const { return value_.has_value(); }
  bool ok() const { return value_.has_value(); }

  T &operator*() & { return *value_; }
  const T &operator*() const & { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

  /// Moves the value out; only valid when ok().
  T take() { return std::move(*value_); }

  /// The error (success if a value is held).
  const Status &status() const { return status_; }
  Status takeStatus() { return std::move(status_); }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace fa

#endif // FA_STATUS_H
