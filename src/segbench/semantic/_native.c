/* segbench.semantic._native: decode a pair of PNG label maps and count their confusion
 * cells, without Numba (so that `segbench semantic` starts without loading it).
 *
 * A C port of segbench/io/_png.py (table-driven Huffman inflate that copies matches
 * eight bytes at a time, two literal-heavy streams inflated in lockstep, the row
 * unfilter) and of the byte-pair counting of segbench/semantic/_kernels.py
 * (count_pairs: runs where the maps have them, one table increment a pixel where they
 * do not, labels checked once per byte pair). Any PNG it does not decode (not 8-bit
 * grey or palette, interlaced, malformed) and any pair with a bad label or differing
 * shapes gives None: the caller then takes the Python path, which decodes with Pillow
 * where needed and raises the error naming the file and pixel.
 *
 * Plain C and the CPython API (buffer protocol): no numpy headers. The GIL is released
 * while a pair is read, decoded and counted.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <fcntl.h>
#ifndef _WIN32
#include <unistd.h>
#endif

#if defined(_MSC_VER)
#include <intrin.h>
#define TLS __declspec(thread)
#define INLINE static __forceinline
static __forceinline int ctz64(unsigned long long x) {
    unsigned long i;
    _BitScanForward64(&i, x);
    return (int)i;
}
#else
#define TLS __thread
#define INLINE static inline __attribute__((always_inline))
#define ctz64(x) __builtin_ctzll(x)
#endif

/* SSE2 is x86-64's baseline: no run-time dispatch needed. SEGBENCH_NO_SIMD builds the
 * portable code (what other machines, 32-bit x86 included, run), for its tests. */
#if !defined(SEGBENCH_NO_SIMD) && (defined(__x86_64__) || defined(_M_X64))
#include <emmintrin.h>
#define USE_SSE2 1
#endif

/* The Adler-32 check has an AVX2 version, taken where the processor has AVX2 (GCC and
 * Clang on x86-64: a function built for it, chosen at import; SEGBENCH_NO_AVX2 leaves
 * it out, for the tests of the SSE2 one). */
#if defined(USE_SSE2) && !defined(SEGBENCH_NO_AVX2) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ADLER_AVX2 1
#endif
static int HAVE_AVX2 = 0;

#define PAD 16
#define SPARE 32 /* bytes after an inflated stream that matches may overwrite */
#define ONES 0x0101010101010101ULL
#define LB 11 /* first-level bits of the literal/length table (10: salt 5 % slower) */
#define DB 8
#define MAX_PIXELS 64000000LL

enum { K_LIT = 0, K_LEN = 1, K_END = 2, K_DIST = 3, K_BAD = 4, K_PTR = 5 };
enum { S_HUFF = 0, S_NEXT = 1, S_DONE = 2, S_FAIL = 3 };
#define LITERAL_HEAVY 4

static const int32_t LEN_BASE[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27,
                                     31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
                                     227, 258};
