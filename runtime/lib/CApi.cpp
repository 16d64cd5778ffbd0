//===- CApi.cpp - C API of the fa runtime ---------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements fa_runtime.h over the C++ classes. Errors are kept
// per thread for fa_last_error(). Every entry that can fail runs inside
// `guarded`, which turns an exception into an error code and message: none
// may unwind into a C caller.
//
//===----------------------------------------------------------------------===//

#include "fa/Module.h"
#include "fa/fa_runtime.h"

#include <exception>
#include <new>
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

#define FA_CHECK_CODE(name, code)                                              \
  static_assert(name == static_cast<int>(ErrorCode::code),                     \
                #name " differs from fa::ErrorCode::" #code);
FA_CHECK_CODE(FA_ERROR_INVALID_ARGUMENT, InvalidArgument)
FA_CHECK_CODE(FA_ERROR_NOT_FOUND, NotFound)
FA_CHECK_CODE(FA_ERROR_UNAVAILABLE, Unavailable)
FA_CHECK_CODE(FA_ERROR_UNSUPPORTED, Unsupported)
FA_CHECK_CODE(FA_ERROR_CORRUPT_CODE_OBJECT, CorruptCodeObject)
FA_CHECK_CODE(FA_ERROR_MANIFEST, ManifestError)
FA_CHECK_CODE(FA_ERROR_LOAD_FAILED, LoadFailed)
FA_CHECK_CODE(FA_ERROR_OUT_OF_MEMORY, OutOfMemory)
FA_CHECK_CODE(FA_ERROR_IO, IoError)
FA_CHECK_CODE(FA_ERROR_LAUNCH_FAILED, LaunchFailed)
FA_CHECK_CODE(FA_ERROR_RACE_DETECTED, RaceDetected)
FA_CHECK_CODE(FA_ERROR_BARRIER_DIVERGENCE, BarrierDivergence)
FA_CHECK_CODE(FA_ERROR_INTERNAL, Internal)
#undef FA_CHECK_CODE

static thread_local std::string lastError;
/// Set instead of lastError when storing the message itself ran out of
/// memory.
static thread_local const char *lastErrorFallback = nullptr;

static fa_status report(const Status &s) {
  lastErrorFallback = nullptr;
  try {
    lastError = s.ok() ? std::string() : s.toString();
  } catch (...) {
    lastError.clear();
    lastErrorFallback = "out of memory while recording an error";
  }
  return static_cast<fa_status>(s.code());
}

/// Runs `entry` (returning an fa_status), turning any exception it raises
/// into an error code with a message.
template <typename Entry> static fa_status guarded(Entry &&entry) noexcept {
  try {
    try {
      return entry();
    } catch (const std::bad_alloc &e) {
      return report(
          Status::error(ErrorCode::OutOfMemory,
                        std::string("out of memory (") + e.what() + ")"));
    } catch (const std::exception &e) {
      return report(Status::error(ErrorCode::Internal,
                                  std::string("internal error: ") + e.what()));
    } catch (...) {
      return report(Status::error(ErrorCode::Internal,
                                  "internal error: unknown exception"));
    }
  } catch (...) {
    // Building the message itself failed.
    lastError.clear();
    lastErrorFallback = "out of memory";
    return static_cast<fa_status>(ErrorCode::OutOfMemory);
  }
}

static fa_status nullArgument(const char *what) {
  return report(Status::error(ErrorCode::InvalidArgument,
                              std::string(what) + " is null"));
}

const char *fa_last_error(void) {
  return lastErrorFallback ? lastErrorFallback : lastError.c_str();
}

fa_status fa_device_open(const char *spec, fa_device **out) {
  return guarded([&]() -> fa_status {
    if (!spec || !out)
      return nullArgument(!spec ? "device name" : "output handle");
    Expected<Device> d = Device::open(spec);
    if (!d)
      return report(d.status());
    *out = new fa_device{d.take()};
    return report(Status::success());
  });
}

void fa_device_close(fa_device *device) { delete device; }

const char *fa_device_name(const fa_device *device) {
  return device ? device->device.name().c_str() : "";
}

fa_status fa_buffer_alloc(fa_device *device, size_t bytes, fa_buffer **out) {
  return guarded([&]() -> fa_status {
    if (!device || !out)
      return nullArgument(!device ? "device" : "output handle");
    Expected<Buffer> b = device->device.allocate(bytes);
    if (!b)
      return report(b.status());
    *out = new fa_buffer{b.take()};
    return report(Status::success());
  });
}

fa_status fa_buffer_wrap(fa_device *device, void *pointer, size_t bytes,
                         fa_buffer **out) {
  return guarded([&]() -> fa_status {
    if (!device || !out)
      return nullArgument(!device ? "device" : "output handle");
    Expected<Buffer> b = device->device.wrap(pointer, bytes);
    if (!b)
      return report(b.status());
    *out = new fa_buffer{b.take()};
    return report(Status::success());
  });
}

void fa_buffer_free(fa_buffer *buffer) { delete buffer; }

size_t fa_buffer_size(const fa_buffer *buffer) {
  return buffer ? buffer->buffer.size() : 0;
}

fa_status fa_buffer_write(fa_buffer *buffer, size_t offset, const void *src,
                          size_t bytes) {
  return guarded([&]() -> fa_status {
    if (!buffer || !src)
      return nullArgument(!buffer ? "buffer" : "source");
    return report(buffer->buffer.copyFromHost(src, bytes, offset));
  });
}

fa_status fa_buffer_read(const fa_buffer *buffer, size_t offset, void *dst,
                         size_t bytes) {
  return guarded([&]() -> fa_status {
    if (!buffer || !dst)
      return nullArgument(!buffer ? "buffer" : "destination");
    return report(buffer->buffer.copyToHost(dst, bytes, offset));
  });
}

fa_status fa_module_load(fa_device *device, const char *path, fa_module **out) {
  return guarded([&]() -> fa_status {
    if (!device || !path || !out)
      return nullArgument(!device ? "device"
                          : !path ? "path"
                                  : "output handle");
    Expected<Module> m = Module::load(device->device, path);
    if (!m)
      return report(m.status());
    *out = new fa_module{m.take()};
    return report(Status::success());
  });
}

void fa_module_unload(fa_module *module) { delete module; }

fa_status fa_module_launch(fa_module *module, const char *kernel,
                           const fa_attention_args *a) {
  return fa_module_launch_with_options(module, kernel, a, nullptr);
}

fa_status fa_module_launch_with_options(fa_module *module, const char *kernel,
                                        const fa_attention_args *a,
                                        fa_launch_options *o) {
  return fa_module_launch_paged(module, kernel, a, nullptr, o);
}

/// The C++ arguments of a launch call. Host copies of paged and varlen
/// metadata are attached when given (the entries they hold follow from B
/// and max_pages, which the runtime checks first, so the products are only
/// formed when valid).
static AttentionArgs toArgs(const fa_attention_args *a,
                            const fa_paged_kv *paged, const fa_varlen *varlen,
                            const fa_head_params *heads = nullptr) {
  AttentionArgs args;
  if (heads) {
    args.alibiSlopes =
        heads->alibi_slopes ? &heads->alibi_slopes->buffer : nullptr;
    args.sinks = heads->sinks ? &heads->sinks->buffer : nullptr;
  }
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
  if (paged) {
    PagedKvArgs pg;
    pg.blockTable = paged->block_table ? &paged->block_table->buffer : nullptr;
    pg.cacheSeqlens =
        paged->cache_seqlens ? &paged->cache_seqlens->buffer : nullptr;
    pg.pageSize = paged->page_size;
    pg.maxPages = paged->max_pages;
    pg.numPages = paged->num_pages;
    std::optional<int64_t> entries = checkedMul(a->batch, paged->max_pages);
    if (a->batch >= 1 && paged->max_pages >= 1 && entries) {
      if (paged->host_block_table)
        pg.hostBlockTable = Int32Span(paged->host_block_table, size_t(*entries));
      if (paged->host_cache_seqlens)
        pg.hostCacheSeqlens =
            Int32Span(paged->host_cache_seqlens, size_t(a->batch));
    }
    args.paged = pg;
  }
  if (varlen) {
    VarlenArgs vl;
    vl.cuSeqlensQ =
        varlen->cu_seqlens_q ? &varlen->cu_seqlens_q->buffer : nullptr;
    vl.cuSeqlensK =
        varlen->cu_seqlens_k ? &varlen->cu_seqlens_k->buffer : nullptr;
    vl.totalQ = varlen->total_q;
    vl.totalK = varlen->total_k;
    if (a->batch >= 1 && a->batch < INT64_MAX) {
      if (varlen->host_cu_seqlens_q)
        vl.hostCuSeqlensQ =
            Int32Span(varlen->host_cu_seqlens_q, size_t(a->batch + 1));
      if (varlen->host_cu_seqlens_k)
        vl.hostCuSeqlensK =
            Int32Span(varlen->host_cu_seqlens_k, size_t(a->batch + 1));
    }
    args.varlen = vl;
  }
  return args;
}

/// Every blocking launch call: dense, paged, varlen or both (a mixed
/// batch); the host copies of their metadata are required (a mixed batch
/// has no cu_seqlens_k: packAttentionArgs refuses one).
static fa_status launchAny(fa_module *module, const char *kernel,
                           const fa_attention_args *a, const fa_paged_kv *paged,
                           const fa_varlen *varlen, fa_launch_options *o,
                           const fa_head_params *heads = nullptr) {
  return guarded([&]() -> fa_status {
    if (!module || !a)
      return nullArgument(!module ? "module" : "arguments");
    if (varlen &&
        (!varlen->host_cu_seqlens_q || (!paged && !varlen->host_cu_seqlens_k)))
      return nullArgument(!varlen->host_cu_seqlens_q ? "host_cu_seqlens_q"
                                                     : "host_cu_seqlens_k");
    if (paged && (!paged->host_block_table || !paged->host_cache_seqlens))
      return nullArgument(!paged->host_block_table ? "host_block_table"
                                                   : "host_cache_seqlens");
    Expected<Kernel> k = module->module.kernel(kernel ? kernel : "");
    if (!k)
      return report(k.status());
    AttentionArgs args = toArgs(a, paged, varlen, heads);
    LaunchOptions options;
    options.checkRaces = a->check_races != 0;
    options.kvSplits = o ? o->kv_splits : 0;
    LaunchInfo launched;
    Status s = k->launch(args, options, &launched);
    if (o && s.ok())
      o->kv_splits_used = launched.kvSplits;
    return report(s);
  });
}

fa_status fa_module_enqueue(fa_module *module, const char *kernel,
                            const fa_attention_args *a,
                            const fa_paged_kv *paged, const fa_varlen *varlen,
                            fa_enqueue_options *o) {
  return fa_module_enqueue_heads(module, kernel, a, paged, varlen, nullptr, o);
}

fa_status fa_module_enqueue_heads(fa_module *module, const char *kernel,
                                  const fa_attention_args *a,
                                  const fa_paged_kv *paged,
                                  const fa_varlen *varlen,
                                  const fa_head_params *heads,
                                  fa_enqueue_options *o) {
  return guarded([&]() -> fa_status {
    if (!module || !a)
      return nullArgument(!module ? "module" : "arguments");
    Expected<Kernel> k = module->module.kernel(kernel ? kernel : "");
    if (!k)
      return report(k.status());
    AttentionArgs args = toArgs(a, paged, varlen, heads);
    LaunchOptions options;
    options.kvSplits = o ? o->kv_splits : 0;
    LaunchInfo launched;
    Status s = k->enqueue(args, o ? o->stream : nullptr,
                          o && o->workspace ? &o->workspace->buffer : nullptr,
                          options, o ? &launched : nullptr);
    if (o && s.ok())
      o->kv_splits_used = launched.kvSplits;
    return report(s);
  });
}

fa_status fa_module_workspace_size(fa_module *module, const char *kernel,
                                   const fa_attention_args *a,
                                   int64_t kv_splits, size_t *bytes) {
  return guarded([&]() -> fa_status {
    if (!module || !a || !bytes)
      return nullArgument(!module ? "module" : !a ? "arguments" : "bytes");
    Expected<Kernel> k = module->module.kernel(kernel ? kernel : "");
    if (!k)
      return report(k.status());
    Expected<uint64_t> size = k->workspaceSize(
        {a->batch, a->heads_q, a->heads_kv, a->seq_q, a->seq_k}, kv_splits);
    if (!size)
      return report(size.status());
    if (*size > SIZE_MAX)
      return report(Status::error(ErrorCode::InvalidArgument,
                                  "the workspace of " + std::to_string(*size) +
                                      " bytes does not fit in size_t"));
    *bytes = size_t(*size);
    return report(Status::success());
  });
}

fa_status fa_module_check_metadata(fa_module *module, const char *kernel,
                                   const fa_attention_args *a,
                                   const fa_paged_kv *paged,
                                   const fa_varlen *varlen) {
  return guarded([&]() -> fa_status {
    if (!module || !a)
      return nullArgument(!module ? "module" : "arguments");
    Expected<Kernel> k = module->module.kernel(kernel ? kernel : "");
    if (!k)
      return report(k.status());
    return report(k->checkMetadata(toArgs(a, paged, varlen)));
  });
}

fa_status fa_module_launch_paged(fa_module *module, const char *kernel,
                                 const fa_attention_args *a,
                                 const fa_paged_kv *paged,
                                 fa_launch_options *o) {
  return launchAny(module, kernel, a, paged, nullptr, o);
}

fa_status fa_module_launch_varlen(fa_module *module, const char *kernel,
                                  const fa_attention_args *a,
                                  const fa_varlen *varlen,
                                  fa_launch_options *o) {
  return launchAny(module, kernel, a, nullptr, varlen, o);
}

fa_status fa_module_launch_heads(fa_module *module, const char *kernel,
                                 const fa_attention_args *a,
                                 const fa_paged_kv *paged,
                                 const fa_varlen *varlen,
                                 const fa_head_params *heads,
                                 fa_launch_options *o) {
  return launchAny(module, kernel, a, paged, varlen, o, heads);
}

fa_status fa_module_launch_mixed(fa_module *module, const char *kernel,
                                 const fa_attention_args *a,
                                 const fa_paged_kv *paged,
                                 const fa_varlen *varlen,
                                 fa_launch_options *o) {
  return guarded([&]() -> fa_status {
    if (!paged || !varlen)
      return nullArgument(!paged ? "paged" : "varlen");
    return launchAny(module, kernel, a, paged, varlen, o);
  });
}
