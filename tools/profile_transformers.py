#!/usr/bin/env python3
"""Writes hetsim profiles for BERT and GPT-2 from the standard transformer FLOP formulas.

A sample is one sequence of SEQ tokens. Per token, one transformer layer of width d with a
feed-forward width f = 4d does, counting the matrix products at 2 FLOPs per multiply-add
(Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM", SC'21, section 5.1: 24 B s h^2 + 4 B s^2 h per layer; Kaplan et al., "Scaling
Laws for Neural Language Models", 2020, table 1):
    attention:    QKV projections 2*3*d^2, scores 2*SEQ*d, weighted values 2*SEQ*d,
                  output projection 2*d^2
    feed-forward: 2*2*d*f
and the output layer (tied to the token embedding) 2*d*V per token it predicts. Embedding
lookups, layer norms, softmax and the activations are element-wise and counted as 0.

Parameters follow the published architectures exactly (BERT: Devlin et al., NAACL 2019, with
the pre-training heads; GPT-2: Radford et al., 2019, as released): every weight and bias,
tied embeddings counted once.

Kinds and bytes follow tools/profile_rules.py: a row's forward_bytes are what its weight
products (the linear layers) read and write, its elementwise_bytes what the rest of its block
does (the operations of an eager PyTorch implementation, which run outside the linear
modules), at 4 bytes a float, per sample. Per token, with h heads (elements; dropout writes a
one-byte mask, 1/4 of an element):
    attention, linear:  QKV 4d, output 2d
    attention, rest:    scores 2d + h*SEQ, weighted values h*SEQ + 2d (products of 64-wide
                        heads, memory-bound on tensor cores); scale, mask, softmax 2 h*SEQ
                        each, dropout 2.25 h*SEQ; output dropout 2.25d, residual addition
                        3d, layer norm 2d
    feed-forward:       linear 5d each; GELU 8d, dropout 2.25d, addition 3d, norm 2d
    embeddings:         lookups 2d each; additions 3d each, norm 2d, dropout 2.25d
    output layer:       d + V a predicted token; its loss (log-softmax) 2V, its norm 2d
(BERT's masked-LM head transforms each predicted token first: a d x d product, GELU and
norm).

Two variants follow how a training script runs these operations:
  --fused     each chain of element-wise and normalization operations between two products
              is one kernel reading the chain's inputs and writing its outputs, as a model
              scripted with TorchScript's NVFuser runs them (NVIDIA DeepLearningExamples'
              BERT pre-training, run_pretraining.py): scale, mask, softmax and dropout read
              h*SEQ and write 1.25 h*SEQ (2.25 h*SEQ for 8.25); dropout, residual addition
              and norm 3.25d (for 7.25d); the embeddings' additions, norm and dropout 4.25d;
              the head's GELU and norm 2d.
  --autocast  mixed precision under torch.autocast, which runs softmax, layer norm and the
              loss in FP32 (PyTorch's autocast op reference) and so keeps the residual stream
              in FP32: those operations' FP32 elements count twice (hetsim halves every byte
              at a 16-bit precision: this profile is for fp16 or bf16 runs only), and each
              cast between the two is an operation of its own (reading a 16-bit element and
              writing an FP32 one, or the reverse: 3 units). Per token: softmax's input cast
              3 h*SEQ, softmax 4 h*SEQ, dropout 4.5 h*SEQ, the cast back 3 h*SEQ; each norm
              4d and the cast of its output for the next product 3d; each residual addition
              5d; the embeddings' operations and the loss (a cast 3V, log-softmax 4V) in FP32.

usage: profile_transformers.py OUTDIR                 the four shipped profiles
       profile_transformers.py OUTDIR MODEL NAME [--seq N] [--masked M] [--head squad]
                               [--fused | --autocast]
         MODEL (bert-base, bert-large, gpt2, gpt2-medium) as a sample of N tokens (default
         the model's), BERT's masked-LM head on M predicted tokens of each sequence (as
         BERT's pre-training computes it: 20 of 128 in Devlin et al.; default every token),
         or with SQuAD's span head in place of the pre-training heads; written to NAME.csv.
"""
import argparse
import sys

COLUMNS = ("name", "params", "forward_flops", "kind", "forward_bytes", "elementwise_bytes")