static const int32_t LEN_EXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const int32_t DIST_BASE[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97,
                                      129, 193, 257, 385, 513, 769, 1025, 1537, 2049,
                                      3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const int32_t DIST_EXTRA[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
static const uint8_t CL_ORDER[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13,
                                     2, 14, 1, 15};

INLINE uint64_t load8(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v; /* little-endian machines only (checked at import) */
}
INLINE void store8(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
INLINE int64_t be32(const uint8_t *b) {
    return ((int64_t)b[0] << 24) | ((int64_t)b[1] << 16) | ((int64_t)b[2] << 8) | b[3];
}

/* ---- Huffman tables ------------------------------------------------------------------ */
/* entry (int32):
 *   bits 0-5   bits to consume: the code's length, and for a length or a distance its
 *              extra bits too (0: no such code, or a pointer to a second level, whose
 *              entries consume the whole code from the first bit)
 *   bits 8-11  the code's length (a length or distance: where its extra bits start; a
 *              pointer: the second level's index bits)
 *   bits 12-14 kind (K_*)
 *   bits 16-30 value: the literal, the length or distance base, the second level's offset
 *   bit 31     set for literals: the loops tell a literal by the sign
 * So a symbol is consumed by one shift of the bit buffer by the entry (x86 shifts mask
 * the count to its low 6 bits), whatever its kind. vals[] (init_values) hold the kind,
 * value and flags, and in bits 8-11 the extra bits, which build() turns into the above. */

typedef struct {
    int32_t lit[(1 << LB) + 288 * (1 << (15 - LB))];
    int32_t dst[(1 << DB) + 32 * (1 << (15 - DB))];
    int32_t cl[1 << 7];
    int32_t lens[288 + 32];
} Tables;

static int32_t LV[288], DV[32], CLV[19];
static uint8_t REV8[256]; /* the bits of a byte reversed (init_values) */

static void init_values(void) {
    for (int s = 0; s < 256; s++) LV[s] = (int32_t)(0x80000000u | ((uint32_t)s << 16));
    LV[256] = K_END << 12;
    for (int s = 257; s < 286; s++)
        LV[s] = (LEN_BASE[s - 257] << 16) | (K_LEN << 12) | (LEN_EXTRA[s - 257] << 8);
    LV[286] = LV[287] = K_BAD << 12;
    for (int s = 0; s < 30; s++)
        DV[s] = (DIST_BASE[s] << 16) | (K_DIST << 12) | (DIST_EXTRA[s] << 8);
    DV[30] = DV[31] = K_BAD << 12;
    for (int s = 0; s < 19; s++) CLV[s] = s << 16;
#ifdef ADLER_AVX2
    __builtin_cpu_init();
    HAVE_AVX2 = __builtin_cpu_supports("avx2") ? 1 : 0;
#endif
    for (int b = 0; b < 256; b++) {
        int r = 0;
        for (int i = 0; i < 8; i++) r |= ((b >> i) & 1) << (7 - i);
        REV8[b] = (uint8_t)r;
    }
}

/* The n low bits of c reversed (n <= 16): Huffman codes are stored first bit lowest. */
INLINE uint32_t rev16(uint32_t c, int n) {
    uint32_t r = ((uint32_t)REV8[c & 255] << 8) | REV8[(c >> 8) & 255];
    return r >> (16 - n);
}

/* Canonical code of lengths lens[0:n] into table (first level lb bits); 0 when
 * over-subscribed (an incomplete code leaves entries of kind BAD, length 0). */
static int build(const int32_t *lens, int n, const int32_t *vals, int32_t *table, int lb) {
    int count[16] = {0}, nxt[16] = {0};
    int32_t rev[320];
    for (int s = 0; s < n; s++) count[lens[s]]++;
    count[0] = 0;
    int left = 1;
    for (int k = 1; k < 16; k++) {
        left = 2 * left - count[k];
        if (left < 0) return 0;
    }
    int code = 0;
    for (int k = 1; k < 16; k++) {
        code = (code + count[k - 1]) << 1;
        nxt[k] = code;
    }
    int size = 1 << lb, mask = size - 1;
    int complete = left == 0;
    if (!complete)
        for (int i = 0; i < size; i++) table[i] = K_BAD << 12;
    int long_codes = 0;
    for (int k = lb + 1; k < 16; k++) long_codes += count[k];
    static TLS uint8_t submax[1 << LB];
    if (long_codes) memset(submax, 0, (size_t)size);
    for (int s = 0; s < n; s++) {
        int k = lens[s];
        if (!k) continue;
        int r = (int)rev16((uint32_t)nxt[k]++, k);
        rev[s] = r;
        if (k > lb && submax[r & mask] < k - lb) submax[r & mask] = (uint8_t)(k - lb);
    }
    int off = size;
    if (long_codes) { /* a second-level table per prefix of the long codes */
        for (int s = 0; s < n; s++) {
            if (lens[s] <= lb) continue;
            int pre = rev[s] & mask, sub = submax[pre];
            if (sub & 0x80) continue; /* placed already */
            table[pre] = (off << 16) | (K_PTR << 12) | (sub << 8);
            if (!complete)
                for (int i = 0; i < (1 << sub); i++) table[off + i] = K_BAD << 12;
            off += 1 << sub;
            submax[pre] = (uint8_t)(sub | 0x80);
        }
    }
    for (int s = 0; s < n; s++) {
        int k = lens[s];
        if (!k) continue;
        int extra = (vals[s] >> 8) & 15;
        int32_t e = (vals[s] & ~0xF00) | (k << 8) | (k + extra);
        int r = rev[s];
        if (k <= lb) {
            for (int i = r; i < size; i += 1 << k) table[i] = e;
        } else {
            int32_t pt = table[r & mask];
            int base = pt >> 16, sub = (pt >> 8) & 15;
            for (int i = r >> lb; i < (1 << sub); i += 1 << (k - lb)) table[base + i] = e;
        }
    }
    return 1;
}

/* ---- inflate --------------------------------------------------------------------- */

typedef struct {
    const uint8_t *in;
    int64_t n_in;
    uint8_t *out;
    int64_t n_out;
    uint64_t bb;
    int64_t bc;
    int64_t ip;
    int64_t o;
    int state;
    int final;
    Tables *t;
} Stream;

#define REFILL(S)                                                 \
    do {                                                          \
        (S)->bb |= load8((S)->in + (S)->ip) << ((S)->bc & 63);    \
        (S)->ip += (63 - (S)->bc) >> 3;                           \
        (S)->bc |= 56;                                            \
    } while (0)

/* Read a block header: stored blocks copied (NEXT/DONE), Huffman codes built (HUFF). */
static int block_start(Stream *s) {
    Tables *t = s->t;
    if (s->ip > s->n_in + 8) return S_FAIL;
    REFILL(s);
    s->final = (int)(s->bb & 1);
    int btype = (int)((s->bb >> 1) & 3);
    s->bb >>= 3;
    s->bc -= 3;
    if (btype == 0) {
        s->ip -= s->bc >> 3;
        s->bb = 0;
        s->bc = 0;
        if (s->ip + 4 > s->n_in) return S_FAIL;
        const uint8_t *p = s->in + s->ip;
        int64_t ln = p[0] | (p[1] << 8), nln = p[2] | (p[3] << 8);
        if (ln != (~nln & 0xFFFF) || s->ip + 4 + ln > s->n_in || s->o + ln > s->n_out)
            return S_FAIL;
        memcpy(s->out + s->o, p + 4, (size_t)ln);
        s->o += ln;
        s->ip += 4 + ln;
        return s->final ? S_DONE : S_NEXT;
    }
    int32_t *lens = t->lens;
    if (btype == 1) {
        for (int i = 0; i < 144; i++) lens[i] = 8;
        for (int i = 144; i < 256; i++) lens[i] = 9;
        for (int i = 256; i < 280; i++) lens[i] = 7;
        for (int i = 280; i < 288; i++) lens[i] = 8;
        build(lens, 288, LV, t->lit, LB);
        for (int i = 0; i < 32; i++) lens[i] = 5;
        build(lens, 32, DV, t->dst, DB);
        return S_HUFF;
    }
    if (btype != 2) return S_FAIL;
    int nlit = 257 + (int)(s->bb & 31);
    int ndist = 1 + (int)((s->bb >> 5) & 31);
    int ncl = 4 + (int)((s->bb >> 10) & 15);
    s->bb >>= 14;
    s->bc -= 14;
    if (nlit > 286) return S_FAIL;
    int32_t cl_lens[19] = {0};
    for (int i = 0; i < ncl; i++) {
        if (s->bc < 3) REFILL(s);
        cl_lens[CL_ORDER[i]] = (int32_t)(s->bb & 7);
        s->bb >>= 3;
        s->bc -= 3;
    }
    if (!build(cl_lens, 19, CLV, t->cl, 7)) return S_FAIL;
    int i = 0, total = nlit + ndist;
    while (i < total) {
        if (s->ip > s->n_in + 8) return S_FAIL;
        REFILL(s);
        int32_t e = t->cl[s->bb & 127];
        int k = e & 63;
        if (!k) return S_FAIL;
        s->bb >>= k;
        s->bc -= k;
        int sym = e >> 16;
        int32_t val;
        int rep;
        if (sym < 16) {
            lens[i++] = sym;
            continue;
        }
        if (sym == 16) {
            if (i == 0) return S_FAIL;
            val = lens[i - 1];
            rep = 3 + (int)(s->bb & 3);
            s->bb >>= 2;
            s->bc -= 2;
        } else if (sym == 17) {
            val = 0;
            rep = 3 + (int)(s->bb & 7);
            s->bb >>= 3;
            s->bc -= 3;
        } else {
            val = 0;
            rep = 11 + (int)(s->bb & 127);
            s->bb >>= 7;
            s->bc -= 7;
        }
        if (i + rep > total) return S_FAIL;
        for (int r = 0; r < rep; r++) lens[i + r] = val;
        i += rep;
    }
    if (lens[256] == 0) return S_FAIL;
    if (!build(lens, nlit, LV, t->lit, LB)) return S_FAIL;
    if (!build(lens + nlit, ndist, DV, t->dst, DB)) return S_FAIL;
    return S_HUFF;
}

/* The decoding loops keep the stream's state in locals (L_* below), written back on
 * leaving: through the Stream pointer, every output byte stored (a char store may alias
 * anything) would make the compiler reload the bit buffer from memory. */
#define L_LOAD(S)                                                                \
    uint64_t bb = (S)->bb;                                                       \
    int64_t bc = (S)->bc, ip = (S)->ip, o = (S)->o;                              \
    const uint8_t *in = (S)->in;                                                 \
    uint8_t *out = (S)->out;                                                     \
    const int64_t n_in = (S)->n_in, n_out = (S)->n_out;                          \
    const int32_t *lit = (S)->t->lit, *dst = (S)->t->dst
#define L_STORE(S)      \
    do {                \
        (S)->bb = bb;   \
        (S)->bc = bc;   \
        (S)->ip = ip;   \
        (S)->o = o;     \
    } while (0)
#define L_REFILL()                              \
    do {                                        \
        bb |= load8(in + ip) << (bc & 63);      \
        ip += (63 - bc) >> 3;                   \
        bc |= 56;                               \
    } while (0)
#define LMASK ((1u << LB) - 1)
#define DMASK ((1u << DB) - 1)
#define KIND(E) (((E) >> 12) & 7)
#define MASK(N) ((1ULL << (N)) - 1)
/* Entry e of a table's first level (its `lb` bits at the bottom of bb), or where it
 * points, the second level's entry for the code's next bits. */
INLINE int32_t second_level(const int32_t *table, int32_t e, uint64_t bb, int lb) {
    if (KIND(e) != K_PTR) return e;
    return table[(e >> 16) + (int64_t)((bb >> lb) & MASK((e >> 8) & 15))];
}
/* Consume entry E's bits. */
#define L_CONSUME(E)        \
    do {                    \
        bb >>= ((E) & 63);  \
        bc -= (E) & 63;     \
    } while (0)
/* The value of a length or distance entry E (code and extra bits consumed together) from
 * the bit buffer as it was before: its base plus the extra bits after the code. */
#define EXTRA_VALUE(E, SAVED) \
    ((int64_t)((E) >> 16) + (int64_t)(((SAVED) & MASK((E) & 63)) >> (((E) >> 8) & 15)))

/* Copy a match of `length` bytes from `dist` back to dp (dist <= bytes written). The
 * first 24 bytes go without a loop (most matches are short: no mispredicted loop exit);
 * may write up to 23 bytes past the match, into bytes written later or the SPARE bytes
 * after the output. */
INLINE void copy_match(uint8_t *dp, int64_t dist, int64_t length) {
    const uint8_t *src = dp - dist;
    if (dist >= 8) {
        store8(dp, load8(src));
        store8(dp + 8, load8(src + 8));
        store8(dp + 16, load8(src + 16));
        for (int64_t k8 = 24; k8 < length; k8 += 8) store8(dp + k8, load8(src + k8));
    } else if (dist == 1) { /* a run of one value: a fill, 8 bytes a store */
        uint64_t v = (uint64_t)*src * ONES;
        store8(dp, v);
        store8(dp + 8, v);
        store8(dp + 16, v);
        for (int64_t k8 = 24; k8 < length; k8 += 8) store8(dp + k8, v);
    } else {
        for (int64_t j = 0; j < length; j++) dp[j] = src[j];
    }
}

/* The match of length entry e, consumed from the buffer `saved` (its code and extra
 * bits): the distance, then the copy, with every bound checked. 0 on bad data. */
INLINE int match(uint64_t *pbb, int64_t *pbc, int64_t *pip, int64_t *po, const uint8_t *in,
                 uint8_t *out, int64_t n_out, const int32_t *dst, int32_t e, uint64_t saved) {
    uint64_t bb = *pbb;
    int64_t bc = *pbc, ip = *pip, o = *po;
    int64_t length = EXTRA_VALUE(e, saved);
    if (bc < 28) L_REFILL();
    int32_t d = dst[bb & DMASK];
    d = second_level(dst, d, bb, DB);
    if (!(d & 63) || KIND(d) != K_DIST) return 0;
    saved = bb;
    L_CONSUME(d);
    int64_t dist = EXTRA_VALUE(d, saved);
    if (dist > o || o + length > n_out) return 0;
    copy_match(out + o, dist, length);
    *pbb = bb;
    *pbc = bc;
    *pip = ip;
    *po = o + length;
    return 1;
}

/* The fast part of block_symbols (the technique of libdeflate's fast loop, our code): while
 * the input has FAST_IN bytes left and the output room for a longest match, no bounds
 * check per symbol. Every symbol ends with a refill, so each starts with at least 56 bits
 * in bb. The next symbol's entry is looked up before that refill and before a match's
 * copy: the chain from one look-up to the next is then a shift, a mask and a load, and
 * waits for neither the refill's load nor the copy's stores (the refill only adds bits
 * above those the look-up reads). A length or distance is consumed with its extra bits by
 * one shift. Returns S_HUFF when it stops early (the careful loop goes on), S_NEXT at the
 * block's end, or S_FAIL. */
#define FAST_IN 32
#define FAST_OUT 258
static int fast_symbols(Stream *s) {
    L_LOAD(s);
    int ret = S_HUFF;
    const int64_t in_end = n_in - FAST_IN, out_end = n_out - FAST_OUT;
    if (ip >= in_end || o >= out_end) return S_HUFF;
    L_REFILL(); /* bc >= 56 at the top of every round */
    int32_t e = lit[bb & LMASK];
    for (;;) {
        if (e < 0) { /* a first-level literal; one a round (three a round, the
                      * literal-or-match branches cost more than the refills saved) */
            L_CONSUME(e);
            uint8_t v = (uint8_t)(e >> 16);
            e = lit[bb & LMASK];
            out[o++] = v;
            L_REFILL();
            if (ip >= in_end || o >= out_end) break;
            continue;
        }
        e = second_level(lit, e, bb, LB);
        uint64_t saved = bb;
        L_CONSUME(e);
        if (e < 0) { /* a literal of the second level */
            out[o++] = (uint8_t)(e >> 16);
            L_REFILL();
            e = lit[bb & LMASK];
            if (ip >= in_end || o >= out_end) break;
            continue;
        }
        int kind = KIND(e);
        if (kind != K_LEN || !(e & 63)) {
            ret = kind == K_END && (e & 63) ? S_NEXT : S_FAIL;
            break;
        }
        /* bits left: >= 56 - 20 (a length code and its extra bits) = 36, enough for a
         * distance code and its extra bits (28) */
        int64_t length = EXTRA_VALUE(e, saved);
        int32_t d = dst[bb & DMASK];
        d = second_level(dst, d, bb, DB);
        if (KIND(d) != K_DIST || !(d & 63)) {
            ret = S_FAIL;
            break;
        }
        saved = bb;
        L_CONSUME(d);
        int64_t dist = EXTRA_VALUE(d, saved);
        if (dist > o) {
            ret = S_FAIL;
            break;
        }
        /* the next look-up before the refill and the copy; a refill first only when
         * fewer bits are left than the look-up reads */
        if (bc < LB) L_REFILL();
        e = lit[bb & LMASK];
        L_REFILL();
        copy_match(out + o, dist, length);
        o += length;
        if (ip >= in_end || o >= out_end) break;
    }
    L_STORE(s);
    return ret;
}

/* At least one symbol, every bound checked, then on to the block end or (yield_ok) the
 * next first-level literal: S_NEXT, S_HUFF (yielded) or S_FAIL. */
static int step(Stream *s, int yield_ok) {
    L_LOAD(s);
    int first = 1, ret;
    for (;;) {
        if (ip > n_in + 8) {
            ret = S_FAIL;
            break;
        }
        L_REFILL();
        int32_t e = lit[bb & LMASK];
        if (yield_ok && !first && e < 0) {
            ret = S_HUFF;
            break;
        }
        first = 0;
        e = second_level(lit, e, bb, LB);
        uint64_t saved = bb;
        L_CONSUME(e);
        if (e < 0) {
            if (o >= n_out) {
                ret = S_FAIL;
                break;
            }
            out[o++] = (uint8_t)(e >> 16);
            continue;
        }
        int kind = KIND(e);
        if (kind == K_END && (e & 63)) {
            ret = S_NEXT;
            break;
        }
        if (kind != K_LEN || !(e & 63) ||
            !match(&bb, &bc, &ip, &o, in, out, n_out, dst, e, saved)) {
            ret = S_FAIL;
            break;
        }
    }
    L_STORE(s);
    return ret;
}

/* Symbols of a Huffman block up to its end: S_NEXT, or S_FAIL. The fast loop, then the
 * careful one for the last bytes of the input and output. */
static int block_symbols(Stream *s) {
    int first = fast_symbols(s);
    return first == S_HUFF ? step(s, 0) : first;
}

static void stream_init(Stream *s, const uint8_t *in, int64_t n_in, uint8_t *out,
                        int64_t n_out, Tables *t) {
    s->in = in;
    s->n_in = n_in;
    s->out = out;
    s->n_out = n_out;
    s->bb = 0;
    s->bc = 0;
    s->ip = 0;
    s->o = 0;
    s->state = S_NEXT;
    s->final = 0;
    s->t = t;
}

INLINE int stream_ok(const Stream *s) {
    return s->o == s->n_out && s->ip - (s->bc >> 3) <= s->n_in;
}

static int inflate1(Stream *s) {
    for (;;) {
        int st = block_start(s);
        if (st == S_FAIL) return 0;
        if (st == S_HUFF && block_symbols(s) == S_FAIL) return 0;
        if (s->final) break;
    }
    return stream_ok(s);
}

static void next_block(Stream *s) {
    while (s->state == S_NEXT) {
        if (s->final) {
            s->state = S_DONE;
            return;
        }
        s->state = block_start(s);
    }
}

/* Two streams in lockstep where both are at first-level literals (maps without runs:
 * two independent chains of dependent look-ups share the wait). */
static int inflate_pair(Stream *a, Stream *b) {
    const int32_t *la = a->t->lit, *lb = b->t->lit;
    for (;;) {
        if (a->state == S_NEXT) next_block(a);
        if (b->state == S_NEXT) next_block(b);
        if (a->state == S_FAIL || b->state == S_FAIL) return 0;
        if (a->state == S_DONE && b->state == S_DONE) break;
        if (a->state == S_HUFF && b->state == S_HUFF) {
            int64_t rounds = (a->n_out - a->o) / 5, r2 = (b->n_out - b->o) / 5;
            int64_t r3 = (a->n_in + 8 - a->ip) / 7 + 1, r4 = (b->n_in + 8 - b->ip) / 7 + 1;
            if (r2 < rounds) rounds = r2;
            if (r3 < rounds) rounds = r3;
            if (r4 < rounds) rounds = r4;
            uint64_t ba = a->bb, bbb = b->bb;
            int64_t ca = a->bc, cb = b->bc, pa = a->ip, pb = b->ip;
            uint8_t *oa = a->out + a->o, *ob = b->out + b->o;
            const uint8_t *ia = a->in, *ib = b->in;
            int64_t done = 0;
            for (int64_t r = 0; r < rounds; r++) {
                ba |= load8(ia + pa) << (ca & 63);
                pa += ((63 - ca) & 63) >> 3;
                ca |= 56;
                bbb |= load8(ib + pb) << (cb & 63);
                pb += ((63 - cb) & 63) >> 3;
                cb |= 56;
                int k = 0;
                for (; k < 5; k++) {
                    int32_t ea = la[ba & LMASK], eb = lb[bbb & LMASK];
                    if ((ea & eb) >= 0) break; /* not both literals */
                    /* the whole entry subtracted: only the count's low 6 bits matter */
                    ba >>= (ea & 63);
                    ca -= ea;
                    oa[done] = (uint8_t)(ea >> 16);
                    bbb >>= (eb & 63);
                    cb -= eb;
                    ob[done] = (uint8_t)(eb >> 16);
                    done++;
                }
                if (k < 5) break;
            }
            a->bb = ba;
            b->bb = bbb;
            a->bc = ca & 63;
            b->bc = cb & 63;
            a->ip = pa;
            b->ip = pb;
            a->o += done;
            b->o += done;
        }
        if (a->state == S_HUFF) a->state = step(a, b->state != S_DONE);
        if (b->state == S_HUFF) b->state = step(b, a->state != S_DONE);
    }
    return stream_ok(a) && stream_ok(b);
}

/* ---- Adler-32 ------------------------------------------------------------------------ */
/* The zlib trailer's checksum of the inflated bytes, checked as zlib (so Pillow) checks it:
 * a file damaged where the damage still inflates (a flipped literal) is refused, not
 * counted. a = 1 + sum of the bytes, b = sum of the a's, both mod 65521; over a block of L
 * bytes v_j: a += sum v_j, b += L a + sum (L - j) v_j, reduced before 32 bits overflow
 * (blocks of at most 5552 bytes, as zlib). 600 salt maps: 46 ms a byte at a time, 7 with
 * SSE2, 3 with AVX2 (taken where the processor has it). */
#define ADLER_MOD 65521u
#define ADLER_BLOCK 5552

static uint32_t adler_bytes(uint32_t adler, const uint8_t *p, int64_t n) {
    uint32_t a = adler & 0xFFFF, b = adler >> 16;
    while (n > 0) {
        int64_t m = n < ADLER_BLOCK ? n : ADLER_BLOCK;
        n -= m;
        while (m--) {
            a += *p++;
            b += a;
        }
        a %= ADLER_MOD;
        b %= ADLER_MOD;
    }
    return (b << 16) | a;
}

/* A block of len bytes summed by `width`-byte vectors into (a, b): `sums` the bytes' sum,
 * `earlier` the sum over the vectors of the sums of the vectors before each, `weighted`
 * the bytes times their distance from their vector's end (width - j for byte j). */
INLINE void adler_fold(uint64_t *a, uint64_t *b, uint64_t len, uint64_t sums,
                       uint64_t earlier, uint64_t weighted, uint64_t width) {
    *b = (*b + len * *a + width * earlier + weighted) % ADLER_MOD;
    *a = (*a + sums) % ADLER_MOD;
}

#ifdef USE_SSE2
static uint32_t adler_sse2(uint32_t adler, const uint8_t *p, int64_t n) {
    uint64_t a = adler & 0xFFFF, b = adler >> 16;
    const __m128i zero = _mm_setzero_si128();
    const __m128i w_lo = _mm_setr_epi16(16, 15, 14, 13, 12, 11, 10, 9);
    const __m128i w_hi = _mm_setr_epi16(8, 7, 6, 5, 4, 3, 2, 1);
    while (n >= 16) {
        int64_t chunks = (n < ADLER_BLOCK ? n : ADLER_BLOCK) / 16;
        __m128i va = zero, vs = zero, vb = zero; /* sums, sums of earlier sums, weighted */
        for (int64_t c = 0; c < chunks; c++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * c));
            vs = _mm_add_epi64(vs, va);
            va = _mm_add_epi64(va, _mm_sad_epu8(v, zero));
            vb = _mm_add_epi32(vb, _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), w_lo));
            vb = _mm_add_epi32(vb, _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), w_hi));
        }
        uint64_t sa[2], ss[2];
        uint32_t sb[4];
        _mm_storeu_si128((__m128i *)sa, va);
        _mm_storeu_si128((__m128i *)ss, vs);
        _mm_storeu_si128((__m128i *)sb, vb);
        uint64_t len = 16 * (uint64_t)chunks;
        adler_fold(&a, &b, len, sa[0] + sa[1], ss[0] + ss[1],
                   (uint64_t)sb[0] + sb[1] + sb[2] + sb[3], 16);
        p += len;
        n -= (int64_t)len;
    }
    return adler_bytes((uint32_t)((b << 16) | a), p, n);
}
#endif

