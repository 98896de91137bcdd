#!/usr/bin/env python3
"""Writes the ds_* test files that tests/test_data.c reads (run from any directory).

The IDX files are gzipped with mtime 0 and no file name, so the output is the same bytes on
every run. Pixel k of image i is (i * 53 + k * 29 + 7) % 256; the tests compute the same.
"""
import gzip
import io
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def gz(data):
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def put(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def pixels(count, rows, cols):
    return bytes((i * 53 + k * 29 + 7) % 256 for i in range(count) for k in range(rows * cols))


def images(count, rows, cols, stored=None, magic=0x803):
    head = struct.pack(">IIII", magic, count if stored is None else stored, rows, cols)
    return head + pixels(count, rows, cols)


def labels(values, stored=None, magic=0x801):
    return struct.pack(">II", magic, len(values) if stored is None else stored) + bytes(values)


LABELS = [7, 2, 9, 0, 4]

# Good pair: 5 images of 3x4, plus the same images uncompressed.
put("ds_idx_images.gz", gz(images(5, 3, 4)))
put("ds_idx_labels.gz", gz(labels(LABELS)))
put("ds_idx_images_plain.idx", images(5, 3, 4))
# Wrong magic (0x804: 4 dimensions).
put("ds_idx_bad_magic.gz", gz(images(5, 3, 4, magic=0x804)))
# Header says 5 images, the data holds 3 and a half: it ends at byte 16 + 3 * 12 + 6 = 58.
put("ds_idx_trunc_images.gz", gz(images(5, 3, 4)[: 16 + 3 * 12 + 6]))
# Header says 5 labels, the data holds 3: it ends at byte 11.
put("ds_idx_trunc_labels.gz", gz(labels(LABELS)[: 8 + 3]))
# 4 labels for 5 images.
put("ds_idx_count_labels.gz", gz(labels(LABELS[:4])))
# Label 12 (third label, byte 10) is out of range for 10 classes.
put("ds_idx_bad_label.gz", gz(labels([7, 2, 12, 0, 4])))
# An absurd header: 2^31 images.
put("ds_idx_huge.gz", gz(struct.pack(">IIII", 0x803, 1 << 31, 28, 28)))
# A compressed stream cut in half: 40 images of 8x8 random bytes (incompressible).
rng = random.Random(2385)
noisy = struct.pack(">IIII", 0x803, 40, 8, 8) + bytes(rng.randrange(256) for _ in range(40 * 64))
whole = gz(noisy)
put("ds_idx_cut.gz", whole[: len(whole) // 2])
put("ds_idx_cut_labels.gz", gz(labels([i % 10 for i in range(40)])))
# A corrupt stream: the first deflate block claims the reserved block type 3.
bad = bytearray(gz(images(5, 3, 4)))
bad[10] |= 0x06
put("ds_idx_corrupt.gz", bytes(bad))

# Junk after the gzip stream; one byte more than the header announces (plain); a second
# gzip member holding two more bytes. The data of 5 images of 3x4 ends at byte 76.
put("ds_idx_junk.gz", gz(images(5, 3, 4)) + b"junk")
put("ds_idx_extra.idx", images(5, 3, 4) + b"\x00")
put("ds_idx_two_members.gz", gz(images(5, 3, 4)) + gz(b"\x01\x02"))

# Headers that announce far more than the files hold: 2^24 images of 64x64 (64 pixels
# present) and 2^24 labels (1000 present, plain), refused before allocating 64 GiB.
put("ds_idx_claims.gz", gz(struct.pack(">IIII", 0x803, 1 << 24, 64, 64) + bytes(64)))
put("ds_idx_claims_labels.idx", struct.pack(">II", 0x801, 1 << 24) + bytes(1000))

# A Fashion-MNIST-style directory: 5 training and 3 test examples of 3x4.
os.makedirs(os.path.join(HERE, "ds_fmnist"), exist_ok=True)
put("ds_fmnist/train-images-idx3-ubyte.gz", gz(images(5, 3, 4)))
put("ds_fmnist/train-labels-idx1-ubyte.gz", gz(labels(LABELS)))
put("ds_fmnist/t10k-images-idx3-ubyte.gz", gz(images(3, 3, 4)))
put("ds_fmnist/t10k-labels-idx1-ubyte.gz", gz(labels([3, 1, 8])))

# Training images of 3x4 next to test images of 4x3: the headers disagree.
os.makedirs(os.path.join(HERE, "ds_fmnist_sizes"), exist_ok=True)
put("ds_fmnist_sizes/train-images-idx3-ubyte.gz", gz(images(5, 3, 4)))
put("ds_fmnist_sizes/train-labels-idx1-ubyte.gz", gz(labels(LABELS)))
put("ds_fmnist_sizes/t10k-images-idx3-ubyte.gz", gz(images(3, 4, 3)))
put("ds_fmnist_sizes/t10k-labels-idx1-ubyte.gz", gz(labels([3, 1, 8])))

# A directory whose training images file has junk after its gzip stream.
os.makedirs(os.path.join(HERE, "ds_fmnist_junk"), exist_ok=True)
put("ds_fmnist_junk/train-images-idx3-ubyte.gz", gz(images(5, 3, 4)) + b"junk")
put("ds_fmnist_junk/train-labels-idx1-ubyte.gz", gz(labels(LABELS)))
put("ds_fmnist_junk/t10k-images-idx3-ubyte.gz", gz(images(3, 3, 4)))
put("ds_fmnist_junk/t10k-labels-idx1-ubyte.gz", gz(labels([3, 1, 8])))

# LIBSVM files.
SVM = {
    "ds_svm_good.txt": "# labels 3, 1, 7 map to classes 1, 0, 2\n"
    "3 1:0.25 4:-1.5e2 7:3.125   # trailing comment\n"
    "1 2:7.75\n"
    "   \n"
    "7 qid:4 1:1e-3 3:2.5\n"
    "# comment only\n"
    "+1 5:-0.0625 7:8\n"
    "3.0\n"
    "1 6:4.5\r\n",
    "ds_svm_binary.txt": "-1 1:0.5 2:1.5\n+1 2:-3\n-1 3:2\n",
    "ds_svm_bad_value.txt": "1 1:0.5\n# fine so far\n2 2:abc\n",
    "ds_svm_not_ascending.txt": "1 1:0.5\n2 3:1 2:1\n",
    "ds_svm_index0.txt": "1 0:1.5\n",
    "ds_svm_missing_colon.txt": "1 1:2\n1 3:1 4 5:2\n",
    "ds_svm_too_many.txt": "1 1:2 9:1\n2 12:0.5\n",
    "ds_svm_empty.txt": "",
    "ds_svm_comments.txt": "# nothing\n\n   # but comments\n",
    "ds_svm_bad_label.txt": "1 1:1\n1.5 1:2\n",
    "ds_svm_nan.txt": "1 1:nan\n",
    "ds_svm_space_value.txt": "1 2: 3\n",
    "ds_svm_hex_value.txt": "1 1:2 3:0x10\n",
    "ds_svm_hex_label.txt": "1 1:2\n0x2 1:1\n",
    "ds_svm_one_class.txt": "4 1:0.5 2:1.5\n4 2:-3\n4 3:2\n",
}
for name, text in SVM.items():
    put(name, text.encode())
