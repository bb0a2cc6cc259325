"""Compiled decoding of the PNG files label maps are stored in.

Label maps are 8-bit grey or palette PNGs (16-bit grey for more than 256 labels), and
decoding them is most of the cost of evaluating from files: Pillow plus zlib take 0.6 ms
for a 512x512 map whose counting costs 0.05 ms. :func:`decode_label_png` decodes the
common case (non-interlaced; grey at 8 or 16 bits, palette at 8 bits) itself: the
zlib/deflate stream is inflated by a table-driven decoder that copies matches eight
bytes at a time (long runs of one value, which label maps are made of, become fills),
then the rows are unfiltered. Anything else, and any file it finds malformed, returns
``None``: the caller then decodes with Pillow, which gives its result or its message.

Where a map has no runs (every pixel its own literal), inflating is a chain of
dependent table look-ups, each code's length giving the position of the next:
:func:`decode_label_png_pair` inflates a ground truth and its prediction together, one
literal of each per step, so that two independent chains share the wait (1.6 -> 0.7 ms
for a pair of random 512x512 maps). Python's ``zlib.decompress`` was measured too: 0.95
ms for the inflate alone of such a map, against 0.8 ms here for one stream. Files are
read into per-thread buffers that are reused, and a map read for counting is decoded into
the buffer its file was read into: fresh buffers cost their page faults on every file,
and every buffer fewer stays in cache.

As zlib (so Pillow) does, the zlib trailer's Adler-32 of the inflated bytes is checked:
a file damaged where the damage still inflates (a flipped literal, say) is refused, not
read as other labels; Pillow then reads it and says what is wrong. Of the chunk CRCs,
the header's is checked (Pillow refuses a file whose header fails it); the data's are
not, as Pillow does not check them: the Adler-32 covers the data. A stream must also be
well-formed deflate that fills exactly the image's rows.
"""

from __future__ import annotations

import os
import stat
import threading

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ..compilation import prepare_kernels

prepare_kernels()

_PAD = 16  # zero bytes after the compressed data: refills read 8 bytes ahead
_LB = 10  # bits of the literal/length table's first level
_DB = 8  # bits of the distance table's first level
_SIG_HI, _SIG_LO = 0x89504E47, 0x0D0A1A0A  # the 8-byte PNG signature

# table entries (int64): bits 0-3 code length (0 = no such code), bit 4 a pointer to a
# second-level table (bits 0-3 then its index bits), bits 5-7 kind, bits 8-11 extra
# bits, bits 12- the value (literal byte, length or distance base, or table offset)
_LIT, _LEN, _END, _DIST, _BAD = 0, 1, 2, 3, 4
_LEN_BASE = np.array(
    [
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        10,
        11,
        13,
        15,
        17,
        19,
        23,
        27,
        31,
        35,
        43,
        51,
        59,
        67,
        83,
        99,
        115,
        131,
        163,
        195,
        227,
        258,
    ],
    np.int64,
)
_LEN_EXTRA = np.array(
    [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0],
    np.int64,
)
_DIST_BASE = np.array(
    [
        1,
        2,
        3,
        4,
        5,
        7,
        9,
        13,
        17,
        25,
        33,
        49,
        65,
        97,
        129,
        193,
        257,
        385,
        513,
        769,
        1025,
        1537,
        2049,
        3073,
        4097,
        6145,
        8193,
        12289,
        16385,
        24577,
    ],
    np.int64,
)
_DIST_EXTRA = np.array(
    [
        0,
        0,
        0,
        0,
        1,
        1,
        2,
        2,
        3,
        3,
        4,
        4,
        5,
        5,
        6,
        6,
        7,
        7,
        8,
        8,
        9,
        9,
        10,
        10,
        11,
        11,
        12,
        12,
        13,
        13,
    ],
    np.int64,
)
_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint8)
_CL_ORDER = np.array(
    [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15], np.int64
)


@intrinsic
def _load8(typingctx, arr, index):
    """Bytes arr[index .. index+7] as a little-endian uint64 (one unaligned load)."""

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(
            context, builder, aryty, ary, [args[1]], wraparound=False
        )
        i64 = ir.IntType(64)
        return builder.load(builder.bitcast(ptr, i64.as_pointer()), align=1)

    return types.uint64(arr, index), codegen


@intrinsic
def _store8(typingctx, arr, index, value):
    """Write the uint64 ``value`` to arr[index .. index+7] (one unaligned store)."""

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(
            context, builder, aryty, ary, [args[1]], wraparound=False
        )
        i64 = ir.IntType(64)
        builder.store(args[2], builder.bitcast(ptr, i64.as_pointer()), align=1)
        return context.get_dummy_value()

    return types.void(arr, index, types.uint64), codegen


@njit(cache=True, nogil=True)
def _crc32(buf, start, n):
    """CRC-32 of ``buf[start:start + n]`` (the PNG chunk check), a bit at a time: for
    the 17 bytes of a header, not for image data."""
    c = np.uint32(0xFFFFFFFF)
    for i in range(start, start + n):
        c ^= np.uint32(buf[i])
        for _ in range(8):
            c = (c >> np.uint32(1)) ^ (np.uint32(0xEDB88320) * (c & np.uint32(1)))
    return np.int64(c ^ np.uint32(0xFFFFFFFF))


@njit(cache=True, nogil=True)
def _be32(buf, i):
    return (
        (np.int64(buf[i]) << 24)
        | (np.int64(buf[i + 1]) << 16)
        | (np.int64(buf[i + 2]) << 8)
        | np.int64(buf[i + 3])
    )