#ifdef ADLER_AVX2
__attribute__((target("avx2"))) static uint32_t adler_avx2(uint32_t adler, const uint8_t *p,
                                                          int64_t n) {
    uint64_t a = adler & 0xFFFF, b = adler >> 16;
    const __m256i zero = _mm256_setzero_si256();
    const __m256i w = _mm256_setr_epi8(32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19,
                                       18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4,
                                       3, 2, 1);
    const __m256i ones = _mm256_set1_epi16(1);
    while (n >= 32) {
        int64_t chunks = (n < ADLER_BLOCK ? n : ADLER_BLOCK) / 32;
        __m256i va = zero, vs = zero, vb = zero;
        for (int64_t c = 0; c < chunks; c++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(p + 32 * c));
            vs = _mm256_add_epi64(vs, va);
            va = _mm256_add_epi64(va, _mm256_sad_epu8(v, zero));
            vb = _mm256_add_epi32(vb, _mm256_madd_epi16(_mm256_maddubs_epi16(v, w), ones));
        }
        uint64_t sa[4], ss[4];
        uint32_t sb[8];
        _mm256_storeu_si256((__m256i *)sa, va);
        _mm256_storeu_si256((__m256i *)ss, vs);
        _mm256_storeu_si256((__m256i *)sb, vb);
        uint64_t len = 32 * (uint64_t)chunks, weighted = 0;
        for (int i = 0; i < 8; i++) weighted += sb[i];
        adler_fold(&a, &b, len, sa[0] + sa[1] + sa[2] + sa[3], ss[0] + ss[1] + ss[2] + ss[3],
                   weighted, 32);
        p += len;
        n -= (int64_t)len;
    }
    return adler_bytes((uint32_t)((b << 16) | a), p, n);
}
#endif