# name: (kind, layers, d_model, heads, vocabulary, positions, sequence length of a sample)
MODELS = {
    "bert-base": ("bert", 12, 768, 12, 30522, 512, 128),
    "bert-large": ("bert", 24, 1024, 16, 30522, 512, 128),
    "gpt2": ("gpt2", 12, 768, 12, 50257, 1024, 1024),
    "gpt2-medium": ("gpt2", 24, 1024, 16, 50257, 1024, 1024),
}


def row(name, params, flops, kind, products, rest, seq):
    """A profile row; products and rest are elements per token, written as bytes a sample."""
    return (name, params, flops, kind, round(4 * products * seq), round(4 * rest * seq))


# How the element-wise operations run: one kernel each (eager), chains fused, or eager under
# torch.autocast (the module docstring).
EAGER, FUSED, AUTOCAST = "eager", "fused", "autocast"


def block_rows(prefix, names, d, heads, seq, attn_params, ffn_params, style=EAGER):
    f = 4 * d
    hs = heads * seq
    attn_flops = seq * (2 * 3 * d * d + 2 * seq * d + 2 * seq * d + 2 * d * d)
    ffn_flops = seq * (2 * 2 * d * f)
    attn_products = 4 * d + 2 * d
    ffn_products = (d + f) + (f + d)
    if style == FUSED:
        attn_rest = (2 * d + hs) + (hs + 2 * d) + 2.25 * hs + 3.25 * d
        ffn_rest = 2 * f + 3.25 * d
    else:
        attn_rest = ((2 * d + hs) + (hs + 2 * d) + 3 * 2 * hs + 2.25 * hs + 2.25 * d + 3 * d
                     + 2 * d)
        ffn_rest = 2 * f + 2.25 * d + 3 * d + 2 * d
    if style == AUTOCAST:
        # Softmax (its input cast 3, itself 4 for 2), dropout (4.5 for 2.25), the cast back 3;
        # the norm (4 for 2) and its output's cast 3; the addition (5 for 3).
        attn_rest += 3 * hs + 2 * hs + 2.25 * hs + 3 * hs + 2 * d + 3 * d + 2 * d
        ffn_rest += 2 * d + 3 * d + 2 * d
    return [row(prefix + names[0], attn_params, attn_flops, "matmul", attn_products, attn_rest,
                seq),
            row(prefix + names[1], ffn_params, ffn_flops, "matmul", ffn_products, ffn_rest, seq)]


def bert_rows(layers, d, heads, vocab, positions, seq, masked, head, style=EAGER):
    f = 4 * d
    # The embeddings: three lookups, two additions, norm and dropout (fused: one kernel; under
    # autocast all in FP32, twice, and the norm's output cast).
    lookups, rest = 3 * 2 * d, 2 * 3 * d + 2 * d + 2.25 * d
    if style == FUSED:
        rest = 3 * d + 1.25 * d
    elif style == AUTOCAST:
        lookups, rest = 2 * lookups, 2 * rest + 3 * d
    rows = [row("embeddings", vocab * d + positions * d + 2 * d + 2 * d, 0, "embedding",
                lookups, rest, seq)]
    for i in range(layers):
        # Q, K, V and output projections with biases, then the attention layer norm.
        rows += block_rows("layer.%d." % i, ("attention", "ffn"), d, heads, seq,
                           4 * d * d + 4 * d + 2 * d, 2 * d * f + f + d + 2 * d, style)
    if head == "squad":
        rows.append(row("qa_outputs", 2 * d + 2, seq * 2 * d * 2, "matmul", d + 2, 2 * 2 / seq,
                        seq))
        return rows
    m = seq if masked is None else masked
    rows.append(row("pooler", d * d + d, 2 * d * d, "matmul", 2 * d / seq, 2 * d / seq, seq))
    # Masked-LM head: a dense transform and layer norm per predicted token, the decoder tied
    # to the word embedding (its bias only); next-sentence head on the pooled token.
    gather = 0 if masked is None else 2 * d
    transform, loss = 2 * d + 2 * d, 2 * vocab
    if style == FUSED:
        transform = 2 * d
    elif style == AUTOCAST:
        transform, loss = 2 * d + 4 * d + 3 * d, 3 * vocab + 4 * vocab
    rows.append(row("cls.predictions", d * d + d + 2 * d + vocab,
                    m * (2 * d * d + 2 * d * vocab), "matmul", m * (2 * d + d + vocab) / seq,
                    m * (gather + transform + loss) / seq, seq))
    rows.append(row("cls.seq_relationship", 2 * d + 2, 2 * d * 2, "matmul", (d + 2) / seq,
                    0, seq))
    return rows


