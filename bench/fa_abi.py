#!/usr/bin/env python3
"""The fa kernel ABI (runtime/include/fa/KernelAbi.h) for bench/decode.py
and bench/varlen.py, in plain Python (no torch): word indices, the word
lists of ABI versions 1-4, strides of the paged and packed layouts, block
tables, cu_seqlens, drawn lengths, FLOPs of the visible pairs, the runtime's
32-bit offset checks, and an interpreter of the words (which element of
which buffer a kernel reads for a sequence, head and row, as KernelAbi.h
defines it) for the scripts' --self-test modes.

`python3 bench/fa_abi.py` runs this module's own self-test (plain Python).
"""
import array
import ctypes
import math
import os
import random
import re

INT32_MAX = 2 ** 31 - 1

# Word indices (KernelAbi.h's FA_ABI_* enums; self_test() checks them
# against the header).
Q, K, V, O, LSE = 0, 5, 10, 15, 20
SIZES = 25           # B, Hq, Hkv, Lq, Lk
STRIDES = 30         # q_b q_h q_l k_b k_h k_l v_b v_h v_l o_b o_h o_l lse_b lse_h
WS_O, WS_LSE, SPLITS = 44, 49, 54
BLOCK_TABLE, CACHE_SEQLENS, PAGE_SIZE, BLOCK_TABLE_STRIDE = 55, 60, 65, 66
CU_SEQLENS_Q, CU_SEQLENS_K = 67, 72
NUM_WORDS = {1: 44, 2: 55, 3: 67, 4: 77}
BUFFER_WORD = {"Q": Q, "K": K, "V": V, "O": O, "LSE": LSE}
STRIDE_WORD = {"Q": STRIDES, "K": STRIDES + 3, "V": STRIDES + 6,
               "O": STRIDES + 9, "LSE": STRIDES + 12}

NULL = [0, 0, 0, 0, 1]  # a null rank-1 descriptor


def desc(ptr, numel, index_bits=32):
    """A rank-1 memref descriptor: allocated and aligned pointer, offset 0,
    size in elements (at most INT32_MAX for a 32-bit-index kernel, as the
    runtime passes it), stride 1."""
    size = min(numel, INT32_MAX) if index_bits == 32 else numel
    return [ptr, ptr, 0, size, 1]


def pack(abi, q, k, v, o, lse, sizes, strides, split_kv=False, ws_o=None,
         ws_lse=None, splits=1, block_table=None, cache_seqlens=None,
         page_size=0, table_stride=0, cu_q=None, cu_k=None):
    """The word list of a kernel of ABI version `abi` (1 dense, 2 split-KV,
    3 paged, 4 varlen). q..lse and the metadata are 5-word descriptors
    (desc() or NULL), sizes the 5 sizes, strides the 14 strides. A kernel
    that is not split-KV takes null workspace descriptors and S = 1 (ABI
    3 and 4); a varlen kernel null table and lengths and 0, 0."""
    if abi not in NUM_WORDS:
        raise ValueError(f"unknown ABI version {abi}")
    if len(sizes) != 5 or len(strides) != 14:
        raise ValueError("5 sizes and 14 strides")
    words = list(q) + list(k) + list(v) + list(o) + list(lse or NULL)
    words += [int(x) for x in sizes] + [int(x) for x in strides]
    if abi >= 2:
        if abi == 2 and not split_kv:
            raise ValueError("ABI 2 is split-KV")
        if split_kv:
            if ws_o is None or ws_lse is None or splits < 1:
                raise ValueError("split-KV needs the workspace and S >= 1")
            words += list(ws_o) + list(ws_lse) + [int(splits)]
        else:
            words += NULL + NULL + [1]
    if abi == 3:
        if block_table is None or cache_seqlens is None or page_size < 1 \
                or table_stride < 1:
            raise ValueError("a paged kernel needs the table, the lengths, "
                             "page size >= 1 and the table's stride >= 1")
        words += list(block_table) + list(cache_seqlens)
        words += [int(page_size), int(table_stride)]
    elif abi == 4:
        words += NULL + NULL + [0, 0]
        if cu_q is None or cu_k is None:
            raise ValueError("a varlen kernel needs cu_seqlens_q and _k")
        words += list(cu_q) + list(cu_k)
    assert len(words) == NUM_WORDS[abi], (abi, len(words))
    for i, w in enumerate(words):
        if not 0 <= w < 2 ** 64:
            raise ValueError(f"word {i} = {w} is not a 64-bit word")
    return words


# ---- layouts --------------------------------------------------------------