@njit(cache=True, nogil=True)
def _build(lens, vals, table, lb):
    """Fill ``table`` for the canonical Huffman code of code lengths ``lens``; symbol s
    decodes to ``vals[s] | length``. Returns False for an over-subscribed code (an
    incomplete one leaves entries of kind _BAD and length 0: no such code)."""
    count = np.zeros(16, np.int64)
    for s in range(lens.size):
        count[lens[s]] += 1
    count[0] = 0
    left = 1
    for n in range(1, 16):
        left = 2 * left - count[n]
        if left < 0:
            return False
    nxt = np.zeros(16, np.int64)
    code = 0
    for n in range(1, 16):
        code = (code + count[n - 1]) << 1
        nxt[n] = code
    size = 1 << lb
    mask = size - 1
    # a table is built per block (nine a random 512x512 map), so only what is needed
    # is done: a complete code (every deflate code but a one-code distance table) fills
    # every entry it can reach, so only an incomplete one's are cleared first, and only
    # the entries it uses (the table has room for the longest second levels)
    complete = left == 0
    if not complete:
        table[:size] = _BAD << 5
    long_codes = 0
    for n in range(lb + 1, 16):
        long_codes += count[n]
    rev = np.empty(lens.size, np.int64)
    submax = np.zeros(size if long_codes else 0, np.int64)
    for s in range(lens.size):
        n = lens[s]
        if n == 0:
            continue
        c = nxt[n]
        nxt[n] += 1
        # deflate sends codes from their top bit: the n-bit code reversed, by bytes
        # (a bit loop here was most of building a table)
        r = ((np.int64(_REV8[c & 255]) << 8) | np.int64(_REV8[c >> 8])) >> (16 - n)
        rev[s] = r
        if n > lb:
            submax[r & mask] = max(submax[r & mask], n - lb)
    off = size
    for pre in range(submax.size):
        if submax[pre]:
            table[pre] = (off << 12) | 16 | submax[pre]
            if not complete:
                table[off : off + (1 << submax[pre])] = _BAD << 5
            off += 1 << submax[pre]
    for s in range(lens.size):
        n = lens[s]
        if n == 0:
            continue
        e = vals[s] | n
        r = rev[s]
        if n <= lb:
            for k in range(r, size, 1 << n):
                table[k] = e
        else:
            pt = table[r & mask]
            base = pt >> 12
            for k in range(r >> lb, 1 << (pt & 15), 1 << (n - lb)):
                table[base + k] = e
    return True


@njit(cache=True, nogil=True)
def _symbol_values():
    """Entry bits (kind, extra bits, value) of each literal/length and distance symbol."""
    lv = np.empty(288, np.int64)
    for s in range(256):
        lv[s] = (s << 12) | (_LIT << 5)
    lv[256] = _END << 5
    for s in range(257, 286):
        lv[s] = (_LEN_BASE[s - 257] << 12) | (_LEN_EXTRA[s - 257] << 8) | (_LEN << 5)
    lv[286] = lv[287] = _BAD << 5
    dv = np.empty(32, np.int64)
    for s in range(30):
        dv[s] = (_DIST_BASE[s] << 12) | (_DIST_EXTRA[s] << 8) | (_DIST << 5)
    dv[30] = dv[31] = _BAD << 5
    return lv, dv


_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U8 = np.uint64(8)


@njit(cache=True, nogil=True, inline="always")
def _is_literal(e):
    """A table entry of a literal: kind 0 with a code length (1..15)."""
    return np.uint64((e & 0xFF) - 1) < np.uint64(15)


_HUFF, _NEXT, _DONE, _FAIL = 0, 1, 2, 3  # where a stream is, between blocks
# a pair is inflated together when both streams compress less than this many times
# (mostly literals: random maps about 1x, blob maps 70x, where the pair's step-by-step
# alternation measured 10-20% slower than one stream after the other)
_LITERAL_HEAVY = 4


@njit(cache=True, nogil=True)
def _tables():
    """The decoding tables and their scratch for one stream (see ``_block_start``)."""
    lv, dv = _symbol_values()
    # not cleared: ``_build`` clears the entries a code uses, and only those are read
    lit = np.empty((1 << _LB) + 288 * (1 << (15 - _LB)), np.int64)
    dst = np.empty((1 << _DB) + 32 * (1 << (15 - _DB)), np.int64)
    cl = np.empty(1 << 7, np.int64)
    cl_vals = np.arange(19) << 12
    lens = np.zeros(288 + 32, np.int64)
    return lit, dst, cl, cl_vals, lens, lv, dv