def gpt2_rows(layers, d, heads, vocab, positions, seq, style=EAGER):
    f = 4 * d
    lookups, rest, final = 2 * 2 * d, 3 * d + 2.25 * d, 2 * d + 2 * vocab
    if style == FUSED:
        rest, final = 2 * d + 1.25 * d, 2 * d + 2 * vocab
    elif style == AUTOCAST:
        lookups, rest, final = 2 * lookups, 2 * rest, 4 * d + 3 * d + 3 * vocab + 4 * vocab
    rows = [row("wte+wpe", vocab * d + positions * d, 0, "embedding", lookups, rest, seq)]
    for i in range(layers):
        rows += block_rows("h.%d." % i, ("attn", "mlp"), d, heads, seq,
                           2 * d + 3 * d * d + 3 * d + d * d + d, 2 * d + d * f + f + f * d + d,
                           style)
    rows.append(row("ln_f+lm_head", 2 * d, seq * 2 * d * vocab, "matmul", d + vocab, final,
                    seq))  # head tied to wte
    return rows


def rows_for(kind, layers, d, heads, vocab, positions, seq, masked=None, head="pretraining",
             style=EAGER):
    if kind == "bert":
        return bert_rows(layers, d, heads, vocab, positions, seq, masked, head, style)
    return gpt2_rows(layers, d, heads, vocab, positions, seq, style)


def write(path, title, rows):
    with open(path, "w") as out:
        out.write(title + "; tools/profile_transformers.py\n")
        out.write(",".join(COLUMNS) + "\n")
        for r in rows:
            out.write(",".join(str(v) for v in r) + "\n")


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("outdir")
    ap.add_argument("model", nargs="?", choices=sorted(MODELS))
    ap.add_argument("name", nargs="?")
    ap.add_argument("--seq", type=int)
    ap.add_argument("--masked", type=int)
    ap.add_argument("--head", choices=("pretraining", "squad"), default="pretraining")
    how = ap.add_mutually_exclusive_group()
    how.add_argument("--fused", dest="style", action="store_const", const=FUSED, default=EAGER)
    how.add_argument("--autocast", dest="style", action="store_const", const=AUTOCAST)
    a = ap.parse_args()
    if (a.model is None) != (a.name is None):
        ap.error("give both MODEL and NAME, or neither")
    if a.model is not None and a.head == "squad" and MODELS[a.model][0] != "bert":
        ap.error("--head squad is BERT's")
    todo = [(n, n, None, None, "pretraining") for n in MODELS] if a.model is None else \
        [(a.model, a.name, a.seq, a.masked, a.head)]
    for model, name, seq, masked, head in todo:
        kind, layers, d, heads, vocab, positions, seq0 = MODELS[model]
        seq = seq or seq0
        rows = rows_for(kind, layers, d, heads, vocab, positions, seq, masked, head, a.style)
        what = "" if name == model or kind != "bert" else ", with %s%s" % (
            "SQuAD's span head" if head == "squad" else "the pre-training heads",
            "" if masked is None else " (masked-LM on %d tokens a sequence)" % masked)
        what += {EAGER: "", FUSED: ", element-wise chains fused (--fused)",
                 AUTOCAST: ", under torch.autocast: for fp16 or bf16 runs (--autocast)"}[a.style]
        write("%s/%s.csv" % (a.outdir, name),
              "# %s: %d layers, d_model %d, %d heads, vocabulary %d, a sample = %d tokens%s; "
              "FLOPs from the transformer formulas (Narayanan et al. SC'21, Kaplan et al. 2020)"
              % (model, layers, d, heads, vocab, seq, what), rows)
        print("%s: %d rows, %d parameters, %.1f GFLOPs and %.1f MB forward per sample"
              % (name, len(rows), sum(r[1] for r in rows), sum(r[2] for r in rows) / 1e9,
                 sum(r[4] + r[5] for r in rows) / 1e6))


if __name__ == "__main__":
    sys.exit(main())