static uint32_t adler32(const uint8_t *p, int64_t n) {
#ifdef ADLER_AVX2
    if (HAVE_AVX2 > 0) return adler_avx2(1, p, n);
#endif
#ifdef USE_SSE2
    return adler_sse2(1, p, n);
#else
    return adler_bytes(1, p, n);
#endif
}

/* A stream inflated whole (stream_ok) whose zlib trailer follows it and matches. */
static int stream_checked(const Stream *s) {
    if (!stream_ok(s)) return 0;
    int64_t end = s->ip - (s->bc >> 3); /* the first byte after the deflate data */
    if (end < 0 || end + 4 > s->n_in) return 0;
    return (uint32_t)be32(s->in + end) == adler32(s->out, s->n_out);
}

/* ---- unfilter ---------------------------------------------------------------------- */

INLINE int64_t paeth(int64_t a, int64_t b, int64_t c) {
    int64_t pa = llabs(b - c), pb = llabs(a - c), pc = llabs(a + b - 2 * c);
    return (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
}

INLINE int64_t paeth_by_bounds(int64_t a, int64_t b, int64_t c) {
    int64_t x = 3 * c - 2 * b;
    int64_t m = -(int64_t)(b <= x);
    int64_t lo = x ^ ((b ^ x) & m);
    int64_t hi = b ^ x ^ lo;
    m = -(int64_t)(b >= c);
    int64_t big = c ^ ((b ^ c) & m);
    int64_t small = b ^ c ^ big;
    int64_t t = (3 * c - b + 1 + (int64_t)(b < c)) >> 1;
    int64_t inner = small ^ ((small ^ big) & -(int64_t)(a >= t));
    return a ^ ((a ^ inner) & -(int64_t)((a > lo) & (a < hi)));
}


/* Byte-wise a + b (mod 256 in each byte, no carry between bytes). */
INLINE uint64_t add_bytes(uint64_t a, uint64_t b) {
    return ((a & 0x7F7F7F7F7F7F7F7FULL) + (b & 0x7F7F7F7F7F7F7F7FULL)) ^
           ((a ^ b) & 0x8080808080808080ULL);
}

/* 8-bit samples (bpp 1): rows of 1 + rb bytes in raw into img (h * rb). */
static int unfilter8(const uint8_t *raw, int64_t h, int64_t rb, uint8_t *img) {
    for (int64_t r = 0; r < h; r++) {
        const uint8_t *src = raw + r * (rb + 1) + 1;
        int f = src[-1];
        uint8_t *dst = img + r * rb;
        const uint8_t *prv = dst - rb;
        if (f == 0 || (f == 2 && r == 0)) {
            memcpy(dst, src, (size_t)rb);
        } else if (f == 2) {
            for (int64_t i = 0; i < rb; i++) dst[i] = (uint8_t)(src[i] + prv[i]);
        } else if (f == 1 || (f == 4 && r == 0)) {
            /* Sub: a running sum of bytes, eight at a time (prefix sums inside a word by
             * byte-wise adds, then the left neighbour's byte added to all eight) */
            uint64_t a = 0;
            int64_t i = 0;
#ifdef USE_SSE2
            /* sixteen at a time: prefix sums by shifted adds, then the byte before */
            __m128i carry = _mm_setzero_si128();
            for (; i + 16 <= rb; i += 16) {
                __m128i x = _mm_loadu_si128((const __m128i *)(src + i));
                x = _mm_add_epi8(x, _mm_slli_si128(x, 1));
                x = _mm_add_epi8(x, _mm_slli_si128(x, 2));
                x = _mm_add_epi8(x, _mm_slli_si128(x, 4));
                x = _mm_add_epi8(x, _mm_slli_si128(x, 8));
                x = _mm_add_epi8(x, carry);
                _mm_storeu_si128((__m128i *)(dst + i), x);
                __m128i last = _mm_srli_si128(x, 15); /* byte 15 to byte 0, then to all */
                last = _mm_unpacklo_epi8(last, last);
                last = _mm_unpacklo_epi16(last, last);
                carry = _mm_shuffle_epi32(last, 0);
            }
            if (i) a = dst[i - 1];
#endif
            for (; i + 8 <= rb; i += 8) {
                uint64_t x = load8(src + i);
                x = add_bytes(x, x << 8);
                x = add_bytes(x, x << 16);
                x = add_bytes(x, x << 32);
                x = add_bytes(x, a * ONES);
                store8(dst + i, x);
                a = x >> 56;
            }
            for (; i < rb; i++) dst[i] = (uint8_t)(a = (uint8_t)(src[i] + a));
        } else if (f == 3 && r == 0) {
            uint8_t a = 0;
            for (int64_t i = 0; i < rb; i++) dst[i] = a = (uint8_t)(src[i] + (a >> 1));
        } else if (f == 3) {
            int64_t a = 0;
            for (int64_t i = 0; i < rb; i++) dst[i] = (uint8_t)(a = (uint8_t)(src[i] + ((a + prv[i]) >> 1)));
        } else if (f == 4) {
            int64_t changes = 0;
            for (int64_t i = 1; i < rb; i++) changes += prv[i] != prv[i - 1];
            int64_t a = 0, c = 0;
            if (8 * changes < rb) {
                int64_t i = 0;
                while (i < rb) {
                    if (i + 8 <= rb && load8(src + i) == 0 &&
                        load8(prv + i) == (uint64_t)c * ONES) {
                        store8(dst + i, (uint64_t)a * ONES);
                        i += 8;
                        continue;
                    }
                    int64_t b = prv[i];
                    if (b == c) a = (uint8_t)(src[i] + a);
                    else a = (uint8_t)(src[i] + paeth(a, b, c));
                    dst[i] = (uint8_t)a;
                    c = b;
                    i++;
                }
            } else {
                for (int64_t i = 0; i < rb; i++) {
                    int64_t b = prv[i];
                    a = (uint8_t)(src[i] + paeth_by_bounds(a, b, c));
                    dst[i] = (uint8_t)a;
                    c = b;
                }
            }
        } else {
            return 0;
        }
    }
    return 1;
}

/* ---- PNG container --------------------------------------------------------------------- */

typedef struct {
    uint8_t *buf; /* the file, then the gathered stream, PAD zero bytes after */
    int64_t cap;
    int64_t n;
    int64_t h, w, start, total;
} File;

static int grow(uint8_t **p, int64_t *cap, int64_t size) {
    if (*cap >= size) return 1;
    int64_t want = size > 2 * *cap ? size : 2 * *cap;
    uint8_t *q = (uint8_t *)realloc(*p, (size_t)want);
    if (!q) return 0;
    *p = q;
    *cap = want;
    return 1;
}

/* Read a regular file whole (no FIFO: opened without blocking). 0 on any failure. */
static int read_file(const char *path, File *f) {
#ifndef _WIN32
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0;
    }
    int64_t size = (int64_t)st.st_size;
    if (!grow(&f->buf, &f->cap, size + 1 + PAD)) {
        close(fd);
        return 0;
    }
    int64_t got = 0;
    for (;;) {
        ssize_t r = read(fd, f->buf + got, (size_t)(size + 1 - got));
        if (r < 0) {
            close(fd);
            return 0;
        }
        if (r == 0) break;
        got += r;
        if (got > size) { /* grew since the stat: leave it to the Python path */
            close(fd);
            return 0;
        }
    }
    close(fd);
    f->n = got;
    return 1;
#else
    FILE *fh = fopen(path, "rb");
    if (!fh) return 0;
    if (fseek(fh, 0, SEEK_END)) { fclose(fh); return 0; }
    long size = ftell(fh);
    if (size < 0 || fseek(fh, 0, SEEK_SET)) { fclose(fh); return 0; }
    if (!grow(&f->buf, &f->cap, (int64_t)size + 1 + PAD)) { fclose(fh); return 0; }
    size_t got = fread(f->buf, 1, (size_t)size + 1, fh);
    fclose(fh);
    if ((long)got != size) return 0;
    f->n = (int64_t)got;
    return 1;
#endif
}