@njit(cache=True, nogil=True, inline="always")
def _block_start(inp, n_in, out, n_out, bb, bc, ip, o, tabs):
    """Read a block header at the bit position (bb, bc, ip): a stored block is copied
    (state _NEXT, or _DONE if it was the last), a Huffman block's codes are built into
    ``tabs`` (state _HUFF); _FAIL for a malformed one. Returns (state, final, bb, bc,
    ip, o)."""
    lit, dst, cl, cl_vals, lens, lv, dv = tabs
    final = False
    if ip > n_in + 8:
        return _FAIL, final, bb, bc, ip, o
    bb |= _load8(inp, ip) << np.uint64(bc)
    ip += (63 - bc) >> 3
    bc |= 56
    final = bool(bb & np.uint64(1))
    btype = np.int64((bb >> np.uint64(1)) & np.uint64(3))
    bb >>= np.uint64(3)
    bc -= 3
    if btype == 0:  # stored: whole bytes, after a length
        ip -= bc >> 3  # back to the first byte not consumed
        bb = np.uint64(0)
        bc = 0
        if ip + 4 > n_in:
            return _FAIL, final, bb, bc, ip, o
        ln = np.int64(inp[ip]) | (np.int64(inp[ip + 1]) << 8)
        nln = np.int64(inp[ip + 2]) | (np.int64(inp[ip + 3]) << 8)
        if ln != (~nln & 0xFFFF) or ip + 4 + ln > n_in or o + ln > n_out:
            return _FAIL, final, bb, bc, ip, o
        out[o : o + ln] = inp[ip + 4 : ip + 4 + ln]
        o += ln
        ip += 4 + ln
        return (_DONE if final else _NEXT), final, bb, bc, ip, o
    if btype == 1:  # the fixed code
        lens[:144] = 8
        lens[144:256] = 9
        lens[256:280] = 7
        lens[280:288] = 8
        _build(lens[:288], lv, lit, _LB)
        lens[:32] = 5
        _build(lens[:32], dv, dst, _DB)
    elif btype == 2:  # a code sent in the block
        nlit = 257 + np.int64(bb & np.uint64(31))
        ndist = 1 + np.int64((bb >> np.uint64(5)) & np.uint64(31))
        ncl = 4 + np.int64((bb >> np.uint64(10)) & np.uint64(15))
        bb >>= np.uint64(14)
        bc -= 14
        if nlit > 286:
            return _FAIL, final, bb, bc, ip, o
        cl_lens = np.zeros(19, np.int64)
        for i in range(ncl):
            if bc < 3:
                bb |= _load8(inp, ip) << np.uint64(bc)
                ip += (63 - bc) >> 3
                bc |= 56
            cl_lens[_CL_ORDER[i]] = np.int64(bb & np.uint64(7))
            bb >>= np.uint64(3)
            bc -= 3
        if not _build(cl_lens, cl_vals, cl, 7):
            return _FAIL, final, bb, bc, ip, o
        i = 0
        total = nlit + ndist
        while i < total:
            if ip > n_in + 8:
                return _FAIL, final, bb, bc, ip, o
            bb |= _load8(inp, ip) << np.uint64(bc)
            ip += (63 - bc) >> 3
            bc |= 56
            e = cl[bb & np.uint64(127)]
            n = e & 15
            if n == 0:
                return _FAIL, final, bb, bc, ip, o
            bb >>= np.uint64(n)
            bc -= n
            sym = e >> 12
            if sym < 16:
                lens[i] = sym
                i += 1
                continue
            if sym == 16:
                if i == 0:
                    return _FAIL, final, bb, bc, ip, o
                val = lens[i - 1]
                rep = 3 + np.int64(bb & np.uint64(3))
                bb >>= np.uint64(2)
                bc -= 2
            elif sym == 17:
                val = 0
                rep = 3 + np.int64(bb & np.uint64(7))
                bb >>= np.uint64(3)
                bc -= 3
            else:
                val = 0
                rep = 11 + np.int64(bb & np.uint64(127))
                bb >>= np.uint64(7)
                bc -= 7
            if i + rep > total:
                return _FAIL, final, bb, bc, ip, o
            lens[i : i + rep] = val
            i += rep
        if lens[256] == 0:
            return _FAIL, final, bb, bc, ip, o
        if not _build(lens[:nlit], lv, lit, _LB):
            return _FAIL, final, bb, bc, ip, o
        if not _build(lens[nlit:total], dv, dst, _DB):
            return _FAIL, final, bb, bc, ip, o
    else:
        return _FAIL, final, bb, bc, ip, o
    return _HUFF, final, bb, bc, ip, o


@njit(cache=True, nogil=True, inline="always")
def _match(inp, n_in, out, n_out, e, bb, bc, ip, o, dst):
    """Decode the length symbol of entry ``e`` (its code already consumed), its extra
    bits and distance, and copy the match. Returns (ok, bb, bc, ip, o)."""
    x = (e >> 8) & 15
    length = (e >> 12) + np.int64(bb & np.uint64((1 << x) - 1))
    bb >>= np.uint64(x)
    bc -= x
    if bc < 28:  # after literals decoded from this refill
        bb |= _load8(inp, ip) << np.uint64(bc)
        ip += (63 - bc) >> 3
        bc |= 56
    d = dst[bb & np.uint64((1 << _DB) - 1)]
    if d & 16:
        d = dst[
            (d >> 12) + np.int64((bb >> np.uint64(_DB)) & np.uint64((1 << (d & 15)) - 1))
        ]
    n = d & 15
    if n == 0 or ((d >> 5) & 7) != _DIST:
        return False, bb, bc, ip, o
    bb >>= np.uint64(n)
    bc -= n
    x = (d >> 8) & 15
    dist = (d >> 12) + np.int64(bb & np.uint64((1 << x) - 1))
    bb >>= np.uint64(x)
    bc -= x
    if dist > o or o + length > n_out:
        return False, bb, bc, ip, o
    # unsigned indices: no negative-index handling, so the loops vectorize
    uo = np.uint64(o)
    us = np.uint64(o - dist)
    if dist >= 8:  # eight bytes at a time; may write 7 past, into room
        for k in range(_U0, np.uint64(length), _U8):
            _store8(out, uo + k, _load8(out, us + k))
    elif dist == 1:  # a run of one value: a fill
        v = out[us]
        for k in range(_U0, np.uint64(length)):
            out[uo + k] = v
    else:
        for k in range(_U0, np.uint64(length)):
            out[uo + k] = out[us + k]
    return True, bb, bc, ip, o + length


