//===- main.cpp - Embedding the fa runtime in an application --------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Loads the code object named on the command line on the host device, runs
// a small attention by hand (buffers, launch, copy back) and checks it
// against the library's fp64 reference. Exit status 0 if it matches, 1 if
// not, 2 on errors.
//
//===----------------------------------------------------------------------===//

#include "fa/Runtime.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: embed CODE_OBJECT\n");
    return 2;
  }
  auto die = [](const fa::Status &s) {
    std::fprintf(stderr, "embed: error: %s\n", s.toString().c_str());
    return 2;
  };
  fa::Expected<fa::Device> device = fa::Device::open("host");
  if (!device)
    return die(device.status());
  fa::Expected<fa::Module> module = fa::Module::load(*device, argv[1]);
  if (!module)
    return die(module.status());
  fa::Expected<fa::Kernel> kernel = module->kernel();
  if (!kernel)
    return die(kernel.status());
  const fa::KernelInfo &info = kernel->info();

  // B=1, Hq=2, Hkv=1, Lq=24, Lk=40: GQA and Lq != Lk in one small call.
  fa::AttentionProblem problem;
  problem.shape = {1, 2, 1, 24, 40};
  problem.headDim = info.headDim;
  problem.causal = info.causal;
  problem.scale = info.scale;
  fa::AttentionData in =
      fa::generateInputs(problem, info.dtype, fa::Distribution::Normal, 42);

  auto upload =
      [&](const std::vector<float> &values) -> fa::Expected<fa::Buffer> {
    std::vector<uint8_t> bytes = fa::encodeElements(info.dtype, values);
    fa::Expected<fa::Buffer> b = device->allocate(bytes.size());
    if (b)
      if (fa::Status s = b->copyFromHost(bytes.data(), bytes.size()); !s.ok())
        return s;
    return b;
  };
  fa::Expected<fa::Buffer> q = upload(in.q), k = upload(in.k), v = upload(in.v);
  fa::Expected<fa::Buffer> o =
      device->allocate(problem.qElements() * fa::dtypeBytes(info.dtype));
  fa::Expected<fa::Buffer> lse = device->allocate(problem.lseElements() * 4);
  for (const fa::Status *s :
       {&q.status(), &k.status(), &v.status(), &o.status(), &lse.status()})
    if (!s->ok())
      return die(*s);

  fa::AttentionArgs args;
  args.q = &*q;
  args.k = &*k;
  args.v = &*v;
  args.o = &*o;
  args.lse = info.hasLse ? &*lse : nullptr;
  args.shape = problem.shape;
  if (fa::Status s = kernel->launch(args); !s.ok())
    return die(s);

  std::vector<uint8_t> bytes(o->size());
  if (fa::Status s = o->copyToHost(bytes.data(), bytes.size()); !s.ok())
    return die(s);
  std::vector<float> out =
      fa::decodeElements(info.dtype, bytes.data(), problem.qElements());
  fa::AttentionResult<double> ref = fa::referenceAttentionF64(problem, in);
  fa::AttentionResult<float> naive =
      fa::naiveAttention(problem, info.dtype, in);
  fa::OutputMetrics ours = fa::compareOutputs(out, ref.o);
  fa::OutputMetrics base = fa::compareOutputs(naive.o, ref.o);
  fa::Verdict verdict = fa::judge(
      ours, base,
      fa::defaultCriteria(info.dtype, fa::Distribution::Normal, 0, 0));
  for (const fa::Check &c : verdict.checks)
    std::printf("%s  %s\n", c.pass ? "PASS" : "FAIL", c.text.c_str());
  std::printf("embed: kernel '%s' %s\n", info.name.c_str(),
              verdict.pass ? "matches the reference" : "DOES NOT MATCH");
  return verdict.pass ? 0 : 1;
}