def contiguous_bhld_strides(b, h, l, d):
    """(batch, head, row) of a contiguous [B, H, L, D] tensor."""
    return [h * l * d, l * d, d]


def paged_cache_strides(page_size, hkv, d):
    """(page, head, row within a page) of a contiguous [num_pages,
    page_size, Hkv, D] cache (fa::pagedCacheStrides)."""
    return [page_size * hkv * d, d, hkv * d]


def dense_strides(b, hq, hkv, lq, lk, d):
    """The 14 strides of contiguous BHLD Q, K, V, O and LSE [B, Hq, Lq]."""
    return (contiguous_bhld_strides(b, hq, lq, d)
            + contiguous_bhld_strides(b, hkv, lk, d) * 2
            + contiguous_bhld_strides(b, hq, lq, d) + [hq * lq, lq])


def paged_strides(b, hq, hkv, lq, page_size, d):
    """Q, O, LSE contiguous BHLD; K and V contiguous paged caches."""
    kv = paged_cache_strides(page_size, hkv, d)
    return (contiguous_bhld_strides(b, hq, lq, d) + kv + kv
            + contiguous_bhld_strides(b, hq, lq, d) + [hq * lq, lq])


def varlen_strides(hq, hkv, total_q, d):
    """Packed Q, O [total_q, Hq, D], K, V [total_k, Hkv, D], LSE
    [Hq, total_q]: batch strides 0, (head, row) = (D, H*D); LSE head
    total_q."""
    return ([0, d, hq * d] + [0, d, hkv * d] * 2 + [0, d, hq * d]
            + [0, total_q])


# ---- metadata -------------------------------------------------------------

def page_permutation(num_pages, seed):
    """A seeded permutation of the cache's pages: logical page i (page
    i mod max_pages of sequence i // max_pages) is physical page perm[i]."""
    perm = list(range(num_pages))
    random.Random(seed).shuffle(perm)
    return perm


def block_table_rows(batch, max_pages, perm):
    """table[b][j] = perm[b * max_pages + j]: every sequence of the full
    capacity, its pages spread over the cache."""
    return [perm[b * max_pages:(b + 1) * max_pages] for b in range(batch)]


def cu_seqlens(lengths):
    """Prefix sums [0, l0, l0 + l1, ...] (B + 1 entries)."""
    out = [0]
    for n in lengths:
        out.append(out[-1] + int(n))
    return out


def mixed_lengths(total, mean, seed, lo=0.25, hi=1.75):
    """Lengths that add up to `total`, drawn uniformly from [lo*mean,
    hi*mean] with a seeded generator; the last one is what is left (it can
    be short: a realistic tail)."""
    rng = random.Random(seed)
    a, b = max(1, int(lo * mean)), max(1, int(hi * mean))
    out, left = [], total
    while left > b:
        n = rng.randint(a, b)
        out.append(n)
        left -= n
    if left > 0:
        out.append(left)
    rng.shuffle(out)
    return out


def visible_pairs(lq, lk, causal):
    """Query-key pairs attention visits: lq * lk, or with the bottom-right
    causal mask row i sees min(lk, max(0, lk - lq + i + 1)) keys."""
    if not causal:
        return lq * lk
    total = 0
    # Rows with lk - lq + i + 1 in [1, lk]: an arithmetic run.
    first = max(0, lq - lk)           # first row that sees a key
    for_rows = lq - first
    if for_rows <= 0:
        return 0
    lo = lk - lq + first + 1          # keys of row `first` (>= 1)
    hi = lk                           # keys of the last row
    total = (lo + hi) * for_rows // 2
    return total


def attention_flops(lens_q, lens_k, hq, d, causal):
    """4 * D * Hq per visible pair (Q·Kᵀ and P·V), summed over sequences."""
    return 4 * d * hq * sum(visible_pairs(a, b, causal)
                            for a, b in zip(lens_q, lens_k))


# ---- the runtime's 32-bit offset checks ----------------------------------

def rounded(rows, block):
    return math.ceil(rows / block) * block


def dense_offsets(b, hq, hkv, lq, lk, d, block):
    """Largest element offsets of contiguous BHLD Q/K/O (runtime check)."""
    q = (b - 1) * hq * lq * d + (hq - 1) * lq * d + (rounded(lq, block)
                                                     - 1) * d + d
    k = (b - 1) * hkv * lk * d + (hkv - 1) * lk * d + (rounded(lk, block)
                                                       - 1) * d + d
    return {"Q": q, "K": k, "O": q}