@njit(cache=True, nogil=True, inline="always")
def _block_symbols(inp, n_in, out, n_out, bb, bc, ip, o, lit, dst):
    """Decode a Huffman block's symbols up to its end. Returns (ok, bb, bc, ip, o).

    A refill gives >= 56 bits: room for three literals (at most 15 bits each) or one
    length with its distance (15 + 5 + 15 + 13)."""
    lmask = np.uint64((1 << _LB) - 1)
    while True:
        if ip > n_in + 8:
            return False, bb, bc, ip, o
        bb |= _load8(inp, ip) << np.uint64(bc)
        ip += (63 - bc) >> 3
        bc |= 56
        # the look-ups are written out: as calls, they measured 60% slower
        e = lit[bb & lmask]
        if e & 16:
            e = lit[
                (e >> 12)
                + np.int64((bb >> np.uint64(_LB)) & np.uint64((1 << (e & 15)) - 1))
            ]
        # a literal's entry has bits 4-5 clear, so e & 63 is its length: a shift
        # by it needs no masking (x86 masks shift counts to 6 bits)
        if _is_literal(e):
            if o + 3 > n_out:
                if o >= n_out:
                    return False, bb, bc, ip, o
                bb >>= np.uint64(e & 63)
                bc -= e & 63
                out[o] = np.uint8(e >> 12)
                o += 1
                continue
            bb >>= np.uint64(e & 63)
            bc -= e & 63
            out[o] = np.uint8(e >> 12)
            o += 1
            e = lit[bb & lmask]
            if e & 16:
                e = lit[
                    (e >> 12)
                    + np.int64((bb >> np.uint64(_LB)) & np.uint64((1 << (e & 15)) - 1))
                ]
            if _is_literal(e):
                bb >>= np.uint64(e & 63)
                bc -= e & 63
                out[o] = np.uint8(e >> 12)
                o += 1
                e = lit[bb & lmask]
                if e & 16:
                    e = lit[
                        (e >> 12)
                        + np.int64((bb >> np.uint64(_LB)) & np.uint64((1 << (e & 15)) - 1))
                    ]
                if _is_literal(e):
                    bb >>= np.uint64(e & 63)
                    bc -= e & 63
                    out[o] = np.uint8(e >> 12)
                    o += 1
                    continue
        n = e & 15
        kind = (e >> 5) & 7
        bb >>= np.uint64(n)
        bc -= n
        if kind == _END and n:
            return True, bb, bc, ip, o
        if kind != _LEN or n == 0:
            return False, bb, bc, ip, o
        ok, bb, bc, ip, o = _match(inp, n_in, out, n_out, e, bb, bc, ip, o, dst)
        if not ok:
            return False, bb, bc, ip, o


_ADLER_MOD = 65521
_ADLER_BLOCK = 5552  # bytes between reductions: the sums stay below 2**32 (as zlib)


@njit(cache=True, nogil=True)
def _adler32(data, n):
    """zlib's Adler-32 of ``data[:n]``: a = 1 + the bytes' sum, b = the sum of the a's,
    both mod 65521. Over a block of L bytes v_j, a += sum v_j and b += L a + sum (L - j)
    v_j: two reductions LLVM vectorises (32-bit sums, below 2**32 within a block)."""
    a = 1
    b = 0
    i = 0
    while i < n:
        m = min(_ADLER_BLOCK, n - i)
        block = data[i : i + m]  # a slice and a falling weight: vectorised, 8x faster
        s1 = np.uint32(0)
        s2 = np.uint32(0)
        weight = np.uint32(m)
        for j in range(m):
            v = np.uint32(block[j])
            s1 += v
            s2 += weight * v
            weight -= np.uint32(1)
        b = (b + m * a + np.int64(s2)) % _ADLER_MOD
        a = (a + np.int64(s1)) % _ADLER_MOD
        i += m
    return (b << 16) | a


@njit(cache=True, nogil=True, inline="always")
def _checked_end(inp, n_in, out, n_out, bc, ip, o):
    """Whether a stream that ended at ``ip``, ``bc`` filled exactly ``n_out`` bytes
    within its data, and the zlib trailer after it (the first whole byte) holds their
    Adler-32."""
    end = ip - (bc >> 3)
    if o != n_out or end < 0 or end + 4 > n_in:
        return False
    return _be32(inp, end) == _adler32(out, n_out)


@njit(cache=True, nogil=True)
def _inflate(inp, n_in, out, n_out):
    """Inflate the deflate data ``inp[:n_in]`` (a zlib stream after its 2-byte header,
    trailer included; ``_PAD`` zero bytes after it) into ``out`` (``n_out`` bytes plus 8
    spare); True when it fills exactly ``n_out`` bytes and the trailer's Adler-32
    matches them."""
    tabs = _tables()
    bb = np.uint64(0)  # bit buffer: the next bc bits of the stream, first bit lowest
    bc = 0
    ip = 0
    o = 0
    while True:
        state, final, bb, bc, ip, o = _block_start(
            inp, n_in, out, n_out, bb, bc, ip, o, tabs
        )
        if state == _FAIL:
            return False
        if state == _HUFF:
            ok, bb, bc, ip, o = _block_symbols(
                inp, n_in, out, n_out, bb, bc, ip, o, tabs[0], tabs[1]
            )
            if not ok:
                return False
        if final:
            break
    # the stream ended: it must have filled the image, within the data, checksum equal
    return _checked_end(inp, n_in, out, n_out, bc, ip, o)


@njit(cache=True, nogil=True, inline="always")
def _is_primary_literal(e):
    """A literal decoded by the first-level table alone (code of at most _LB bits):
    kind 0, no pointer (an entry without a code has kind _BAD)."""
    return (e & 0xF0) == 0


@njit(cache=True, nogil=True, inline="always")
def _both_primary_literals(ea, eb):
    """``_is_primary_literal`` of both, with one branch."""
    return ((ea | eb) & 0xF0) == 0


@njit(cache=True, nogil=True, inline="always")
def _step(inp, n_in, out, n_out, bb, bc, ip, o, lit, dst, yield_ok):
    """Decode at least one symbol of a Huffman block, and go on up to its end or, when
    ``yield_ok``, up to the next literal the first-level table decodes (left to the
    two-stream loop of ``_inflate_pair``). Returns (state, bb, bc, ip, o): _HUFF
    (stopped before such a literal), _NEXT (the block ended) or _FAIL."""
    lmask = np.uint64((1 << _LB) - 1)
    first = True
    while True:
        if ip > n_in + 8:
            return _FAIL, bb, bc, ip, o
        bb |= _load8(inp, ip) << np.uint64(bc)
        ip += (63 - bc) >> 3
        bc |= 56
        e = lit[bb & lmask]
        if yield_ok and not first and _is_primary_literal(e):
            return _HUFF, bb, bc, ip, o
        first = False
        if e & 16:
            e = lit[
                (e >> 12)
                + np.int64((bb >> np.uint64(_LB)) & np.uint64((1 << (e & 15)) - 1))
            ]
        n = e & 15
        if _is_literal(e):
            if o >= n_out:
                return _FAIL, bb, bc, ip, o
            bb >>= np.uint64(n)
            bc -= n
            out[o] = np.uint8(e >> 12)
            o += 1
            continue
        kind = (e >> 5) & 7
        bb >>= np.uint64(n)
        bc -= n
        if kind == _END and n:
            return _NEXT, bb, bc, ip, o
        if kind != _LEN or n == 0:
            return _FAIL, bb, bc, ip, o
        ok, bb, bc, ip, o = _match(inp, n_in, out, n_out, e, bb, bc, ip, o, dst)
        if not ok:
            return _FAIL, bb, bc, ip, o


