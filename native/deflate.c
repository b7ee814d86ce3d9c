// A deflate encoder (RFC 1951) for filtered PNG rows, where zlib at level 1 with run-length matches
// (png-strips.mjs deflateBand) spends most of a band's time: the same parse (a run of a byte repeated,
// three or more, as a match at distance 1; every other byte a literal), coded with one dynamic Huffman
// block per BLOCK_BYTES of input. It ends as a sync flush does (an empty stored block, so the next band
// may follow on a byte boundary), or, for the last band, with a final block.
// Both passes work a word at a time: the parse finds where a match can start among eight bytes with
// three comparisons of words, and the coder writes two tokens' codes with one store. On a 2000x1116
// band of the bench photo (8.9 MB of rows) that took the deflate from 20.8 to 9.4 ms, for the same bytes.
#include <stdlib.h>
#include <string.h>
#include "deflate.h"

#define BLOCK_BYTES (1 << 18)
#define LITLEN_CODES 286
#define MAX_BITS 15

typedef struct {
  uint8_t *out;
  size_t pos;
  uint64_t bits;
  int count;
} BitWriter;

static inline void put_bits(BitWriter *w, uint32_t value, int n) {
  w->bits |= (uint64_t)value << w->count;
  w->count += n;
  if (w->count >= 32) {
    uint32_t v = (uint32_t)w->bits;
    w->out[w->pos] = (uint8_t)v;
    w->out[w->pos + 1] = (uint8_t)(v >> 8);
    w->out[w->pos + 2] = (uint8_t)(v >> 16);
    w->out[w->pos + 3] = (uint8_t)(v >> 24);
    w->pos += 4;
    w->bits >>= 32;
    w->count -= 32;
  }
}

/** Pads to a byte boundary and writes out what is held. */
static void flush_bits(BitWriter *w) {
  while (w->count > 0) {
    w->out[w->pos++] = (uint8_t)w->bits;
    w->bits >>= 8;
    w->count -= 8;
  }
  w->count = 0;
  w->bits = 0;
}