/* Check the header (8-bit grey or palette, not interlaced) and gather the IDAT chunks
 * in place into buf[start:start + total] followed by PAD zeros. 1 when ready. */
/* CRC-32 of p[0:n] (the PNG chunk check), a bit at a time: for the 17 bytes of a
 * header, not for image data (the zlib trailer's Adler-32 checks that). */
static uint32_t crc32_bits(const uint8_t *p, int64_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (int64_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static int parse(File *f) {
    uint8_t *b = f->buf;
    int64_t n = f->n;
    if (n < 33 || memcmp(b, "\x89PNG\r\n\x1a\n", 8)) return 0;
    if (be32(b + 8) != 13 || memcmp(b + 12, "IHDR", 4)) return 0;
    if (crc32_bits(b + 12, 17) != (uint32_t)be32(b + 29)) return 0; /* Pillow refuses it */
    int64_t w = be32(b + 16), h = be32(b + 20);
    int depth = b[24], ctype = b[25];
    if (b[26] || b[27] || b[28]) return 0;
    if (depth != 8 || (ctype != 0 && ctype != 3)) return 0;
    if (w < 1 || h < 1 || w * h > MAX_PIXELS) return 0;
    int64_t pos = 33, total = 0, first = -1;
    int seen_plte = 0, ended = 0;
    while (pos + 12 <= n) {
        int64_t ln = be32(b + pos);
        const uint8_t *t = b + pos + 4;
        if (pos + 12 + ln > n) return 0;
        if (!memcmp(t, "IDAT", 4)) {
            if (first < 0) first = pos;
            else if (ended) return 0;
            total += ln;
        } else if (first >= 0) {
            ended = 1;
        }
        if (!memcmp(t, "PLTE", 4)) seen_plte = 1;
        if (!memcmp(t, "IEND", 4)) break;
        pos += 12 + ln;
    }
    if (first < 0 || total < 6 || (ctype == 3 && !seen_plte)) return 0;
    int64_t start = first + 8;
    pos = first + 12 + be32(b + first);
    int64_t k = start + be32(b + first);
    while (k < start + total) {
        int64_t ln = be32(b + pos);
        memmove(b + k, b + pos + 8, (size_t)ln);
        k += ln;
        pos += 12 + ln;
    }
    memset(b + k, 0, PAD);
    int cmf = b[start], flg = b[start + 1];
    if ((cmf & 15) != 8 || (cmf >> 4) > 7 || ((cmf << 8) | flg) % 31 || (flg & 32)) return 0;
    f->h = h;
    f->w = w;
    f->start = start;
    f->total = total;
    return 1;
}

/* ---- counting ---------------------------------------------------------------------------- */

#define BLOCK (1 << 14)
#define SAMPLE 2048
#define DENSE 2 /* per pixel from one change in 2 pixels */
#define LONG 32 /* marks from one change in 32 */

#define HIGH 0x8080808080808080ULL
#define LOW7 0x7F7F7F7F7F7F7F7FULL
#define PACK 0x0102040810204080ULL

/* Bits j = 1 where byte j of x is not zero. */
INLINE uint64_t nonzero_bits(uint64_t x) {
    uint64_t t = (((x & LOW7) + LOW7) | x) & HIGH;
    return ((t >> 7) * PACK) >> 56;
}

/* raw[256 g + p] += run length, for every run of one byte pair in g, p (m pixels). The
 * pixels where either map changes are marked 64 at a time, branch-free (eight pixels a
 * word: each byte against the one before it), and only the marks are visited: one
 * mispredicted branch per 64 pixels, not one per run end. */
static void count_runs(const uint8_t *g, const uint8_t *p, int64_t m, uint32_t *raw) {
    int64_t start = 0;
    for (int64_t base = 0; base < m; base += 64) {
        int64_t lim = m - base < 64 ? m - base : 64;
        uint64_t mask = 0;
        /* q from 1 in the first word: pixel 0 has no pixel before it (nor need one) */
        int64_t q = base == 0;
#ifdef USE_SSE2
        if (base == 0)
            for (; q < 16 && q < lim; q++)
                mask |= (uint64_t)((g[q] != g[q - 1]) | (p[q] != p[q - 1])) << q;
        for (; q + 16 <= lim; q += 16) {
            const uint8_t *gq = g + base + q, *pq = p + base + q;
            __m128i same = _mm_and_si128(
                _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)gq),
                               _mm_loadu_si128((const __m128i *)(gq - 1))),
                _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)pq),
                               _mm_loadu_si128((const __m128i *)(pq - 1))));
            mask |= (uint64_t)(~_mm_movemask_epi8(same) & 0xFFFF) << q;
        }