@njit(cache=True, nogil=True, inline="always")
def _next_block(inp, n_in, out, n_out, state, final, bb, bc, ip, o, tabs):
    """Read block headers until a Huffman block starts or the stream is done. Returns
    (state, final, bb, bc, ip, o)."""
    while state == _NEXT:
        if final:
            return _DONE, final, bb, bc, ip, o
        state, final, bb, bc, ip, o = _block_start(
            inp, n_in, out, n_out, bb, bc, ip, o, tabs
        )
    return state, final, bb, bc, ip, o


@njit(cache=True, nogil=True)
def _inflate_pair(ia, na, oa, ma, ib, nb, ob, mb):
    """``_inflate`` of two streams at once: (ia[:na] into oa[:ma], ib[:nb] into
    ob[:mb]); True when both fill their output exactly, their checksums matching.

    Where both streams are at literals (every pixel of a map without runs), one literal
    of each is decoded per step: decoding one stream is a chain of dependent steps
    (each code's length gives the position of the next), and two independent chains
    keep the processor busy where one leaves it waiting. Everything else (matches,
    long codes, block ends) is decoded by ``_step`` one stream at a time."""
    ta = _tables()
    tb = _tables()
    lit_a, dst_a = ta[0], ta[1]
    lit_b, dst_b = tb[0], tb[1]
    lmask = np.uint64((1 << _LB) - 1)
    ba = np.uint64(0)
    ca = 0
    pa = 0
    qa = 0
    sa = _NEXT
    fa = False
    bbb = np.uint64(0)
    cb = 0
    pb = 0
    qb = 0
    sb = _NEXT
    fb = False
    while True:
        if sa == _NEXT:
            sa, fa, ba, ca, pa, qa = _next_block(ia, na, oa, ma, sa, fa, ba, ca, pa, qa, ta)
        if sb == _NEXT:
            sb, fb, bbb, cb, pb, qb = _next_block(
                ib, nb, ob, mb, sb, fb, bbb, cb, pb, qb, tb
            )
        if sa == _FAIL or sb == _FAIL:
            return False
        if sa == _DONE and sb == _DONE:
            break
        if sa == _HUFF and sb == _HUFF:
            # five literals of each per refill: at most _LB = 10 bits each, 50 <= 56.
            # Leaves at the first symbol of either that is not such a literal. The
            # bit counts take the whole entry off (libdeflate's trick): only their low
            # six bits are read here, so each literal's shift takes its count straight
            # from the entry (x86 shifts read six bits), one step less in the chain of
            # dependent look-ups that bounds this loop. Refills and outputs are counted
            # up front, so the loop tests one counter.
            rounds = min(
                (ma - qa) // 5,
                (mb - qb) // 5,
                (na + 8 - pa) // 7 + 1,
                (nb + 8 - pb) // 7 + 1,
            )
            uqa = np.uint64(qa)
            uqb = np.uint64(qb)
            done = _U0
            for _ in range(rounds):
                ba |= _load8(ia, pa) << np.uint64(ca & 63)
                pa += ((63 - ca) & 63) >> 3
                ca |= 56
                bbb |= _load8(ib, pb) << np.uint64(cb & 63)
                pb += ((63 - cb) & 63) >> 3
                cb |= 56
                k = 0
                while k < 5:
                    ea = lit_a[ba & lmask]
                    eb = lit_b[bbb & lmask]
                    if not _both_primary_literals(ea, eb):
                        break
                    ba >>= np.uint64(ea & 63)
                    ca -= ea
                    oa[uqa + done] = np.uint8(ea >> 12)
                    bbb >>= np.uint64(eb & 63)
                    cb -= eb
                    ob[uqb + done] = np.uint8(eb >> 12)
                    done += _U1
                    k += 1
                if k < 5:
                    break
            qa += np.int64(done)
            qb += np.int64(done)
            ca &= 63
            cb &= 63
        if sa == _HUFF:
            sa, ba, ca, pa, qa = _step(
                ia, na, oa, ma, ba, ca, pa, qa, lit_a, dst_a, sb != _DONE
            )
        if sb == _HUFF:
            sb, bbb, cb, pb, qb = _step(
                ib, nb, ob, mb, bbb, cb, pb, qb, lit_b, dst_b, sa != _DONE
            )
    return _checked_end(ia, na, oa, ma, ca, pa, qa) and _checked_end(
        ib, nb, ob, mb, cb, pb, qb
    )


_ONES = np.uint64(0x0101010101010101)  # a byte times this: eight copies of it


@njit(cache=True, nogil=True, inline="always")
def _paeth_by_bounds(a, b, c):
    """The Paeth predictor of left a, above b, upper-left c (int64 bytes) without its
    three distances: a unless a lies strictly between b and 3c - 2b; there the larger of
    b and c when a >= ceil((3c - b) / 2) (b >= c) or a > floor((3c - b) / 2) (b < c),
    else the smaller. Picks by masks, not selects: the compiler turns selects in a loop
    into branches, which mispredict on rows without runs. Equal to the spec's predictor
    for every triple of bytes (tests/test_png_labels.py checks all 16.7 million)."""
    x = 3 * c - 2 * b
    m = -np.int64(b <= x)
    lo = x ^ ((b ^ x) & m)
    hi = b ^ x ^ lo
    m = -np.int64(b >= c)
    big = c ^ ((b ^ c) & m)
    small = b ^ c ^ big
    t = (3 * c - b + 1 + np.int64(b < c)) >> 1
    inner = small ^ ((small ^ big) & -np.int64(a >= t))
    return a ^ ((a ^ inner) & -np.int64((a > lo) & (a < hi)))


