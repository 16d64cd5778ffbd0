//===- FuzzManifest.cpp - Fuzz target: the runtime's manifest parser ------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The input is a manifest (`<code object>.json`, docs/manifest.md) as anyone
// could edit it. fa::parseManifest must accept it or return an error, never
// crash. A manifest it accepts must survive the runtime's own writer:
// formatManifest's text parses again and formats to the same text.
//
//===----------------------------------------------------------------------===//

#include "fa/Manifest.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  fa::Expected<fa::Manifest> manifest = fa::parseManifest(text);
  if (!manifest) {
    // The message is built for every error; it must be printable.
    (void)manifest.status().toString();
    return 0;
  }
  std::string written = fa::formatManifest(*manifest);
  fa::Expected<fa::Manifest> again = fa::parseManifest(written);
  if (!again) {
    std::fprintf(stderr,
                 "fuzz-manifest: formatManifest wrote a manifest that "
                 "parseManifest refuses: %s\n--- written ---\n%s\n",
                 again.status().toString().c_str(), written.c_str());
    std::abort();
  }
  std::string rewritten = fa::formatManifest(*again);
  if (rewritten != written) {
    std::fprintf(stderr,
                 "fuzz-manifest: format(parse(format(m))) != format(m)\n"
                 "--- first ---\n%s\n--- second ---\n%s\n",
                 written.c_str(), rewritten.c_str());
    std::abort();
  }
  return 0;
}