def paged_offsets(b, hq, hkv, lq, num_pages, page_size, max_pages, d,
                  block):
    """Largest element offsets of a paged launch (runtime check: a cache's
    rows are addressed within their page)."""
    pq = contiguous_bhld_strides(b, hq, lq, d)
    q = (b - 1) * pq[0] + (hq - 1) * pq[1] + (rounded(lq, block) - 1) \
        * pq[2] + d
    kv = paged_cache_strides(page_size, hkv, d)
    k = (num_pages - 1) * kv[0] + (hkv - 1) * kv[1] + (page_size - 1) \
        * kv[2] + d
    return {"Q": q, "K": k, "V": k, "block_table": b * max_pages, "O": q,
            "LSE": (b - 1) * hq * lq + (hq - 1) * lq + rounded(lq, block)}


def varlen_offsets(hq, hkv, total_q, total_k, max_q, max_k, d, block):
    """Largest element offsets of a packed launch, with each sequence's last
    block rounded up (a bound: the last sequence's rows past total)."""
    q = (total_q - 1 + rounded(max_q, block)) * hq * d + d
    k = (total_k - 1 + rounded(max_k, block)) * hkv * d + d
    return {"Q": q, "K": k, "V": k, "O": q,
            "LSE": (hq - 1) * total_q + total_q + rounded(max_q, block)}


def refusal_32(offsets):
    """The runtime's refusal of a 32-bit-index kernel, or ''."""
    for name, off in offsets.items():
        if off > INT32_MAX:
            return f"32-bit offsets into {name} reach {off}"
    return ""


# ---- an interpreter of the words (self-tests) ------------------------------

def _read(ctype, addr):
    return ctype.from_address(addr).value


def read_i32(addr):
    return _read(ctypes.c_int32, addr)


class AbiView:
    """Reads a word list as KernelAbi.h defines it: element offsets of
    (operand, sequence b, head h, row r) and the elements at them, from the
    host addresses in the words (plain host memory in the self-tests)."""

    ELEM = {"Q": 2, "K": 2, "V": 2, "O": 2, "LSE": 4}

    def __init__(self, words, abi):
        assert len(words) == NUM_WORDS[abi], (abi, len(words))
        self.w = list(words)
        self.abi = abi
        self.sizes = dict(zip("B Hq Hkv Lq Lk".split(),
                              self.w[SIZES:SIZES + 5]))

    def ptr(self, operand):
        base = BUFFER_WORD[operand]
        assert self.w[base] == self.w[base + 1] and self.w[base + 2] == 0 \
            and self.w[base + 4] == 1, f"{operand}: not a plain descriptor"
        return self.w[base + 1]

    def cu(self, which, b):
        base = CU_SEQLENS_Q if which == "q" else CU_SEQLENS_K
        assert 0 <= b < self.w[base + 3] + 0, "cu_seqlens out of range"
        return read_i32(self.w[base + 1] + 4 * b)

    def seqlen_k(self, b):
        if self.abi == 3:
            assert b < self.w[CACHE_SEQLENS + 3]
            return read_i32(self.w[CACHE_SEQLENS + 1] + 4 * b)
        if self.abi == 4:
            return self.cu("k", b + 1) - self.cu("k", b)
        return self.sizes["Lk"]

    def seqlen_q(self, b):
        if self.abi == 4:
            return self.cu("q", b + 1) - self.cu("q", b)
        return self.sizes["Lq"]

    def offset(self, operand, b, h, r, d=0):
        """Element offset of operand[b, h, r, d] (LSE: [b, h, r])."""
        s = STRIDE_WORD[operand]
        if operand == "LSE":
            sb, sh = self.w[s], self.w[s + 1]
            sr = 1
        else:
            sb, sh, sr = self.w[s:s + 3]
        if self.abi == 3 and operand in ("K", "V"):
            ps = self.w[PAGE_SIZE]
            stride = self.w[BLOCK_TABLE_STRIDE]
            entry = b * stride + r // ps
            assert entry < self.w[BLOCK_TABLE + 3], "table entry out of range"
            page = read_i32(self.w[BLOCK_TABLE + 1] + 4 * entry)
            off = page * sb + h * sh + (r % ps) * sr
        elif self.abi == 4:
            assert sb == 0, f"{operand}: varlen batch stride is {sb}"
            start = self.cu("k" if operand in ("K", "V") else "q", b)
            off = h * sh + (start + r) * sr
        else:
            off = b * sb + h * sh + r * sr
        off += d
        size = self.w[BUFFER_WORD[operand] + 3]
        assert 0 <= off < size, (f"{operand}[{b},{h},{r},{d}]: offset {off} "
                                 f"outside the descriptor's {size} elements")
        return off

    def element_bits(self, operand, b, h, r, d=0):
        """The element's raw bits (uint16 for f16, uint32 for LSE's f32)."""
        t = ctypes.c_uint16 if self.ELEM[operand] == 2 else ctypes.c_uint32
        return _read(t, self.ptr(operand)
                     + self.ELEM[operand] * self.offset(operand, b, h, r, d))