@njit(cache=True, nogil=True, inline="always")
def _mostly_flat(img, prv, urb):
    """Whether the row at ``prv`` (``urb`` bytes) changes value at fewer than one
    pixel in eight (a vectorized count)."""
    changes = 0
    for i in range(_U1, urb):
        changes += np.int64(img[prv + i] != img[prv + i - _U1])
    return 8 * changes < np.int64(urb)


@njit(cache=True, nogil=True)
def _unfilter(raw, h, rb, bpp, img):
    """Undo the PNG row filters of ``raw`` (h rows of 1 + rb bytes) into the flat
    ``img`` (h * rb); False for an unknown filter type. Indices are unsigned (no
    negative-index handling: the None and Up loops vectorize) and the left neighbour
    stays in a register (a chain through memory would wait on every store)."""
    urb = np.uint64(rb)
    ub = np.uint64(bpp)
    for r in range(np.uint64(h)):
        src = r * (urb + _U1)
        f = raw[src]
        src += _U1
        dst = r * urb
        prv = dst - urb  # the row above (not read for row 0)
        if f == 0 or (f == 2 and r == 0):
            for i in range(urb):
                img[dst + i] = raw[src + i]
        elif f == 2:
            for i in range(urb):
                img[dst + i] = raw[src + i] + img[prv + i]
        elif f == 1 and bpp == 1:
            a = np.uint8(0)
            for i in range(urb):
                a = np.uint8(raw[src + i] + a)
                img[dst + i] = a
        elif f == 4 and bpp == 1 and r > 0 and _mostly_flat(img, prv, urb):
            a = np.int64(0)
            c = np.int64(0)
            i = _U0
            while i < urb:
                # eight pixels at once where the row above stays c over them (each
                # predictor is then a) and the filtered bytes are zero: all eight are
                # a. Inside a region of a label map, that is nearly every pixel
                if (
                    i + _U8 <= urb
                    and _load8(raw, src + i) == _U0
                    and _load8(img, prv + i) == np.uint64(c) * _ONES
                ):
                    _store8(img, dst + i, np.uint64(a) * _ONES)
                    i += _U8
                    continue
                b = np.int64(img[prv + i])
                if b == c:  # then the predictor is a: most pixels of a map
                    a = np.int64(np.uint8(raw[src + i] + a))
                else:
                    pa = abs(b - c)
                    pb = abs(a - c)
                    pc = abs(a + b - 2 * c)
                    pr = a if (pa <= pb and pa <= pc) else (b if pb <= pc else c)
                    a = np.int64(np.uint8(raw[src + i] + pr))
                img[dst + i] = a
                c = b
                i += _U1
        elif f == 4 and bpp == 1 and r > 0:
            # a row above without runs: the branch above would mispredict at half its
            # pixels (6 ns a pixel on random maps). The predictor from bounds that
            # depend on b and c only: from one pixel to the next, three compares and
            # two masked picks (the three distances and selects: 4 -> 2.1 ns a pixel)
            a = np.int64(0)
            c = np.int64(0)
            for i in range(urb):
                b = np.int64(img[prv + i])
                a = np.int64(np.uint8(raw[src + i] + _paeth_by_bounds(a, b, c)))
                img[dst + i] = a
                c = b
        elif f == 3 and bpp == 1 and r > 0:
            a = np.int64(0)
            for i in range(urb):
                a = np.int64(np.uint8(raw[src + i] + ((a + np.int64(img[prv + i])) >> 1)))
                img[dst + i] = a
        elif 1 <= f <= 4:  # 16-bit samples, Average, row 0: byte by byte
            for i in range(urb):
                left = np.int64(img[dst + i - ub]) if i >= ub else np.int64(0)
                up = np.int64(img[prv + i]) if r > 0 else np.int64(0)
                ul = np.int64(img[prv + i - ub]) if (r > 0 and i >= ub) else np.int64(0)
                if f == 1:
                    pr = left
                elif f == 2:
                    pr = up
                elif f == 3:
                    pr = (left + up) >> 1
                else:
                    pa = abs(up - ul)
                    pb = abs(left - ul)
                    pc = abs(left + up - 2 * ul)
                    pr = left if (pa <= pb and pa <= pc) else (up if pb <= pc else ul)
                img[dst + i] = np.uint8(raw[src + i] + pr)
        else:
            return False
    return True