/** Length code (257..285) of a match length 3..258, and its extra bits. */
static uint16_t LEN_CODE[259];
static uint8_t LEN_EXTRA_BITS[259];
static uint16_t LEN_EXTRA[259];
static const uint16_t LEN_BASE[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t LEN_BITS[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};

/** Filled once when the module is loaded, before any thread can read them. */
__attribute__((constructor)) static void init_length_codes(void) {
  for (int c = 0; c < 29; c++) {
    // Code 284's range would reach 258, which is code 285's alone: 285 comes after and takes it.
    int end = c == 28 ? 259 : LEN_BASE[c] + (1 << LEN_BITS[c]);
    for (int len = LEN_BASE[c]; len < end && len <= 258; len++) {
      LEN_CODE[len] = (uint16_t)(257 + c);
      LEN_EXTRA_BITS[len] = LEN_BITS[c];
      LEN_EXTRA[len] = (uint16_t)(len - LEN_BASE[c]);
    }
  }
}

static int cmp_key(const void *a, const void *b) {
  uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
  return x < y ? -1 : x > y;
}

/**
 * Code lengths (at most max_bits) of a Huffman code for `freq`: Moffat and Katajainen's in-place
 * minimum-redundancy code, then lengths over the limit folded back as miniz does. Symbols of weight 0
 * get length 0; when only one has weight, it and one other symbol get length 1, so that the code is
 * complete (zlib refuses an incomplete code-length code).
 */
static void code_lengths(const uint32_t *freq, int n, int max_bits, uint8_t *lens) {
  uint64_t sorted[LITLEN_CODES];
  uint32_t A[LITLEN_CODES];
  int used = 0;
  memset(lens, 0, (size_t)n);
  for (int s = 0; s < n; s++)
    if (freq[s]) sorted[used++] = ((uint64_t)freq[s] << 16) | (uint64_t)s;
  if (used == 0) return;
  if (used == 1) {
    int only = (int)(sorted[0] & 0xffff);
    lens[only] = 1;
    lens[only == 0 ? 1 : 0] = 1;
    return;
  }
  qsort(sorted, (size_t)used, sizeof(uint64_t), cmp_key);
  for (int i = 0; i < used; i++) A[i] = (uint32_t)(sorted[i] >> 16);
  // Moffat & Katajainen: A ascending by weight becomes each symbol's depth.
  int root = 0, leaf = 2, next;
  A[0] += A[1];
  for (next = 1; next < used - 1; next++) {
    if (leaf >= used || A[root] < A[leaf]) {
      A[next] = A[root];
      A[root++] = (uint32_t)next;
    } else A[next] = A[leaf++];
    if (leaf >= used || (root < next && A[root] < A[leaf])) {
      A[next] += A[root];
      A[root++] = (uint32_t)next;
    } else A[next] += A[leaf++];
  }
  A[used - 2] = 0;
  for (next = used - 3; next >= 0; next--) A[next] = A[A[next]] + 1;
  int avbl = 1, depth = 0, count = 0;
  root = used - 2;
  next = used - 1;
  while (avbl > 0) {
    while (root >= 0 && (int)A[root] == depth) {
      count++;
      root--;
    }
    while (avbl > count) {
      A[next--] = (uint32_t)depth;
      avbl--;
    }
    avbl = 2 * count;
    depth++;
    count = 0;
  }
  // How many codes of each length; those over the limit folded back until the code is complete.
  int num[64] = {0};
  for (int i = 0; i < used; i++) num[A[i] < 63 ? A[i] : 63]++;
  for (int l = max_bits + 1; l < 64; l++) num[max_bits] += num[l];
  uint32_t total = 0;
  for (int l = max_bits; l > 0; l--) total += (uint32_t)num[l] << (max_bits - l);
  while (total != (1u << max_bits)) {
    num[max_bits]--;
    for (int l = max_bits - 1; l > 0; l--) {
      if (num[l]) {
        num[l]--;
        num[l + 1] += 2;
        break;
      }
    }
    total--;
  }
  // The heaviest symbols get the shortest codes.
  for (int l = 1, j = used; l <= max_bits; l++)
    for (int k = num[l]; k > 0; k--) lens[sorted[--j] & 0xffff] = (uint8_t)l;
}

/** Canonical codes for `lens`, bit-reversed for deflate's least-significant-bit-first order. */
static void canonical_codes(const uint8_t *lens, int n, uint16_t *codes) {
  int count[MAX_BITS + 1] = {0};
  uint32_t next[MAX_BITS + 2];
  for (int s = 0; s < n; s++) count[lens[s]]++;
  count[0] = 0;
  uint32_t code = 0;
  for (int l = 1; l <= MAX_BITS; l++) {
    code = (code + (uint32_t)count[l - 1]) << 1;
    next[l] = code;
  }
  for (int s = 0; s < n; s++) {
    int l = lens[s];
    if (!l) continue;
    uint32_t c = next[l]++, r = 0;
    for (int b = 0; b < l; b++) r |= ((c >> b) & 1u) << (l - 1 - b);
    codes[s] = (uint16_t)r;
  }
}

static const uint8_t CL_ORDER[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

/** One dynamic-Huffman block of tokens (a literal byte, or 256 + a match length at distance 1). */
static void write_block(BitWriter *w, const uint16_t *tokens, size_t count, const uint32_t *litFreq, int final) {
  uint8_t lens[LITLEN_CODES + 2];
  uint16_t codes[LITLEN_CODES];
  code_lengths(litFreq, LITLEN_CODES, MAX_BITS, lens);
  int hlit = LITLEN_CODES;
  while (hlit > 257 && lens[hlit - 1] == 0) hlit--;
  canonical_codes(lens, hlit, codes);
  // Two distance codes of one bit: only distance 1 (code 0) is used; a complete code every inflater takes.
  lens[hlit] = 1;
  lens[hlit + 1] = 1;
  int total = hlit + 2;
  // The code lengths, run-length coded (16: repeat the last 3-6 times, 17: 3-10 zeros, 18: 11-138 zeros).
  uint8_t cl[LITLEN_CODES + 2][2];
  int ncl = 0;
  uint32_t clFreq[19] = {0};
  for (int i = 0; i < total;) {
    int v = lens[i], run = 1;
    while (i + run < total && lens[i + run] == v) run++;
    int left = run;
    if (v == 0) {
      while (left >= 11) {
        int r = left > 138 ? 138 : left;
        cl[ncl][0] = 18, cl[ncl++][1] = (uint8_t)(r - 11), clFreq[18]++, left -= r;
      }
      if (left >= 3) cl[ncl][0] = 17, cl[ncl++][1] = (uint8_t)(left - 3), clFreq[17]++, left = 0;
    } else {
      cl[ncl][0] = (uint8_t)v, cl[ncl++][1] = 0, clFreq[v]++, left--;
      while (left >= 3) {
        int r = left > 6 ? 6 : left;
        cl[ncl][0] = 16, cl[ncl++][1] = (uint8_t)(r - 3), clFreq[16]++, left -= r;
      }
    }
    while (left-- > 0) cl[ncl][0] = (uint8_t)v, cl[ncl++][1] = 0, clFreq[v]++;
    i += run;
  }
  uint8_t clLens[19];
  uint16_t clCodes[19];
  code_lengths(clFreq, 19, 7, clLens);
  canonical_codes(clLens, 19, clCodes);
  int hclen = 19;
  while (hclen > 4 && clLens[CL_ORDER[hclen - 1]] == 0) hclen--;

  put_bits(w, final ? 1 : 0, 1);
  put_bits(w, 2, 2); // dynamic Huffman codes
  put_bits(w, (uint32_t)(hlit - 257), 5);
  put_bits(w, 1, 5); // HDIST: two distance codes
  put_bits(w, (uint32_t)(hclen - 4), 4);
  for (int i = 0; i < hclen; i++) put_bits(w, clLens[CL_ORDER[i]], 3);
  for (int i = 0; i < ncl; i++) {
    int sym = cl[i][0];
    put_bits(w, clCodes[sym], clLens[sym]);
    if (sym == 16) put_bits(w, cl[i][1], 2);
    else if (sym == 17) put_bits(w, cl[i][1], 3);
    else if (sym == 18) put_bits(w, cl[i][1], 7);
  }
  // Each token's code and its length in one word: (code | extra bits << length) << 5 | total length.
  // A match is its length code and extra bits, then distance code 0 (one bit, 0): 21 bits at most.
  uint32_t lit[256];
  for (int c = 0; c < 256; c++) lit[c] = ((uint32_t)codes[c] << 5) | lens[c];
  uint32_t match[259];
  for (int len = 3; len <= 258; len++) {
    int sym = LEN_CODE[len];
    match[len] = (((uint32_t)codes[sym] | ((uint32_t)LEN_EXTRA[len] << lens[sym])) << 5) | (uint32_t)(lens[sym] + LEN_EXTRA_BITS[len] + 1);
  }
  uint64_t bits = w->bits;
  int held = w->count;
  uint8_t *out = w->out;
  size_t pos = w->pos;
  // Fewer than 8 bits held before each pair (put_bits may leave up to 31).
  for (; held >= 8; held -= 8, bits >>= 8) out[pos++] = (uint8_t)bits;
  for (size_t t = 0; t < count; t += 2) {
    // Two tokens at a time (the second none past the end), joined before they are added to what is held.
    uint16_t t1 = tokens[t];
    uint32_t e1 = t1 < 256 ? lit[t1] : match[t1 - 256];
    uint32_t e2 = 0;
    if (t + 1 < count) {
      uint16_t t2 = tokens[t + 1];
      e2 = t2 < 256 ? lit[t2] : match[t2 - 256];
    }
    int n1 = (int)(e1 & 31);
    bits |= ((uint64_t)(e1 >> 5) | ((uint64_t)(e2 >> 5) << n1)) << held;
    held += n1 + (int)(e2 & 31);
    // Whole bytes out after every pair: at most 7 + 2 x 21 bits are held, and the word written ahead
    // of them lands in the output's slack (matte_deflate_bound), overwritten by the next.
    uint64_t word = bits;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(out + pos, &word, 8);
#else
    for (int b = 0; b < 8; b++) out[pos + b] = (uint8_t)(word >> (8 * b));
#endif
    int bytes = held >> 3;
    pos += (size_t)bytes;
    bits >>= bytes * 8;
    held &= 7;
  }
  w->bits = bits;
  w->count = held;
  w->pos = pos;
  put_bits(w, codes[256], lens[256]);
}

size_t matte_deflate_bound(size_t n) { return n + n / 4 + (n / BLOCK_BYTES + 2) * 400 + 64; }

size_t matte_deflate_rows(const uint8_t *in, size_t n, int last, uint8_t *out, Scratch *scratch) {
  uint16_t *tokens = matte_scratch(scratch, SCRATCH_DEFLATE_TOKENS, sizeof(uint16_t) * (BLOCK_BYTES + 1));
  if (!tokens) return 0;
  BitWriter w = {out, 0, 0, 0};
  size_t i = 0;
  do {
    size_t end = n - i > BLOCK_BYTES ? i + BLOCK_BYTES : n;
    uint32_t freq[LITLEN_CODES] = {0};
    // Literals are counted in four tables by position, so that a byte repeated nearby does not wait
    // for its own count to be stored; they are added up at the end of the block.
    uint32_t lits[4][256];
    memset(lits, 0, sizeof lits);
    size_t count = 0;
    while (i < end) {
      size_t run = 0;
      if (i > 0 && end - i >= 10) {
        // Where among the next eight bytes a match can start (a byte equal to the one before it and
        // to the two after it), from three comparisons of words: a zero byte of x marks such a place,
        // and the lowest byte flagged below is the first of them (a false flag only follows a true one).
        uint64_t a, b, c, d;
        memcpy(&a, in + i - 1, 8);
        memcpy(&b, in + i, 8);
        memcpy(&c, in + i + 1, 8);
        memcpy(&d, in + i + 2, 8);
        uint64_t x = (a ^ b) | (b ^ c) | (c ^ d);
        uint64_t zero = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
        if (!zero) {
          for (int k = 0; k < 8; k++) {
            uint8_t v = in[i + k];
            tokens[count + k] = v;
            lits[k & 3][v]++;
          }
          count += 8;
          i += 8;
          continue;
        }
        size_t literal = (size_t)(__builtin_ctzll(zero) >> 3);
        for (size_t k = 0; k < literal; k++) {
          uint8_t v = in[i + k];
          tokens[count + k] = v;
          lits[k & 3][v]++;
        }
        count += literal;
        i += literal;
        run = 1;
      } else {
        run = i > 0 && in[i] == in[i - 1] && i + 2 < end && in[i + 1] == in[i] && in[i + 2] == in[i];
      }
      uint8_t c = in[i];
      // A run of the byte before: three or more make a match at distance 1.
      if (run) {
        size_t max = end - i < 258 ? end - i : 258, len = 3;
        while (len + 8 <= max) {
          uint64_t word;
          memcpy(&word, in + i + len, 8);
          uint64_t diff = word ^ (0x0101010101010101ull * c);
          if (diff) {
            len += (size_t)(__builtin_ctzll(diff) >> 3);
            goto counted;
          }
          len += 8;
        }
        while (len < max && in[i + len] == c) len++;
      counted:
        tokens[count++] = (uint16_t)(256 + len);
        freq[LEN_CODE[len]]++;
        i += len;
      } else {
        tokens[count++] = c;
        freq[c]++;
        i++;
      }
    }
    for (int v = 0; v < 256; v++) freq[v] += lits[0][v] + lits[1][v] + lits[2][v] + lits[3][v];
    freq[256] = 1;
    int final = last && i >= n;
    write_block(&w, tokens, count, freq, final);
  } while (i < n);
  if (!last) {
    // An empty stored block: the stream ends on a byte boundary, as zlib's sync flush leaves it.
    put_bits(&w, 0, 3);
    flush_bits(&w);
    out[w.pos++] = 0x00;
    out[w.pos++] = 0x00;
    out[w.pos++] = 0xff;
    out[w.pos++] = 0xff;
  } else {
    flush_bits(&w);
  }
  return w.pos;
}

#define ADLER_BASE 65521u

#if defined(__SSE2__)
#include <emmintrin.h>

/**
 * 32 bytes a step: the bytes' sum (psadbw) and their sum weighted 32..1 (pmaddwd on the bytes widened to
 * 16 bits), in 32-bit lanes; at most 173 steps between reductions, so that no lane can overflow.
 */
static uint32_t adler32_sse2(uint32_t adler, const uint8_t *p, size_t n) {
  uint32_t a = adler & 0xffff, b = adler >> 16;
  const __m128i zero = _mm_setzero_si128();
  const __m128i w0 = _mm_setr_epi16(32, 31, 30, 29, 28, 27, 26, 25), w1 = _mm_setr_epi16(24, 23, 22, 21, 20, 19, 18, 17);
  const __m128i w2 = _mm_setr_epi16(16, 15, 14, 13, 12, 11, 10, 9), w3 = _mm_setr_epi16(8, 7, 6, 5, 4, 3, 2, 1);
  while (n >= 32) {
    size_t steps = n / 32 > 173 ? 173 : n / 32;
    n -= steps * 32;
    __m128i sum = zero, before = zero, weighted = zero;
    for (size_t k = 0; k < steps; k++, p += 32) {
      __m128i x = _mm_loadu_si128((const __m128i *)p), y = _mm_loadu_si128((const __m128i *)(p + 16));
      before = _mm_add_epi32(before, sum);
      sum = _mm_add_epi32(sum, _mm_add_epi32(_mm_sad_epu8(x, zero), _mm_sad_epu8(y, zero)));
      weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpacklo_epi8(x, zero), w0));
      weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpackhi_epi8(x, zero), w1));
      weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpacklo_epi8(y, zero), w2));
      weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpackhi_epi8(y, zero), w3));
    }
    uint32_t s[4], bf[4], wt[4];
    _mm_storeu_si128((__m128i *)s, sum);
    _mm_storeu_si128((__m128i *)bf, before);
    _mm_storeu_si128((__m128i *)wt, weighted);
    uint64_t bb = (uint64_t)b + (uint64_t)a * 32 * steps + 32 * ((uint64_t)bf[0] + bf[1] + bf[2] + bf[3]) + ((uint64_t)wt[0] + wt[1] + wt[2] + wt[3]);
    a = (uint32_t)(((uint64_t)a + s[0] + s[1] + s[2] + s[3]) % ADLER_BASE);
    b = (uint32_t)(bb % ADLER_BASE);
  }
  while (n--) {
    a += *p++;
    b += a;
  }
  return ((b % ADLER_BASE) << 16) | (a % ADLER_BASE);
}
#endif

uint32_t matte_adler32(uint32_t adler, const uint8_t *p, size_t n) {
#if defined(__SSE2__)
  return adler32_sse2(adler, p, n);
#else
  uint32_t a = adler & 0xffff, b = adler >> 16;
  while (n > 0) {
    size_t k = n < 5552 ? n : 5552;
    n -= k;
    while (k >= 16) {
      for (int j = 0; j < 16; j++) {
        a += p[j];
        b += a;
      }
      p += 16;
      k -= 16;
    }
    while (k--) {
      a += *p++;
      b += a;
    }
    a %= ADLER_BASE;
    b %= ADLER_BASE;
  }
  return (b << 16) | a;
#endif
}
