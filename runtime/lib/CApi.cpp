//===- CApi.cpp - C API of the fa runtime ---------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements fa_runtime.h over the C++ classes. Errors are kept
// per thread for fa_last_error().
//
//===----------------------------------------------------------------------===//

#include "fa/Module.h"
#include "fa/fa_runtime.h"

#include <string>

using namespace fa;

struct fa_device {
  Device device;
};
struct fa_buffer {
  Buffer buffer;
};
struct fa_module {
  Module module;
};

static thread_local std::string lastError;

static fa_status report(const Status &s) {
  lastError = s.ok() ? std::string() : s.toString();
  return static_cast<fa_status>(s.code());
}

static fa_status nullArgument(const char *what) {
  return report(Status::error(ErrorCode::InvalidArgument,
                              std::string(what) + " is null"));
}

const char *fa_last_error(void) { return lastError.c_str(); }

fa_status fa_device_open(const char *spec, fa_device **out) {
  if (!spec || !out)
    return nullArgument(!spec ? "device name" : "output handle");
  Expected<Device> d = Device::open(spec);
  if (!d)
    return report(d.status());
  *out = new fa_device{d.take()};
  return report(Status::success());
}

void fa_device_close(fa_device *device) { delete device; }

const char *fa_device_name(const fa_device *device) {
  return device ? device->device.name().c_str() : "";
}

fa_status fa_buffer_alloc(fa_device *device, size_t bytes, fa_buffer **out) {
  if (!device || !out)
    return nullArgument(!device ? "device" : "output handle");
  Expected<Buffer> b = device->device.allocate(bytes);
  if (!b)
    return report(b.status());
  *out = new fa_buffer{b.take()};
  return report(Status::success());
}

void fa_buffer_free(fa_buffer *buffer) { delete buffer; }

size_t fa_buffer_size(const fa_buffer *buffer) {
  return buffer ? buffer->buffer.size() : 0;
}

fa_status fa_buffer_write(fa_buffer *buffer, size_t offset, const void *src,
                          size_t bytes) {
  if (!buffer || !src)
    return nullArgument(!buffer ? "buffer" : "source");
  return report(buffer->buffer.copyFromHost(src, bytes, offset));
}

fa_status fa_buffer_read(const fa_buffer *buffer, size_t offset, void *dst,
                         size_t bytes) {
  if (!buffer || !dst)
    return nullArgument(!buffer ? "buffer" : "destination");
  return report(buffer->buffer.copyToHost(dst, bytes, offset));
}

fa_status fa_module_load(fa_device *device, const char *path, fa_module **out) {
  if (!device || !path || !out)
    return nullArgument(!device ? "device" : !path ? "path" : "output handle");
  Expected<Module> m = Module::load(device->device, path);
  if (!m)
    return report(m.status());
  *out = new fa_module{m.take()};
  return report(Status::success());
}

void fa_module_unload(fa_module *module) { delete module; }

fa_status fa_module_launch(fa_module *module, const char *kernel,
                           const fa_attention_args *a) {
  if (!module || !a)
    return nullArgument(!module ? "module" : "arguments");
  Expected<Kernel> k = module->module.kernel(kernel ? kernel : "");
  if (!k)
    return report(k.status());
  AttentionArgs args;
  args.q = a->q ? &a->q->buffer : nullptr;
  args.k = a->k ? &a->k->buffer : nullptr;
  args.v = a->v ? &a->v->buffer : nullptr;
  args.o = a->o ? &a->o->buffer : nullptr;
  args.lse = a->lse ? &a->lse->buffer : nullptr;
  args.shape = {a->batch, a->heads_q, a->heads_kv, a->seq_q, a->seq_k};
  if (a->strides) {
    const int64_t *s = a->strides;
    AttentionStrides st;
    st.q = {s[0], s[1], s[2]};
    st.k = {s[3], s[4], s[5]};
    st.v = {s[6], s[7], s[8]};
    st.o = {s[9], s[10], s[11]};
    st.lseBatch = s[12];
    st.lseHead = s[13];
    args.strides = st;
  }
  LaunchOptions options;
  options.checkRaces = a->check_races != 0;
  return report(k->launch(args, options));
}