def header_constants(path=None):
    """KernelAbi.h's FA_ABI_* enum values."""
    path = path or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "runtime", "include", "fa",
                                "KernelAbi.h")
    with open(path) as f:
        text = f.read()
    values = {}
    for m in re.finditer(r"\b(FA_ABI_[A-Z0-9_]+)\s*=\s*(\d+)\s*[,}]", text):
        values[m.group(1)] = int(m.group(2))
    return values


def check_header(path=None):
    """This module's word indices against KernelAbi.h."""
    h = header_constants(path)
    want = {"FA_ABI_Q": Q, "FA_ABI_K": K, "FA_ABI_V": V, "FA_ABI_O": O,
            "FA_ABI_LSE": LSE, "FA_ABI_SIZES": SIZES,
            "FA_ABI_STRIDES": STRIDES, "FA_ABI_WS_O": WS_O,
            "FA_ABI_WS_LSE": WS_LSE, "FA_ABI_SPLITS": SPLITS,
            "FA_ABI_BLOCK_TABLE": BLOCK_TABLE,
            "FA_ABI_CACHE_SEQLENS": CACHE_SEQLENS,
            "FA_ABI_PAGE_SIZE": PAGE_SIZE,
            "FA_ABI_BLOCK_TABLE_STRIDE": BLOCK_TABLE_STRIDE,
            "FA_ABI_CU_SEQLENS_Q": CU_SEQLENS_Q,
            "FA_ABI_CU_SEQLENS_K": CU_SEQLENS_K,
            "FA_ABI_V1_NUM_WORDS": NUM_WORDS[1],
            "FA_ABI_V2_NUM_WORDS": NUM_WORDS[2],
            "FA_ABI_V3_NUM_WORDS": NUM_WORDS[3],
            "FA_ABI_V4_NUM_WORDS": NUM_WORDS[4]}
    bad = [f"{k}: header {h.get(k)}, fa_abi.py {v}" for k, v in want.items()
           if h.get(k) != v]
    if bad:
        raise AssertionError("KernelAbi.h disagrees: " + "; ".join(bad))
    return len(want)


# ---- plain-Python self-test -----------------------------------------------

def _bits(*key):
    """A distinct-enough 16-bit pattern for an element."""
    x = 0x9E3779B1
    for v in key:
        x = (x * 1000003 ^ (v + 0x5bd1e995)) & 0xFFFFFFFF
    return x & 0xFFFF