@njit(cache=True, nogil=True)
def _parse(buf, n, max_pixels, raw, img, gather=True):
    """Check the header of the PNG file ``buf[:n]`` and gather its IDAT chunks, in
    place, into one stream buf[start:start + IDAT bytes] followed by ``_PAD`` zero
    bytes (``buf`` has ``_PAD`` bytes of room after the file). Returns (status, height,
    row bytes, bit depth, start, IDAT bytes). Status 0: ready to inflate; 1: a kind of
    PNG left to Pillow (or a malformed file: Pillow then says what is wrong); 2:
    ``raw`` or ``img`` is too small (the sizes needed are ``_sizes`` of the returned
    numbers). With ``gather`` False, nothing is moved (status 0: it would be ready)."""
    if n < 8 + 25 or _be32(buf, 0) != _SIG_HI or _be32(buf, 4) != _SIG_LO:
        return 1, 0, 0, 0, 0, 0
    if (
        _be32(buf, 8) != 13
        or buf[12] != 73
        or buf[13] != 72
        or buf[14] != 68
        or buf[15] != 82
    ):  # IHDR first, 13 bytes
        return 1, 0, 0, 0, 0, 0
    if _crc32(buf, 12, 17) != _be32(buf, 29):  # a damaged header: Pillow refuses it
        return 1, 0, 0, 0, 0, 0
    w = _be32(buf, 16)
    h = _be32(buf, 20)
    depth = np.int64(buf[24])
    ctype = np.int64(buf[25])
    if buf[26] != 0 or buf[27] != 0 or buf[28] != 0:  # compression, filter, interlace
        return 1, 0, 0, 0, 0, 0
    if not ((ctype == 0 and (depth == 8 or depth == 16)) or (ctype == 3 and depth == 8)):
        return 1, 0, 0, 0, 0, 0
    if w < 1 or h < 1 or w * h > max_pixels:
        return 1, 0, 0, 0, 0, 0
    # the IDAT chunks, gathered into one stream
    pos = 33
    total = 0
    first = -1
    seen_plte = False
    ended = False
    while pos + 12 <= n:
        ln = _be32(buf, pos)
        t0, t1, t2, t3 = buf[pos + 4], buf[pos + 5], buf[pos + 6], buf[pos + 7]
        if pos + 12 + ln > n:
            return 1, 0, 0, 0, 0, 0
        if t0 == 73 and t1 == 68 and t2 == 65 and t3 == 84:  # IDAT
            if first < 0:
                first = pos
            elif ended:
                return 1, 0, 0, 0, 0, 0  # not consecutive
            total += ln
        elif first >= 0:
            ended = True
        if t0 == 80 and t1 == 76 and t2 == 84 and t3 == 69:  # PLTE
            seen_plte = True
        if t0 == 73 and t1 == 69 and t2 == 78 and t3 == 68:  # IEND
            break
        pos += 12 + ln
    if first < 0 or total < 6 or (ctype == 3 and not seen_plte):
        return 1, 0, 0, 0, 0, 0
    bpp = depth // 8
    rb = w * bpp
    n_raw = h * (rb + 1)
    if buf.size < n + _PAD:
        return 1, 0, 0, 0, 0, 0
    if raw.size < n_raw + 8 or img.size < h * rb:
        return 2, h, rb, depth, 0, total
    if not gather:
        return 0, h, rb, depth, 0, total
    # the first chunk's data stays where it is; each later one moves down over the
    # chunk framing before it (no second buffer: one fewer to keep in cache)
    start = first + 8
    pos = first + 12 + _be32(buf, first)
    k = start + _be32(buf, first)
    while k < start + total:
        ln = _be32(buf, pos)
        # a loop, not a slice assignment: numba copies overlapping slices through a
        # temporary (and the bytes move down, so a forward copy is safe)
        src = np.uint64(pos + 8)
        dst = np.uint64(k)
        for i in range(_U0, np.uint64(ln)):
            buf[dst + i] = buf[src + i]
        k += ln
        pos += 12 + ln
    buf[k : k + _PAD] = 0
    cmf, flg = np.int64(buf[start]), np.int64(buf[start + 1])
    if (cmf & 15) != 8 or (cmf >> 4) > 7 or ((cmf << 8) | flg) % 31 or flg & 32:
        return 1, 0, 0, 0, 0, 0
    return 0, h, rb, depth, start, total