#else
        for (; q + 8 <= lim; q += 8) {
            const uint8_t *gq = g + base + q, *pq = p + base + q;
            uint64_t gw = load8(gq), pw = load8(pq);
            /* each byte against the one before it: the word shifted by a byte, with the
             * byte before the word moved in (there is one: q >= 1 in the first word) */
            uint64_t gl = gq[-1], pl = pq[-1];
            uint64_t x = (gw ^ ((gw << 8) | gl)) | (pw ^ ((pw << 8) | pl));
            mask |= nonzero_bits(x) << q;
        }
#endif
        for (; q < lim; q++) {
            int64_t i = base + q;
            mask |= (uint64_t)((g[i] != g[i - 1]) | (p[i] != p[i - 1])) << q;
        }
        while (mask) {
            int64_t pos = base + ctz64(mask);
            raw[((uint32_t)g[start] << 8) | p[start]] += (uint32_t)(pos - start);
            start = pos;
            mask &= mask - 1;
        }
    }
    raw[((uint32_t)g[start] << 8) | p[start]] += (uint32_t)(m - start);
}

/* raw[256 g + p] += pixels: per pixel where the block's first SAMPLE pixels change at
 * least every DENSE pixels (no runs: one increment a pixel, no branch), by marked runs
 * where they change at least every LONG pixels (noisy maps), else by long runs
 * compared eight pixels a step (clean label maps). */
