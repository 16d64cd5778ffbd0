// Dynamic batch, heads and sequence lengths (D stays static).
func.func @dynamic(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %p = fa.softmax %s scale(0.125) : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xbf16>
  %o32 = fa.matmul %p, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xf32>
  %o = arith.truncf %o32 : tensor<?x?x?x64xf32> to tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