@njit(cache=True, nogil=True)
def _decode(buf, n, max_pixels, raw, img):
    """Decode the PNG file ``buf[:n]`` (overwritten) into ``img``, using ``raw`` as
    scratch: ``_parse``'s numbers, and on status 0 the pixels are img[:height * row
    bytes]."""
    r = _parse(buf, n, max_pixels, raw, img)
    status, h, rb, depth, start, total = r
    if status:
        return r
    if not _inflate(buf[start + 2 :], total - 2, raw, h * (rb + 1)):
        return 1, 0, 0, 0, 0, 0
    if not _unfilter(raw, h, rb, depth // 8, img):
        return 1, 0, 0, 0, 0, 0
    return r


@njit(cache=True, nogil=True)
def _decode_pair(buf_a, n_a, raw_a, img_a, buf_b, n_b, raw_b, img_b, max_pixels):
    """``_decode`` of two files with one ``_inflate_pair``. Returns the numbers of each
    (status 0 only when both decoded)."""
    # both checked before either is gathered in place: a file must stay as read while
    # the other's buffers are grown and the pair is tried again
    a = _parse(buf_a, n_a, max_pixels, raw_a, img_a, False)
    b = _parse(buf_b, n_b, max_pixels, raw_b, img_b, False)
    if a[0] or b[0]:
        return a, b
    a = _parse(buf_a, n_a, max_pixels, raw_a, img_a)
    b = _parse(buf_b, n_b, max_pixels, raw_b, img_b)
    if a[0] or b[0]:
        return a, b
    ha, rba, da, sa, ta = a[1], a[2], a[3], a[4], a[5]
    hb, rbb, db, sb, tb = b[1], b[2], b[3], b[4], b[5]
    fail = (1, 0, 0, 0, 0, 0)
    na, nb = ha * (rba + 1), hb * (rbb + 1)
    if _LITERAL_HEAVY * ta >= na and _LITERAL_HEAVY * tb >= nb:
        if not _inflate_pair(
            buf_a[sa + 2 :], ta - 2, raw_a, na, buf_b[sb + 2 :], tb - 2, raw_b, nb
        ):
            return fail, fail
    else:  # matches, mostly: the single-stream loop is faster at those
        if not _inflate(buf_a[sa + 2 :], ta - 2, raw_a, na):
            return fail, b
        if not _inflate(buf_b[sb + 2 :], tb - 2, raw_b, nb):
            return a, fail
    if not _unfilter(raw_a, ha, rba, da // 8, img_a):
        return fail, b
    if not _unfilter(raw_b, hb, rbb, db // 8, img_b):
        return a, fail
    return a, b


def _sizes(h, rb):
    """Sizes of (raw, img) that ``_decode`` needs for such an image."""
    return h * (rb + 1) + 8, h * rb


class _Scratch(threading.local):
    """Per-thread buffers reused from one file to the next: a fresh buffer of a few
    hundred kilobytes costs its page faults on every file (measured: a fifth of the time
    of decoding a 512x512 map, two fifths for a blob map)."""

    def __init__(self):
        self.bufs = {}

    def get(self, name, size, keep=0):
        """A uint8 buffer of at least ``size`` bytes (grown in steps, never shrunk; a
        grown one starts with the first ``keep`` bytes of the old one)."""
        b = self.bufs.get(name)
        if b is None or b.size < size:
            old = b
            b = np.empty(max(size, 2 * (0 if old is None else old.size)), np.uint8)
            if keep:
                b[:keep] = old[:keep]
            self.bufs[name] = b
        return b


_SCRATCH = _Scratch()


def read_into_scratch(path, name: str = "file") -> tuple[np.ndarray, int]:
    """(buffer, n): the n bytes of the regular file at ``path`` in this thread's buffer
    ``name``, with at least ``_PAD`` bytes of room after them (valid until the next call
    with that name on this thread); OSError as ``open`` raises it, or for anything
    that is not a regular file (opened without blocking: a FIFO does not hang)."""
    fd = os.open(
        path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    )
    with open(fd, "rb", buffering=0) as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise IsADirectoryError(f"not a regular file: {os.fspath(path)}")
        size = st.st_size
        buf = _SCRATCH.get(name, size + 1 + _PAD)
        n = fh.readinto(memoryview(buf)[: size + 1])
        if n > size:  # grew since the stat: take the rest as it comes
            rest = fh.read()
            buf = np.concatenate(
                [buf[:n], np.frombuffer(rest, np.uint8), np.zeros(_PAD, np.uint8)]
            )
            n += len(rest)
    return buf, n


@njit(cache=True, nogil=True)
def _to_uint16(img):
    """Big-endian sample pairs (H, 2W) as native uint16 (H, W)."""
    h, rb = img.shape
    out = np.empty((h, rb // 2), np.uint16)
    for r in range(h):
        for c in range(rb // 2):
            out[r, c] = (np.uint16(img[r, 2 * c]) << 8) | np.uint16(img[r, 2 * c + 1])
    return out


def decode_label_png(data, max_pixels: int, out: str | None = None) -> np.ndarray | None:
    """The (H, W) samples of a non-interlaced 8-bit grey or palette (palette indices)
    PNG as uint8, or of a 16-bit grey one as uint16; ``None`` for any other PNG, one
    above ``max_pixels`` pixels, or one this decoder finds malformed (decode those with
    Pillow).

    Parameters
    ----------
    data : bytes or (N,) uint8 ndarray
        The whole file (not modified: it is copied to a scratch buffer).
    max_pixels : int
    out : str, optional
        Name of a per-thread buffer to decode an 8-bit map into (the file is copied
        there first): the result is then a view of it, overwritten by the next use of
        that name on this thread. ``None`` (default): a new array.
    """
    src = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data
    buf = _SCRATCH.get(out or "file", src.size + _PAD)
    buf[: src.size] = src
    return decode_scratch(buf, src.size, max_pixels, out)


def decode_scratch(buf, n: int, max_pixels: int, out: str | None = None):
    """:func:`decode_label_png` of the file ``buf[:n]`` read by :func:`read_into_scratch`
    (``buf`` is overwritten): into ``buf`` itself when ``out`` names it (the file is
    not needed once inflated, and one buffer fewer stays in cache), else a new array."""
    img = buf if out is not None else np.empty(0, np.uint8)
    while True:
        status, h, rb, depth, _start, _total = _decode(
            buf, n, int(max_pixels), _SCRATCH.get("raw", 0), img
        )
        if status != 2:
            break
        n_raw, n_img = _sizes(h, rb)
        _SCRATCH.get("raw", n_raw)
        if img.size < n_img:
            if out is not None:  # the file is still unchanged: it moves with it
                buf = img = _SCRATCH.get(out, n_img, keep=n)
            else:
                img = np.empty(n_img, np.uint8)
    if status:
        return None
    pixels = img[: h * rb].reshape(h, rb)
    return pixels if depth == 8 else _to_uint16(pixels)


def decode_label_png_pair(file_a, file_b, max_pixels: int, out_a: str, out_b: str):
    """:func:`decode_label_png` of two files at once (into the per-thread buffers
    ``out_a`` and ``out_b``), whose streams are inflated together: faster where both are
    mostly literals (see ``_inflate_pair``). ``None`` unless both are decoded here:
    then decode each alone, which leaves the one that is not to Pillow.

    Parameters
    ----------
    file_a, file_b : tuple
        ``(buffer, n)`` of each file as :func:`read_into_scratch` read it into the
        per-thread buffers named ``out_a`` and ``out_b``.
    max_pixels : int
    out_a, out_b : str
        Names of those buffers: each file is decoded into its own buffer (it is not
        needed once inflated), and the results are views of them.
    """
    (buf_a, n_a), (buf_b, n_b) = file_a, file_b
    while True:
        a, b = _decode_pair(
            buf_a,
            n_a,
            _SCRATCH.get("raw", 0),
            buf_a,
            buf_b,
            n_b,
            _SCRATCH.get("raw_b", 0),
            buf_b,
            int(max_pixels),
        )
        if a[0] == 1 or b[0] == 1:
            return None
        if a[0] == 0 and b[0] == 0:
            break
        if a[0] == 2:
            n_raw, n_img = _sizes(a[1], a[2])
            _SCRATCH.get("raw", n_raw)
            buf_a = _SCRATCH.get(out_a, max(n_img, n_a + _PAD), keep=n_a)
        if b[0] == 2:
            n_raw, n_img = _sizes(b[1], b[2])
            _SCRATCH.get("raw_b", n_raw)
            buf_b = _SCRATCH.get(out_b, max(n_img, n_b + _PAD), keep=n_b)
    maps = []
    for (_status, h, rb, depth, _start, _total), img in ((a, buf_a), (b, buf_b)):
        pixels = img[: h * rb].reshape(h, rb)
        maps.append(pixels if depth == 8 else _to_uint16(pixels))
    return maps[0], maps[1]