def self_test():
    """Word lists of ABI 3 and 4 built and read back over host arrays."""
    n = check_header()
    print(f"fa_abi: {n} word indices agree with KernelAbi.h")
    # visible pairs against a loop.
    for lq, lk in [(1, 1), (5, 5), (3, 7), (7, 3), (1, 100), (100, 1),
                   (17, 17), (0, 4)]:
        for c in (False, True):
            want = sum(min(lk, max(0, lk - lq + i + 1)) if c else lk
                       for i in range(lq))
            assert visible_pairs(lq, lk, c) == want, (lq, lk, c)
    assert attention_flops([512] * 2, [512] * 2, 16, 128, False) == \
        4 * 128 * 16 * 512 * 512 * 2
    # mixed lengths add up.
    for total, mean in [(16384, 512), (65536, 2048), (16384, 8192),
                        (1000, 7)]:
        ls = mixed_lengths(total, mean, seed=total + mean)
        assert sum(ls) == total and min(ls) >= 1 and \
            max(ls) <= int(1.75 * mean), (total, mean, ls[:5])
        assert ls == mixed_lengths(total, mean, seed=total + mean)
    assert cu_seqlens([3, 0, 5]) == [0, 3, 3, 8]

    # Paged: B sequences of the full length over a shuffled cache.
    b, hq, hkv, d, ps, lk = 3, 4, 2, 8, 4, 10
    mp = math.ceil(lk / ps)
    pages = b * mp
    perm = page_permutation(pages, seed=7)
    assert sorted(perm) == list(range(pages)) and perm != sorted(perm)
    table = block_table_rows(b, mp, perm)
    cache = {name: array.array("H", [0] * (pages * ps * hkv * d))
             for name in "KV"}
    st = paged_cache_strides(ps, hkv, d)
    for name, buf in cache.items():
        for bb in range(b):
            for h in range(hkv):
                for r in range(lk):
                    for dd in range(d):
                        page = table[bb][r // ps]
                        buf[page * st[0] + h * st[1] + (r % ps) * st[2]
                            + dd] = _bits(ord(name), bb, h, r, dd)
    qb = array.array("H", [_bits(1, i) for i in range(b * hq * d)])
    ob = array.array("H", [0] * (b * hq * d))
    lse = array.array("f", [0.0] * (b * hq))
    tab = array.array("i", [x for row in table for x in row])
    lens = array.array("i", [lk] * b)

    def dsc(a):
        return desc(a.buffer_info()[0], len(a))
    words = pack(3, dsc(qb), dsc(cache["K"]), dsc(cache["V"]), dsc(ob),
                 dsc(lse), [b, hq, hkv, 1, lk],
                 paged_strides(b, hq, hkv, 1, ps, d), split_kv=True,
                 ws_o=dsc(ob), ws_lse=dsc(lse), splits=2,
                 block_table=dsc(tab), cache_seqlens=dsc(lens),
                 page_size=ps, table_stride=mp)
    view = AbiView(words, 3)
    for bb in range(b):
        assert view.seqlen_k(bb) == lk
        for h in range(hkv):
            for r in range(lk):
                for dd in range(d):
                    for name in "KV":
                        assert view.element_bits(name, bb, h, r, dd) == \
                            _bits(ord(name), bb, h, r, dd)
    # Varlen: packed sequences.
    lens_q = [5, 1, 9, 0, 3]
    lens_k = [5, 2, 9, 4, 3]
    cq, ck = cu_seqlens(lens_q), cu_seqlens(lens_k)
    tq, tk = cq[-1], ck[-1]
    packed = {"Q": array.array("H", [0] * (tq * hq * d)),
              "O": array.array("H", [0] * (tq * hq * d)),
              "K": array.array("H", [0] * (tk * hkv * d)),
              "V": array.array("H", [0] * (tk * hkv * d))}
    for name, buf in packed.items():
        heads = hkv if name in "KV" else hq
        cu, ln = (ck, lens_k) if name in "KV" else (cq, lens_q)
        for bb in range(len(ln)):
            for r in range(ln[bb]):
                for h in range(heads):
                    for dd in range(d):
                        buf[((cu[bb] + r) * heads + h) * d + dd] = \
                            _bits(ord(name), bb, h, r, dd)
    lse = array.array("I", [0] * (hq * tq))
    for bb in range(len(lens_q)):
        for h in range(hq):
            for r in range(lens_q[bb]):
                lse[h * tq + cq[bb] + r] = _bits(9, bb, h, r)
    cqa, cka = array.array("i", cq), array.array("i", ck)
    words = pack(4, dsc(packed["Q"]), dsc(packed["K"]), dsc(packed["V"]),
                 dsc(packed["O"]), dsc(lse),
                 [len(lens_q), hq, hkv, max(lens_q), max(lens_k)],
                 varlen_strides(hq, hkv, tq, d), cu_q=dsc(cqa), cu_k=dsc(cka))
    assert words[SPLITS] == 1 and words[PAGE_SIZE] == 0 and \
        words[BLOCK_TABLE:BLOCK_TABLE + 5] == NULL
    view = AbiView(words, 4)
    for bb in range(len(lens_q)):
        assert view.seqlen_q(bb) == lens_q[bb]
        assert view.seqlen_k(bb) == lens_k[bb]
        for name in "QKVO":
            heads = hkv if name in "KV" else hq
            for h in range(heads):
                for r in range(lens_k[bb] if name in "KV" else lens_q[bb]):
                    for dd in range(d):
                        assert view.element_bits(name, bb, h, r, dd) == \
                            _bits(ord(name), bb, h, r, dd)
        for h in range(hq):
            for r in range(lens_q[bb]):
                assert view.element_bits("LSE", bb, h, r) == \
                    _bits(9, bb, h, r)
    # Refusals.
    assert refusal_32(paged_offsets(128, 32, 8, 1, 128 * 2048, 16, 2048,
                                    128, 32))
    assert not refusal_32(paged_offsets(8, 32, 8, 1, 8 * 8192, 16, 8192,
                                        128, 32))
    assert not refusal_32(varlen_offsets(32, 8, 65536, 65536, 14336, 14336,
                                         128, 128))
    print("fa_abi: self-test passed (ABI 3 paged and ABI 4 varlen words "
          "read back over host memory)")
    return 0


if __name__ == "__main__":
    raise SystemExit(self_test())
