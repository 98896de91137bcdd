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
and the output layer (tied to the token embedding) 2*d*V per token. Embedding lookups, layer
norms, softmax and the activations are element-wise and counted as 0.

Parameters follow the published architectures exactly (BERT: Devlin et al., NAACL 2019, with
the pre-training heads; GPT-2: Radford et al., 2019, as released): every weight and bias,
tied embeddings counted once.

usage: profile_transformers.py OUTDIR
"""
import sys

# name: (kind, layers, d_model, vocabulary, positions, sequence length of a sample)
MODELS = {
    "bert-base": ("bert", 12, 768, 30522, 512, 128),
    "bert-large": ("bert", 24, 1024, 30522, 512, 128),
    "gpt2": ("gpt2", 12, 768, 50257, 1024, 1024),
    "gpt2-medium": ("gpt2", 24, 1024, 50257, 1024, 1024),
}


def rows_for(kind, layers, d, vocab, positions, seq):
    f = 4 * d
    attn_flops = seq * (2 * 3 * d * d + 2 * seq * d + 2 * seq * d + 2 * d * d)
    ffn_flops = seq * (2 * 2 * d * f)
    rows = []
    if kind == "bert":
        rows.append(("embeddings", vocab * d + positions * d + 2 * d + 2 * d, 0))
        for i in range(layers):
            # Q, K, V and output projections with biases, then the attention layer norm.
            rows.append(("layer.%d.attention" % i, 4 * d * d + 4 * d + 2 * d, attn_flops))
            rows.append(("layer.%d.ffn" % i, 2 * d * f + f + d + 2 * d, ffn_flops))
        rows.append(("pooler", d * d + d, 2 * d * d))  # the first token only
        # Masked-LM head: a dense transform and layer norm per token, the decoder tied to
        # the word embedding (its bias only); next-sentence head on the pooled token.
        rows.append(("cls.predictions", d * d + d + 2 * d + vocab,
                     seq * (2 * d * d + 2 * d * vocab)))
        rows.append(("cls.seq_relationship", 2 * d + 2, 2 * d * 2))
    else:
        rows.append(("wte+wpe", vocab * d + positions * d, 0))
        for i in range(layers):
            rows.append(("h.%d.attn" % i, 2 * d + 3 * d * d + 3 * d + d * d + d, attn_flops))
            rows.append(("h.%d.mlp" % i, 2 * d + d * f + f + f * d + d, ffn_flops))
        rows.append(("ln_f+lm_head", 2 * d, seq * 2 * d * vocab))  # head tied to wte
    return rows


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for name, spec in MODELS.items():
        rows = rows_for(*spec)
        with open("%s/%s.csv" % (sys.argv[1], name), "w") as out:
            out.write("# %s: %d layers, d_model %d, vocabulary %d, a sample = %d tokens; "
                      "FLOPs from the transformer formulas (Narayanan et al. SC'21, Kaplan et al. "
                      "2020); tools/profile_transformers.py\n"
                      % (name, spec[1], spec[2], spec[3], spec[5]))
            out.write("name,params,forward_flops\n")
            for n, p, fl in rows:
                out.write("%s,%d,%d\n" % (n, p, fl))
        print("%s: %d rows, %d parameters, %.1f GFLOPs forward per sample"
              % (name, len(rows), sum(r[1] for r in rows), sum(r[2] for r in rows) / 1e9))


if __name__ == "__main__":
    main()