static void count_bytes(const uint8_t *g, const uint8_t *p, int64_t n, uint32_t *raw) {
    for (int64_t b0 = 0; b0 < n; b0 += BLOCK) {
        int64_t m = n - b0 < BLOCK ? n - b0 : BLOCK;
        const uint8_t *gb = g + b0, *pb = p + b0;
        int64_t k = m < SAMPLE ? m : SAMPLE, changes = 0;
        for (int64_t i = 1; i < k; i++) changes += (gb[i] != gb[i - 1]) | (pb[i] != pb[i - 1]);
        if (DENSE * changes >= k) {
            int64_t i = 0;
#ifdef USE_SSE2
            /* the cells of eight pixels at once (byte p, byte g: the 16-bit index
             * 256 g + p), taken out of the register four at a time, then one increment
             * each (no buffer in memory: its loads would wait on the increments' stores
             * wherever the two addresses alias modulo 4 kB) */
            for (; i + 8 <= m; i += 8) {
                __m128i gv = _mm_loadl_epi64((const __m128i *)(gb + i));
                __m128i pv = _mm_loadl_epi64((const __m128i *)(pb + i));
                __m128i cells = _mm_unpacklo_epi8(pv, gv);
                uint64_t lo = (uint64_t)_mm_cvtsi128_si64(cells);
                uint64_t hi = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(cells, cells));
                raw[lo & 0xFFFF]++;
                raw[(lo >> 16) & 0xFFFF]++;
                raw[(lo >> 32) & 0xFFFF]++;
                raw[lo >> 48]++;
                raw[hi & 0xFFFF]++;
                raw[(hi >> 16) & 0xFFFF]++;
                raw[(hi >> 32) & 0xFFFF]++;
                raw[hi >> 48]++;
            }
#endif
            for (; i < m; i++) raw[((uint32_t)gb[i] << 8) | pb[i]]++;
            continue;
        }
        if (LONG * changes >= k) {
            count_runs(gb, pb, m, raw);
            continue;
        }
        int64_t i = 0;
        while (i < m) {
            uint32_t g0 = gb[i], p0 = pb[i];
            uint64_t gw = g0 * ONES, pw = p0 * ONES;
            int64_t j = i + 1;
            for (;;) {
                if (j + 8 <= m) {
                    uint64_t x = (load8(gb + j) ^ gw) | (load8(pb + j) ^ pw);
                    if (x) {
                        j += ctz64(x) >> 3;
                        break;
                    }
                    j += 8;
                } else {
                    while (j < m && gb[j] == g0 && pb[j] == p0) j++;
                    break;
                }
            }
            raw[(g0 << 8) | p0] += (uint32_t)(j - i);
            i = j;
        }
    }
}

INLINE int64_t gt_label(int64_t v, int64_t ign, int rzl) {
    if (rzl) {
        if (v == 0) return ign;
        v -= 1;
        if (v == 254) return ign;
    }
    return v;
}

/* ---- per-thread state ------------------------------------------------------------------ */

typedef struct {
    File a, b;
    uint8_t *raw_a, *raw_b;
    int64_t cap_a, cap_b;
    Tables *ta, *tb;
    uint32_t *pairs; /* 65536 byte-pair counts, kept zeroed */
} State;

static TLS State ST;

/* Decode both files and count them into ST.pairs. Returns the pixel count, or -1. */
static int64_t decode_count(const char *gp, const char *pp) {
    State *s = &ST;
    if (!s->ta) {
        s->ta = (Tables *)malloc(sizeof(Tables));
        s->tb = (Tables *)malloc(sizeof(Tables));
        s->pairs = (uint32_t *)calloc(65536, sizeof(uint32_t));
        if (!s->ta || !s->tb || !s->pairs) {
            free(s->ta);
            free(s->tb);
            free(s->pairs);
            s->ta = s->tb = NULL;
            s->pairs = NULL;
            return -1;
        }
    }
    if (!read_file(gp, &s->a) || !read_file(pp, &s->b)) return -1;
    if (!parse(&s->a) || !parse(&s->b)) return -1;
    if (s->a.h != s->b.h || s->a.w != s->b.w) return -1;
    int64_t h = s->a.h, w = s->a.w;
    int64_t n_raw = h * (w + 1);
    if (!grow(&s->raw_a, &s->cap_a, n_raw + SPARE) || !grow(&s->raw_b, &s->cap_b, n_raw + SPARE))
        return -1;
    /* decoded into the file buffers (the streams are not needed once inflated) */
    if (!grow(&s->a.buf, &s->a.cap, h * w) || !grow(&s->b.buf, &s->b.cap, h * w)) return -1;
    Stream sa, sb;
    stream_init(&sa, s->a.buf + s->a.start + 2, s->a.total - 2, s->raw_a, n_raw, s->ta);
    stream_init(&sb, s->b.buf + s->b.start + 2, s->b.total - 2, s->raw_b, n_raw, s->tb);
    if (LITERAL_HEAVY * s->a.total >= n_raw && LITERAL_HEAVY * s->b.total >= n_raw) {
        if (!inflate_pair(&sa, &sb)) return -1;
    } else {
        if (!inflate1(&sa) || !inflate1(&sb)) return -1;
    }
    /* before the unfilter overwrites the streams, trailers included */
    if (!stream_checked(&sa) || !stream_checked(&sb)) return -1;
    if (!unfilter8(s->raw_a, h, w, s->a.buf) || !unfilter8(s->raw_b, h, w, s->b.buf)) return -1;
    count_bytes(s->a.buf, s->b.buf, h * w, s->pairs);
    return h * w;
}

/* Fold ST.pairs into the sparse record (cells increasing) and zero it. 0 on a bad
 * label (counts zeroed all the same). The table is scanned 16 cells at a time: most
 * of it is empty, and a scan costs less than finding the largest label of each map. */
static int fold(int64_t nc, int64_t ign, int rzl, int64_t *cells, int64_t *vals, int64_t *k_out) {
    uint32_t *raw = ST.pairs;
    int bad = 0;
    int64_t k = 0;
    for (int64_t v = 0; v < 256; v++) {
        uint32_t *row = raw + (v << 8);
        int64_t gl = gt_label(v, ign, rzl);
        int valid = gl != ign && gl >= 0 && gl < nc;
        for (int64_t u0 = 0; u0 < 256; u0 += 16) {
            uint64_t any = 0;
            for (int j = 0; j < 16; j += 2) any |= load8((const uint8_t *)(row + u0 + j));
            if (!any) continue;
            for (int64_t u = u0; u < u0 + 16; u++) {
                uint64_t x = row[u];
                if (!x) continue;
                row[u] = 0;
                if (u >= nc || (gl != ign && !valid)) {
                    bad = 1;
                    continue;
                }
                if (!valid) continue;
                cells[k] = gl * nc + u;
                vals[k] = (int64_t)x;
                k++;
            }
        }
    }
    *k_out = k;
    return !bad;
}

/* ---- Python functions ---------------------------------------------------------------------- */

static PyObject *count_png_pair(PyObject *self, PyObject *args) {
    PyObject *gpath, *ppath;
    long long nc, ign;
    int rzl;
    if (!PyArg_ParseTuple(args, "O&O&LLp", PyUnicode_FSConverter, &gpath,
                          PyUnicode_FSConverter, &ppath, &nc, &ign, &rzl))
        return NULL;
    if (nc < 1 || nc > 65536) {
        Py_DECREF(gpath);
        Py_DECREF(ppath);
        Py_RETURN_NONE;
    }
    int64_t cap = nc < 256 ? nc * nc : 256 * 256;
    int64_t *cells = (int64_t *)malloc(sizeof(int64_t) * 2 * (size_t)cap);
    if (!cells) {
        Py_DECREF(gpath);
        Py_DECREF(ppath);
        return PyErr_NoMemory();
    }
    int64_t *vals = cells + cap;
    int64_t npix, k = 0;
    int ok = 0;
    Py_BEGIN_ALLOW_THREADS
    npix = decode_count(PyBytes_AS_STRING(gpath), PyBytes_AS_STRING(ppath));
    if (npix >= 0) ok = fold(nc, ign, rzl, cells, vals, &k);
    Py_END_ALLOW_THREADS
    Py_DECREF(gpath);
    Py_DECREF(ppath);
    if (npix < 0 || !ok) {
        free(cells);
        Py_RETURN_NONE;
    }
    /* int32 where every cell index and count fits, as take_cells gives them */
    int narrow = nc * nc <= INT32_MAX && npix <= INT32_MAX;
    size_t item = narrow ? 4 : 8;
    PyObject *bc = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(k * item));
    PyObject *bv = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(k * item));
    if (!bc || !bv) {
        Py_XDECREF(bc);
        Py_XDECREF(bv);
        free(cells);
        return NULL;
    }
    if (narrow) {
        int32_t *c32 = (int32_t *)PyBytes_AS_STRING(bc), *v32 = (int32_t *)PyBytes_AS_STRING(bv);
        for (int64_t i = 0; i < k; i++) {
            c32[i] = (int32_t)cells[i];
            v32[i] = (int32_t)vals[i];
        }
    } else {
        memcpy(PyBytes_AS_STRING(bc), cells, (size_t)(k * 8));
        memcpy(PyBytes_AS_STRING(bv), vals, (size_t)(k * 8));
    }
    free(cells);
    return Py_BuildValue("(NNi)", bc, bv, (int)item);
}

static int get_ints(PyObject *o, Py_buffer *v, const char *what) {
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)) return 0;
    if ((v->itemsize != 4 && v->itemsize != 8) || !v->format ||
        !strchr("ilqnILQN", v->format[strlen(v->format) - 1])) {
        PyErr_Format(PyExc_TypeError, "%s: int32 or int64 array expected", what);
        PyBuffer_Release(v);
        return 0;
    }
    return 1;
}

static int get_i64(PyObject *o, Py_buffer *v, const char *what, int writable) {
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)))
        return 0;
    if (v->itemsize != 8 || !v->format || !strchr("lqn", v->format[strlen(v->format) - 1])) {
        PyErr_Format(PyExc_TypeError, "%s: int64 array expected", what);
        PyBuffer_Release(v);
        return 0;
    }
    return 1;
}

/* The areas of one record (cells increasing, as fold and take_cells give them): each
 * ground-truth row's cells in one pass, its area summed in a register, no division per
 * cell. CT, VT: the types of cells and counts. 0 on a cell outside the matrix. */
#define AREAS(NAME, CT, VT)                                                              \
    static int NAME(const CT *cells, const VT *vals, int64_t n, int64_t c, int64_t *t,   \
                    int64_t *g, int64_t *p, int64_t *cf) {                               \
        int64_t i = 0;                                                                   \
        while (i < n) {                                                                  \
            int64_t cell = (int64_t)cells[i];                                            \
            if (cell < 0 || cell >= c * c) return 0;                                     \
            int64_t gi = cell / c, row0 = gi * c, row1 = row0 + c, sum = 0;              \
            for (; i < n; i++) {                                                         \
                cell = (int64_t)cells[i];                                                \
                if (cell < row0 || cell >= row1) break;                                  \
                int64_t v = (int64_t)vals[i];                                            \
                if (cf) cf[cell] += v;                                                   \
                p[cell - row0] += v;                                                     \
                sum += v;                                                                \
                if (cell - row0 == gi) t[gi] += v;                                       \
            }                                                                            \
            g[gi] += sum;                                                                \
        }                                                                                \
        return 1;                                                                        \
    }
AREAS(areas_32_32, int32_t, int32_t)
AREAS(areas_32_64, int32_t, int64_t)
AREAS(areas_64_32, int64_t, int32_t)
AREAS(areas_64_64, int64_t, int64_t)

/* record_areas(cells, counts, c, tp_row, gt_row, pred_row, conf): one image's class
 * areas added to the three int64 rows, its cells to conf (flat c*c int64, or empty). */
static PyObject *record_areas(PyObject *self, PyObject *args) {
    PyObject *o[6];
    long long c;
    if (!PyArg_ParseTuple(args, "OOLOOOO", &o[0], &o[1], &c, &o[2], &o[3], &o[4], &o[5]))
        return NULL;
    Py_buffer nz, w, tp, ga, pa, conf;
    if (!get_ints(o[0], &nz, "cells")) return NULL;
    if (!get_ints(o[1], &w, "counts")) goto e1;
    if (!get_i64(o[2], &tp, "tp", 1)) goto e2;
    if (!get_i64(o[3], &ga, "gt_area", 1)) goto e3;
    if (!get_i64(o[4], &pa, "pred_area", 1)) goto e4;
    if (!get_i64(o[5], &conf, "conf", 1)) goto e5;
    Py_ssize_t n = nz.len / nz.itemsize;
    int64_t ncell = conf.len / 8;
    if (w.len / w.itemsize != n || tp.len / 8 != c || ga.len / 8 != c || pa.len / 8 != c ||
        (ncell && ncell != c * c)) {
        PyErr_SetString(PyExc_ValueError, "record_areas: sizes differ");
        goto e6;
    }
    int64_t *t = (int64_t *)tp.buf, *g = (int64_t *)ga.buf, *p = (int64_t *)pa.buf;
    int64_t *cf = ncell ? (int64_t *)conf.buf : NULL;
    int ok;
    if (nz.itemsize == 4)
        ok = w.itemsize == 4 ? areas_32_32(nz.buf, w.buf, n, c, t, g, p, cf)
                             : areas_32_64(nz.buf, w.buf, n, c, t, g, p, cf);
    else
        ok = w.itemsize == 4 ? areas_64_32(nz.buf, w.buf, n, c, t, g, p, cf)
                             : areas_64_64(nz.buf, w.buf, n, c, t, g, p, cf);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "record_areas: a cell outside the matrix");
        goto e6;
    }
    PyBuffer_Release(&conf);
    PyBuffer_Release(&pa);
    PyBuffer_Release(&ga);
    PyBuffer_Release(&tp);
    PyBuffer_Release(&w);
    PyBuffer_Release(&nz);
    Py_RETURN_NONE;
e6:
    PyBuffer_Release(&conf);
e5:
    PyBuffer_Release(&pa);
e4:
    PyBuffer_Release(&ga);
e3:
    PyBuffer_Release(&tp);
e2:
    PyBuffer_Release(&w);
e1:
    PyBuffer_Release(&nz);
    return NULL;
}

static PyMethodDef METHODS[] = {
    {"count_png_pair", count_png_pair, METH_VARARGS,
     "count_png_pair(gt_path, pred_path, num_classes, ignore, reduce_zero_label)\n"
     "-> (cells, counts, itemsize): bytes of int32/int64, or None when this pair\n"
     "is not for this path (not 8-bit grey/palette PNG, malformed, shapes differ, a\n"
     "label out of range): the caller then takes the Python path."},
    {"record_areas", record_areas, METH_VARARGS,
     "record_areas(cells, counts, c, tp_row, gt_row, pred_row, conf)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_native",
                                    "segbench's compiled PNG-pair counter (no Numba).", -1,
                                    METHODS};

PyMODINIT_FUNC PyInit__native(void) {
    const uint16_t one = 1;
    if (*(const uint8_t *)&one != 1) {
        PyErr_SetString(PyExc_ImportError, "segbench.semantic._native: little-endian only");
        return NULL;
    }
    init_values();
    return PyModule_Create(&MODULE);
}
