/* Data sets: IDX and LIBSVM readers (good files and one malformed file per error), the real
 * Fashion-MNIST when installed, synthetic clusters, partitions and the minibatch sampler.
 *
 * The ds_* files in tests/data are written by tests/data/ds_make.py; pixel k of image i in
 * the IDX files is (i * 53 + k * 29 + 7) % 256. Paths are relative to the source root
 * unless HETSIM_TEST_DATA names the directory. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "models/data.h"
#include "sim/rng.h"
#include "suite.h"

#ifndef HETSIM_TEST_DATA
#define HETSIM_TEST_DATA "tests/data"
#endif
#define D HETSIM_TEST_DATA "/"

static const uint8_t IDX_LABELS[5] = { 7, 2, 9, 0, 4 };

static gsl_rng *rng(uint64_t root, uint64_t stream)
{
    gsl_rng *r = sim_rng_create(sim_rng_seed(root, stream));
    ck_assert_ptr_nonnull(r);
    return r;
}

/* Checks the code and the whole formatted message ("file: message"). */
static void expect_err(const sim_err *err, int code, const char *text)
{
    char buf[800];
    sim_err_format(err, buf, sizeof(buf));
    ck_assert_str_eq(buf, text);
    ck_assert_int_eq(err->code, code);
}

static void expect_empty(const data_set *ds)
{
    ck_assert_ptr_null(ds->x);
    ck_assert_ptr_null(ds->y);
    ck_assert_uint_eq(ds->n, 0);
}

static float pixel(size_t i, size_t k)
{
    return (float)((i * 53 + k * 29 + 7) % 256) / 255.0f;
}

/* Number of rows whose features differ from the IDX formula, and labels from IDX_LABELS. */
static size_t idx_mismatches(const data_set *ds)
{
    size_t bad = 0;
    for (size_t i = 0; i < ds->n; i++) {
        bad += ds->y[i] != IDX_LABELS[i];
        for (size_t k = 0; k < ds->dim; k++)
            bad += ds->x[i * ds->dim + k] != pixel(i, k); /* exact: the same division */
    }
    return bad;
}

/* ---- IDX ---- */

START_TEST(idx_pair_reads_back_exactly)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_idx(D "ds_idx_images.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_OK);
    ck_assert_uint_eq(ds.n, 5);
    ck_assert_uint_eq(ds.dim, 12);
    ck_assert_uint_eq(ds.c, 1);
    ck_assert_uint_eq(ds.h, 3);
    ck_assert_uint_eq(ds.w, 4);
    ck_assert_uint_eq(ds.classes, 10);
    ck_assert_ptr_null(ds.label_value);
    ck_assert_uint_eq((uintptr_t)ds.x % 64, 0);
    ck_assert_uint_eq(idx_mismatches(&ds), 0);
    data_fini(&ds);
    expect_empty(&ds);
    data_fini(&ds); /* twice is harmless */
}
END_TEST

START_TEST(idx_reads_uncompressed_files_and_stops_at_max_samples)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(
        data_load_idx(D "ds_idx_images_plain.idx", D "ds_idx_labels.gz", 10, 2, &ds, &err), SIM_OK);
    ck_assert_uint_eq(ds.n, 2);
    ck_assert_uint_eq(idx_mismatches(&ds), 0);
    data_fini(&ds);
}
END_TEST

START_TEST(fashion_loader_picks_train_or_test_files_from_a_directory)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_fashion_mnist(D "ds_fmnist", true, 0, &ds, &err), SIM_OK);
    ck_assert_uint_eq(ds.n, 5);
    ck_assert_uint_eq(idx_mismatches(&ds), 0);
    data_fini(&ds);
    ck_assert_int_eq(data_load_fashion_mnist(D "ds_fmnist", false, 0, &ds, &err), SIM_OK);
    ck_assert_uint_eq(ds.n, 3);
    ck_assert_uint_eq(ds.y[0], 3);
    ck_assert_uint_eq(ds.y[1], 1);
    ck_assert_uint_eq(ds.y[2], 8);
    data_fini(&ds);
}
END_TEST

START_TEST(idx_wrong_magic_is_named_with_file_and_offset)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_idx(D "ds_idx_bad_magic.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EINVAL);
    expect_err(&err, SIM_EINVAL,
               D "ds_idx_bad_magic.gz: bad magic number 0x00000804 at byte 0, expected "
                 "0x00000803 (IDX images of unsigned bytes, 3 dimensions)");
    expect_empty(&ds);
    /* a labels file given as images */
    ck_assert_int_eq(data_load_idx(D "ds_idx_labels.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EIO);
    expect_err(&err, SIM_EIO,
               D "ds_idx_labels.gz: truncated at byte 13 while reading the 16-byte images "
                 "header (13 of 16 bytes)");
}
END_TEST

START_TEST(idx_truncated_images_report_where_the_data_ran_out)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(
        data_load_idx(D "ds_idx_trunc_images.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err), SIM_EIO);
    expect_err(&err, SIM_EIO,
               D "ds_idx_trunc_images.gz: truncated at byte 58 while reading pixels (42 of 60 "
                 "bytes)");
    expect_empty(&ds);
    /* the first three images are complete: asking for them succeeds */
    ck_assert_int_eq(
        data_load_idx(D "ds_idx_trunc_images.gz", D "ds_idx_labels.gz", 10, 3, &ds, &err), SIM_OK);
    ck_assert_uint_eq(idx_mismatches(&ds), 0);
    data_fini(&ds);
}
END_TEST

START_TEST(idx_truncated_labels_report_where_the_data_ran_out)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(
        data_load_idx(D "ds_idx_images.gz", D "ds_idx_trunc_labels.gz", 10, 0, &ds, &err), SIM_EIO);
    expect_err(&err, SIM_EIO,
               D "ds_idx_trunc_labels.gz: truncated at byte 11 while reading labels (3 of 5 "
                 "bytes)");
    expect_empty(&ds);
}
END_TEST

START_TEST(idx_count_mismatch_names_both_files)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(
        data_load_idx(D "ds_idx_images.gz", D "ds_idx_count_labels.gz", 10, 0, &ds, &err),
        SIM_EINVAL);
    expect_err(&err, SIM_EINVAL,
               D "ds_idx_count_labels.gz: label count 4 at byte 4 does not match the 5 images "
                 "of " D "ds_idx_images.gz");
    expect_empty(&ds);
}
END_TEST

START_TEST(idx_label_out_of_range_is_named_with_its_offset)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_idx(D "ds_idx_images.gz", D "ds_idx_bad_label.gz", 10, 0, &ds, &err),
                     SIM_EINVAL);
    expect_err(&err, SIM_EINVAL, D "ds_idx_bad_label.gz: label 12 at byte 10 is out of range 0..9");
    expect_empty(&ds);
    /* with 13 classes the same file is fine */
    ck_assert_int_eq(data_load_idx(D "ds_idx_images.gz", D "ds_idx_bad_label.gz", 13, 0, &ds, &err),
                     SIM_OK);
    ck_assert_uint_eq(ds.y[2], 12);
    data_fini(&ds);
}
END_TEST

START_TEST(idx_absurd_header_is_refused_before_allocating)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_idx(D "ds_idx_huge.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EINVAL);
    expect_err(&err, SIM_EINVAL,
               D "ds_idx_huge.gz: image count 2147483648 at byte 4 is out of range 1..16777216");
    expect_empty(&ds);
}
END_TEST

START_TEST(idx_header_announcing_more_than_the_file_holds_is_refused_before_allocating)
{
    data_set ds;
    sim_err err = { 0 };
    char buf[800];
    ck_assert_int_eq(
        data_load_idx(D "ds_idx_claims.gz", D "ds_idx_claims_labels.idx", 10, 200000, &ds, &err),
        SIM_EIO);
    expect_err(&err, SIM_EIO,
               D "ds_idx_claims_labels.idx: truncated: the header announces 200008 bytes of "
                 "labels, more than a file of 1008 bytes can hold");
    expect_empty(&ds);
    /* 1000 labels are there, but not 1000 images of 64x64: at most 1032 bytes a gzip byte */
    ck_assert_int_eq(
        data_load_idx(D "ds_idx_claims.gz", D "ds_idx_claims_labels.idx", 10, 1000, &ds, &err),
        SIM_EIO);
    sim_err_format(&err, buf, sizeof(buf));
    const char *head = D "ds_idx_claims.gz: truncated: the header announces 4096016 bytes of "
                         "pixels, more than a gzip file of ";
    ck_assert_msg(strncmp(buf, head, strlen(head)) == 0, "%s", buf);
    expect_empty(&ds);
}
END_TEST

START_TEST(idx_cut_or_corrupt_gzip_streams_give_zlib_errors)
{
    data_set ds;
    sim_err err = { 0 };
    char buf[800];
    /* the header decodes; the pixels run into the cut, somewhere past byte 16 */
    ck_assert_int_eq(data_load_idx(D "ds_idx_cut.gz", D "ds_idx_cut_labels.gz", 10, 0, &ds, &err),
                     SIM_EIO);
    sim_err_format(&err, buf, sizeof(buf));
    const char *head = D "ds_idx_cut.gz: truncated at byte ";
    ck_assert_int_eq(strncmp(buf, head, strlen(head)), 0);
    ck_assert_ptr_nonnull(strstr(buf, " while reading pixels ("));
    ck_assert_ptr_nonnull(strstr(buf, "; zlib: unexpected end of file)"));
    expect_empty(&ds);
    ck_assert_int_eq(data_load_idx(D "ds_idx_corrupt.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EIO);
    expect_err(&err, SIM_EIO,
               D "ds_idx_corrupt.gz: corrupt gzip data near byte 0 while reading the 16-byte "
                 "images header (zlib: invalid block type)");
    expect_empty(&ds);
    ck_assert_int_eq(data_load_idx(D "ds_nonexistent.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EIO);
    expect_err(&err, SIM_EIO, D "ds_nonexistent.gz: cannot open: No such file or directory");
}
END_TEST

START_TEST(idx_refuses_bytes_after_the_data_or_after_the_gzip_stream)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_idx(D "ds_idx_junk.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EINVAL);
    expect_err(&err, SIM_EINVAL,
               D "ds_idx_junk.gz: unexpected bytes after the end of the gzip stream (the data "
                 "ends at byte 76)");
    expect_empty(&ds);
    ck_assert_int_eq(data_load_idx(D "ds_idx_extra.idx", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EINVAL);
    expect_err(&err, SIM_EINVAL,
               D "ds_idx_extra.idx: more data after byte 76 than the header announces");
    ck_assert_int_eq(
        data_load_idx(D "ds_idx_two_members.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
        SIM_EINVAL);
    expect_err(&err, SIM_EINVAL,
               D "ds_idx_two_members.gz: unexpected bytes after the end of the gzip stream (the "
                 "data ends at byte 76)");
    /* the labels file is checked too */
    ck_assert_int_eq(data_load_idx(D "ds_idx_images.gz", D "ds_idx_junk.gz", 10, 0, &ds, &err),
                     SIM_EINVAL);
    expect_err(&err, SIM_EINVAL,
               D "ds_idx_junk.gz: bad magic number 0x00000803 at byte 0, expected 0x00000801 "
                 "(IDX labels of unsigned bytes, 1 dimension)");
    /* a file read only in part (max_samples) is not read to its end */
    ck_assert_int_eq(data_load_idx(D "ds_idx_junk.gz", D "ds_idx_labels.gz", 10, 4, &ds, &err),
                     SIM_OK);
    ck_assert_uint_eq(idx_mismatches(&ds), 0);
    data_fini(&ds);
}
END_TEST

START_TEST(fashion_probe_reads_the_four_headers_and_refuses_disagreeing_sizes)
{
    data_idx_shape train, test;
    sim_err err = { 0 };
    ck_assert_int_eq(data_probe_fashion_mnist(D "ds_fmnist", &train, &test, &err), SIM_OK);
    ck_assert_uint_eq(train.count, 5);
    ck_assert_uint_eq(train.rows, 3);
    ck_assert_uint_eq(train.cols, 4);
    ck_assert_uint_eq(test.count, 3);
    ck_assert_uint_eq(test.rows, 3);
    ck_assert_uint_eq(test.cols, 4);
    ck_assert_int_eq(data_probe_fashion_mnist(D "ds_fmnist_sizes", &train, &test, &err),
                     SIM_EINVAL);
    expect_err(&err, SIM_EINVAL,
               D "ds_fmnist_sizes/t10k-images-idx3-ubyte.gz: image size 4x3 at byte 8 does not "
                 "match the 3x4 images of " D "ds_fmnist_sizes/train-images-idx3-ubyte.gz");
    ck_assert_int_eq(data_probe_fashion_mnist(D "ds_nonexistent", &train, &test, &err), SIM_EIO);
    expect_err(&err, SIM_EIO,
               D "ds_nonexistent/train-images-idx3-ubyte.gz: cannot open: No such file or "
                 "directory");
}
END_TEST

START_TEST(real_fashion_mnist_has_the_known_shape_and_first_label)
{
    if (access(DATA_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz", R_OK) != 0) {
        fprintf(stderr, "skipped: %s is not installed\n", DATA_FASHION_MNIST_DIR);
        return;
    }
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_fashion_mnist(NULL, true, 0, &ds, &err), SIM_OK);
    ck_assert_uint_eq(ds.n, 60000);
    ck_assert_uint_eq(ds.h, 28);
    ck_assert_uint_eq(ds.w, 28);
    ck_assert_uint_eq(ds.dim, 784);
    ck_assert_uint_eq(ds.classes, 10);
    ck_assert_uint_eq(ds.y[0], 9); /* "Ankle boot" */
    size_t counts[10] = { 0 }, pixel_sum = 0, out_of_range = 0;
    for (size_t i = 0; i < ds.n; i++)
        counts[ds.y[i] < 10 ? ds.y[i] : 0] += ds.y[i] < 10;
    for (size_t k = 0; k < 784; k++)
        pixel_sum += (size_t)lround((double)ds.x[k] * 255.0);
    for (size_t i = 0; i < ds.n * ds.dim; i++)
        out_of_range += !(ds.x[i] >= 0.0f && ds.x[i] <= 1.0f);
    ck_assert_uint_eq(out_of_range, 0);
    ck_assert_uint_eq(pixel_sum, 76247); /* bytes of the first image, summed with Python */
    for (size_t c = 0; c < 10; c++)
        ck_assert_uint_eq(counts[c], 6000); /* the set is balanced */
    data_fini(&ds);
    ck_assert_int_eq(data_load_fashion_mnist(NULL, false, 0, &ds, &err), SIM_OK);
    ck_assert_uint_eq(ds.n, 10000);
    ck_assert_uint_eq(ds.dim, 784);
    ck_assert_uint_eq(ds.y[0], 9);
    data_fini(&ds);
}
END_TEST

/* ---- LIBSVM ---- */

START_TEST(libsvm_good_file_reads_into_dense_rows)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_libsvm(D "ds_svm_good.txt", 100, 0, &ds, &err), SIM_OK);
    ck_assert_uint_eq(ds.n, 6);
    ck_assert_uint_eq(ds.dim, 7);
    ck_assert_uint_eq(ds.classes, 3);
    ck_assert_uint_eq(ds.w, 7);
    ck_assert_int_eq(ds.label_value[0], 1);
    ck_assert_int_eq(ds.label_value[1], 3);
    ck_assert_int_eq(ds.label_value[2], 7);
    const uint8_t y[6] = { 1, 0, 2, 0, 1, 0 };
    const float x[6][7] = {
        { 0.25f, 0, 0, -150.0f, 0, 0, 3.125f },
        { 0, 7.75f, 0, 0, 0, 0, 0 },
        { 1e-3f, 0, 2.5f, 0, 0, 0, 0 },
        { 0, 0, 0, 0, -0.0625f, 0, 8.0f },
        { 0, 0, 0, 0, 0, 0, 0 },
        { 0, 0, 0, 0, 0, 4.5f, 0 },
    };
    for (size_t i = 0; i < 6; i++) {
        ck_assert_uint_eq(ds.y[i], y[i]);
        ck_assert_int_eq(memcmp(ds.x + i * 7, x[i], sizeof(x[i])), 0);
    }
    data_fini(&ds);
    ck_assert_int_eq(data_load_libsvm(D "ds_svm_good.txt", 100, 2, &ds, &err), SIM_OK);
    ck_assert_uint_eq(ds.n, 2);
    ck_assert_uint_eq(ds.classes, 2); /* labels 3 and 1 */
    ck_assert_uint_eq(ds.y[0], 1);
    ck_assert_uint_eq(ds.y[1], 0);
    data_fini(&ds);
}
END_TEST

START_TEST(libsvm_binary_labels_map_minus_one_to_class_zero)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_libsvm(D "ds_svm_binary.txt", 3, 0, &ds, &err), SIM_OK);
    ck_assert_uint_eq(ds.classes, 2);
    ck_assert_int_eq(ds.label_value[0], -1);
    ck_assert_int_eq(ds.label_value[1], 1);
    ck_assert_uint_eq(ds.y[0], 0);
    ck_assert_uint_eq(ds.y[1], 1);
    ck_assert_uint_eq(ds.y[2], 0);
    ck_assert_uint_eq(ds.dim, 3);
    data_fini(&ds);
}
END_TEST

/* Loads `file` expecting SIM_EINVAL with `text`, and an untouched set. */
static void expect_svm_error(const char *file, size_t max_features, int code, const char *text)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_libsvm(file, max_features, 0, &ds, &err), code);
    expect_err(&err, code, text);
    expect_empty(&ds);
}

START_TEST(libsvm_errors_name_the_file_line_and_column)
{
    expect_svm_error(D "ds_svm_bad_value.txt", 10, SIM_EINVAL,
                     D "ds_svm_bad_value.txt: line 3, column 5: bad value \"abc\" for feature 2");
    expect_svm_error(D "ds_svm_not_ascending.txt", 10, SIM_EINVAL,
                     D "ds_svm_not_ascending.txt: line 2, column 7: feature index 2 does not "
                       "ascend (it follows 3)");
    expect_svm_error(D "ds_svm_index0.txt", 10, SIM_EINVAL,
                     D "ds_svm_index0.txt: line 1, column 3: feature index 0: indices start "
                       "at 1");
    expect_svm_error(D "ds_svm_missing_colon.txt", 10, SIM_EINVAL,
                     D "ds_svm_missing_colon.txt: line 2, column 8: missing ':' after feature "
                       "index 4");
    expect_svm_error(D "ds_svm_too_many.txt", 10, SIM_EINVAL,
                     D "ds_svm_too_many.txt: line 2, column 3: feature index 12 exceeds "
                       "max_features 10 (too many features)");
    expect_svm_error(D "ds_svm_bad_label.txt", 10, SIM_EINVAL,
                     D "ds_svm_bad_label.txt: line 2, column 1: label \"1.5\" is not a 32-bit "
                       "integer");
    expect_svm_error(D "ds_svm_nan.txt", 10, SIM_EINVAL,
                     D "ds_svm_nan.txt: line 1, column 5: value \"nan\" for feature 1 is not a "
                       "finite float");
    expect_svm_error(D "ds_svm_space_value.txt", 10, SIM_EINVAL,
                     D "ds_svm_space_value.txt: line 1, column 5: bad value \"\" for feature 2");
    /* strtod would read hexadecimal; LIBSVM is decimal */
    expect_svm_error(D "ds_svm_hex_value.txt", 10, SIM_EINVAL,
                     D "ds_svm_hex_value.txt: line 1, column 9: bad value \"0x10\" for feature 3");
    expect_svm_error(D "ds_svm_hex_label.txt", 10, SIM_EINVAL,
                     D "ds_svm_hex_label.txt: line 2, column 1: bad label \"0x2\"");
}
END_TEST

START_TEST(libsvm_empty_or_missing_files_are_errors)
{
    expect_svm_error(D "ds_svm_empty.txt", 10, SIM_EINVAL,
                     D "ds_svm_empty.txt: no examples (empty file or only comments)");
    expect_svm_error(D "ds_svm_comments.txt", 10, SIM_EINVAL,
                     D "ds_svm_comments.txt: no examples (empty file or only comments)");
    expect_svm_error(D "ds_nonexistent.txt", 10, SIM_EIO,
                     D "ds_nonexistent.txt: cannot open: No such file or directory");
}
END_TEST

/* A byte-order mark that opens a LIBSVM file is skipped (it was refused as a label), a NUL byte
 * is refused with its column (it was read into a value), and a device or a FIFO, which the two
 * passes cannot read (/dev/zero grew one line until memory ran out), is refused (issue 38). */
START_TEST(libsvm_takes_a_bom_and_refuses_nul_bytes_and_devices)
{
    char *dir = harness_tmpdir("data"), path[1100];
    snprintf(path, sizeof(path), "%s/bom.txt", dir);
    harness_write(dir, "bom.txt",
                  "\xef\xbb\xbf"
                  "3 1:0.25\n7 2:1.5\n3 2:-2\n");
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_libsvm(path, 10, 0, &ds, &err), SIM_OK);
    ck_assert_uint_eq(ds.n, 3);
    ck_assert_uint_eq(ds.classes, 2);
    ck_assert(ds.x[0] == 0.25f);
    ck_assert_uint_eq(ds.y[1], 1);
    data_fini(&ds);
    static const char nul[] = "3 1:0.25\n7 2:1.5\0 3:4\n";
    snprintf(path, sizeof(path), "%s/nul.txt", dir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(nul, 1, sizeof(nul) - 1, f), sizeof(nul) - 1);
    fclose(f);
    char want[1200];
    snprintf(want, sizeof(want), "%s: line 2, column 8: a NUL byte", path);
    expect_svm_error(path, 10, SIM_EINVAL, want);
    expect_svm_error("/dev/zero", 10, SIM_EINVAL,
                     "/dev/zero: not a regular file (a device): LIBSVM data is read in two "
                     "passes; copy it into a file");
    harness_cleanup(dir);
}
END_TEST

/* A FIFO that no process writes is refused at once, as a LIBSVM file (read in two passes)
 * and as an IDX file: opening it waited for a writer forever (issue 38, third probe). */
START_TEST(a_fifo_nobody_writes_is_refused_without_waiting)
{
    char *dir = harness_tmpdir("data"), fifo[1100], want[1300];
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    snprintf(want, sizeof(want),
             "%s: not a regular file (a FIFO): LIBSVM data is read in two passes; copy it "
             "into a file",
             fifo);
    expect_svm_error(fifo, 10, SIM_EINVAL, want);
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_idx(fifo, D "ds_idx_labels.gz", 10, 0, &ds, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "a FIFO") != NULL, "%s", err.msg);
    expect_empty(&ds);
    ck_assert_int_eq(data_load_idx(D "ds_idx_images.gz", fifo, 10, 0, &ds, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "a FIFO") != NULL, "%s", err.msg);
    harness_cleanup(dir);
}
END_TEST

/* ---- Synthetic ---- */

START_TEST(synthetic_data_is_deterministic_for_a_seed)
{
    data_synthetic_config cfg = { .n = 777, .dim = 13, .classes = 7, .separation = 3.25 };
    data_set a, b, c;
    sim_err err = { 0 };
    gsl_rng *r1 = rng(2385, SIM_STREAM_DATA), *r2 = rng(2385, SIM_STREAM_DATA);
    gsl_rng *r3 = rng(2386, SIM_STREAM_DATA);
    ck_assert_int_eq(data_synthetic(&cfg, r1, &a, &err), SIM_OK);
    ck_assert_int_eq(data_synthetic(&cfg, r2, &b, &err), SIM_OK);
    ck_assert_int_eq(data_synthetic(&cfg, r3, &c, &err), SIM_OK);
    ck_assert_int_eq(memcmp(a.x, b.x, a.n * a.dim * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(a.y, b.y, a.n), 0);
    ck_assert_int_ne(memcmp(a.x, c.x, a.n * a.dim * sizeof(float)), 0);
    ck_assert_uint_eq(a.classes, 7);
    ck_assert_uint_eq(a.w, 13);
    data_fini(&a);
    data_fini(&b);
    data_fini(&c);
    gsl_rng_free(r1);
    gsl_rng_free(r2);
    gsl_rng_free(r3);
}
END_TEST

START_TEST(synthetic_classes_are_balanced_and_separated_as_configured)
{
    const double sep = 4.5;
    data_synthetic_config cfg = { .n = 5003, .dim = 200, .classes = 5, .separation = sep };
    data_set ds;
    sim_err err = { 0 };
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    ck_assert_int_eq(data_synthetic(&cfg, r, &ds, &err), SIM_OK);
    size_t count[5] = { 0 };
    double *mean = calloc(5 * 200, sizeof(double));
    for (size_t i = 0; i < ds.n; i++) {
        count[ds.y[i]]++;
        for (size_t j = 0; j < 200; j++)
            mean[ds.y[i] * 200 + j] += (double)ds.x[i * 200 + j];
    }
    for (size_t c = 0; c < 5; c++) {
        ck_assert(count[c] == 1000 || count[c] == 1001); /* 5003 = 5 * 1000 + 3 */
        for (size_t j = 0; j < 200; j++)
            mean[c * 200 + j] /= (double)count[c];
    }
    double within = 0, between = 0;
    for (size_t i = 0; i < ds.n; i++)
        for (size_t j = 0; j < 200; j++) {
            double d = (double)ds.x[i * 200 + j] - mean[ds.y[i] * 200 + j];
            within += d * d;
        }
    within /= (double)(ds.n * 200);
    for (size_t a = 0; a < 5; a++)
        for (size_t b = a + 1; b < 5; b++)
            for (size_t j = 0; j < 200; j++) {
                double d = mean[a * 200 + j] - mean[b * 200 + j];
                between += d * d / 10.0; /* mean over the 10 pairs */
            }
    /* Noise variance 1 per coordinate, estimated from 1e6 values: within 1%. The squared
     * centre distance has mean 2 sep^2 and relative spread sqrt(2 / dim) = 0.1 per pair,
     * about 0.04 over 10 pairs: allow 15%. */
    ck_assert_double_eq_tol(within, 1.0, 0.01);
    ck_assert_double_eq_tol(between / (2 * sep * sep), 1.0, 0.15);
    free(mean);
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

START_TEST(synthetic_rejects_bad_configurations)
{
    data_set ds;
    sim_err err = { 0 };
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_synthetic_config cfg = { .n = 10, .dim = 3, .classes = 1, .separation = 1.0 };
    ck_assert_int_eq(data_synthetic(&cfg, r, &ds, &err), SIM_EINVAL);
    expect_err(&err, SIM_EINVAL, "synthetic classes must be 2..256, got 1");
    cfg.classes = 3;
    cfg.separation = -0.5;
    ck_assert_int_eq(data_synthetic(&cfg, r, &ds, &err), SIM_EINVAL);
    expect_err(&err, SIM_EINVAL, "synthetic separation must be finite and >= 0, got -0.5");
    cfg.separation = 1.0;
    cfg.n = (size_t)1 << 40;
    ck_assert_int_eq(data_synthetic(&cfg, r, &ds, &err), SIM_EINVAL);
    expect_err(&err, SIM_EINVAL,
               "data set of 1099511627776 examples of 3 features is out of range (1 to "
               "1073741824 floats in all)");
    expect_empty(&ds);
    gsl_rng_free(r);
}
END_TEST

START_TEST(standardizing_gives_zero_mean_and_unit_deviation)
{
    data_synthetic_config cfg = { .n = 300, .dim = 17, .classes = 3, .separation = 6.0 };
    data_set ds;
    sim_err err = { 0 };
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    ck_assert_int_eq(data_synthetic(&cfg, r, &ds, &err), SIM_OK);
    double mean, sd;
    data_moments(&ds, &mean, &sd);
    data_standardize(&ds, mean, sd);
    data_moments(&ds, &mean, &sd);
    /* float storage of values of size ~3 rounds each by ~2e-7 */
    ck_assert_double_eq_tol(mean, 0.0, 1e-6);
    ck_assert_double_eq_tol(sd, 1.0, 1e-6);
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

/* ---- Partitions ---- */

/* A label-only set of n examples: label of i drawn uniformly from 0..classes-1. */
static void label_set(data_set *ds, size_t n, uint32_t classes, gsl_rng *r)
{
    sim_err err = { 0 };
    ck_assert_int_eq(data_set_alloc(ds, n, 1, &err), SIM_OK);
    ds->classes = classes;
    for (size_t i = 0; i < n; i++) {
        ds->y[i] = (uint8_t)gsl_rng_uniform_int(r, classes);
        ds->x[i] = (float)i;
    }
}

/* Every example exactly once, every worker non-empty, ids ascending within each worker. */
static void check_cover(const data_partition *p, size_t n, size_t workers)
{
    ck_assert_uint_eq(p->workers, workers);
    ck_assert_uint_eq(p->n, n);
    ck_assert_uint_eq(p->offset[0], 0);
    ck_assert_uint_eq(p->offset[workers], n);
    unsigned char *seen = calloc(n, 1);
    size_t bad = 0;
    for (size_t w = 0; w < workers; w++) {
        bad += p->offset[w + 1] <= p->offset[w]; /* empty or inverted */
        for (size_t k = p->offset[w]; k < p->offset[w + 1]; k++) {
            bad += p->index[k] >= n || seen[p->index[k]]++ != 0;
            bad += k > p->offset[w] && p->index[k] <= p->index[k - 1];
        }
    }
    for (size_t i = 0; i < n; i++)
        bad += seen[i] != 1;
    ck_assert_uint_eq(bad, 0);
    free(seen);
}

/* Mean over workers of the largest share one class has in the worker's examples. */
static double skew(const data_partition *p, const data_set *ds)
{
    double total = 0;
    for (size_t w = 0; w < p->workers; w++) {
        size_t count[DATA_MAX_CLASSES] = { 0 }, most = 0;
        for (size_t k = p->offset[w]; k < p->offset[w + 1]; k++) {
            size_t c = ds->y[p->index[k]];
            if (++count[c] > most)
                most = count[c];
        }
        total += (double)most / (double)(p->offset[w + 1] - p->offset[w]);
    }
    return total / (double)p->workers;
}

START_TEST(iid_partition_covers_every_example_once_in_near_equal_shares)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 10007, 10, r);
    data_partition p, q;
    sim_err err = { 0 };
    ck_assert_int_eq(data_partition_iid(&ds, 16, r, &p, &err), SIM_OK);
    check_cover(&p, 10007, 16);
    for (size_t w = 0; w < 16; w++) {
        size_t size = p.offset[w + 1] - p.offset[w];
        ck_assert(size == 625 || size == 626); /* 10007 / 16 = 625.4 */
    }
    ck_assert_double_lt(skew(&p, &ds), 0.15); /* ~0.1 plus sampling noise */
    gsl_rng *r2 = rng(2385, SIM_STREAM_DATA);
    data_set ds2;
    label_set(&ds2, 10007, 10, r2);
    ck_assert_int_eq(data_partition_iid(&ds2, 16, r2, &q, &err), SIM_OK);
    ck_assert_int_eq(memcmp(p.offset, q.offset, 17 * sizeof(size_t)), 0);
    ck_assert_int_eq(memcmp(p.index, q.index, 10007 * sizeof(size_t)), 0);
    data_partition_fini(&p);
    data_partition_fini(&q);
    data_partition_fini(&q);
    data_fini(&ds);
    data_fini(&ds2);
    gsl_rng_free(r);
    gsl_rng_free(r2);
}
END_TEST

/* Skew of a Dirichlet partition of `ds` over 16 workers, drawn from a fresh stream. */
static double dirichlet_skew(const data_set *ds, double alpha)
{
    gsl_rng *r = rng(2385, SIM_STREAM_PROTO);
    data_partition p;
    sim_err err = { 0 };
    ck_assert_int_eq(data_partition_dirichlet(ds, 16, alpha, r, &p, &err), SIM_OK);
    check_cover(&p, ds->n, 16);
    double s = skew(&p, ds);
    data_partition_fini(&p);
    gsl_rng_free(r);
    return s;
}

START_TEST(dirichlet_partition_covers_every_example_and_skews_with_small_alpha)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 20011, 10, r);
    /* Mean largest class share per worker, measured with these seeds: 0.91 at alpha 0.01,
     * 0.67 at 0.1, 0.30 at 1, 0.107 at 1000, against 0.1 plus noise for iid data. The
     * thresholds leave a margin around each. */
    double s001 = dirichlet_skew(&ds, 0.01), s01 = dirichlet_skew(&ds, 0.1);
    double s1 = dirichlet_skew(&ds, 1.0), s1000 = dirichlet_skew(&ds, 1000.0);
    ck_assert_double_gt(s001, 0.8);
    ck_assert_double_gt(s01, 0.5);
    ck_assert_double_lt(s1, 0.45);
    ck_assert_double_lt(s1000, 0.15);
    ck_assert_double_gt(s001, s01);
    ck_assert_double_gt(s01, s1);
    ck_assert_double_gt(s1, s1000);
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

START_TEST(dirichlet_partition_fills_empty_workers)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 23, 3, r);
    for (int round = 0; round < 20; round++) {
        data_partition p;
        sim_err err = { 0 };
        /* 3 classes over 23 workers at alpha 0.01: most workers get nothing before the
         * fix-up, and with 23 examples each ends with exactly one */
        ck_assert_int_eq(data_partition_dirichlet(&ds, 23, 0.01, r, &p, &err), SIM_OK);
        check_cover(&p, 23, 23);
        data_partition_fini(&p);
        ck_assert_int_eq(data_partition_dirichlet(&ds, 7, 0.01, r, &p, &err), SIM_OK);
        check_cover(&p, 23, 7);
        data_partition_fini(&p);
    }
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

START_TEST(partitions_reject_bad_worker_counts_and_alpha)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 5, 2, r);
    data_partition p;
    sim_err err = { 0 };
    ck_assert_int_eq(data_partition_iid(&ds, 6, r, &p, &err), SIM_EINVAL);
    expect_err(&err, SIM_EINVAL,
               "cannot partition 5 examples over 6 workers: each needs at least one");
    ck_assert_ptr_null(p.offset);
    ck_assert_int_eq(data_partition_iid(&ds, 0, r, &p, &err), SIM_EINVAL);
    ck_assert_int_eq(data_partition_dirichlet(&ds, 2, 0.0, r, &p, &err), SIM_EINVAL);
    expect_err(&err, SIM_EINVAL, "dirichlet alpha must be finite and > 0, got 0");
    ck_assert_int_eq(data_partition_dirichlet(&ds, 2, NAN, r, &p, &err), SIM_EINVAL);
    ck_assert_int_eq(data_partition_dirichlet(&ds, 6, 1.0, r, &p, &err), SIM_EINVAL);
    data_partition_fini(NULL);
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

/* ---- Sampler ---- */

/* Draws `batches` batches and checks that each run of n ids is a permutation of idx and
 * that the features and labels are the examples' own. */
static void check_sampler(const data_set *ds, const size_t *idx, size_t n, size_t batch,
                          size_t batches, uint64_t seed)
{
    sim_err err = { 0 };
    data_sampler *s = data_sampler_create(ds, idx, n, batch, &err);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(data_sampler_epoch(s), 0);
    gsl_rng *r = rng(seed, SIM_STREAM_WORKER + 3);
    size_t total = batch * batches;
    size_t *ids = malloc(total * sizeof(size_t));
    float *x = malloc(batch * ds->dim * sizeof(float));
    uint8_t *y = malloc(batch);
    size_t bad = 0;
    for (size_t b = 0; b < batches; b++) {
        data_sampler_next(s, r, x, y, ids + b * batch);
        for (size_t k = 0; k < batch; k++) {
            size_t id = ids[b * batch + k];
            bad += y[k] != ds->y[id] || x[k * ds->dim] != ds->x[id * ds->dim];
        }
    }
    ck_assert_uint_eq(bad, 0);
    ck_assert_uint_eq(data_sampler_epoch(s), (total + n - 1) / n);
    unsigned char *seen = calloc(ds->n, 1);
    for (size_t e = 0; e + 1 <= total / n; e++) {
        memset(seen, 0, ds->n);
        for (size_t k = 0; k < n; k++)
            seen[ids[e * n + k]]++;
        for (size_t k = 0; k < n; k++)
            bad += seen[idx[k]] != 1;
    }
    ck_assert_uint_eq(bad, 0);
    free(seen);
    free(ids);
    free(x);
    free(y);
    gsl_rng_free(r);
    data_sampler_destroy(s);
}

START_TEST(sampler_deals_each_example_once_per_epoch)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 211, 7, r);
    size_t idx[37];
    for (size_t k = 0; k < 37; k++)
        idx[k] = 5 * k + 3;
    check_sampler(&ds, idx, 37, 5, 23, 11); /* batches straddle epochs */
    check_sampler(&ds, idx, 3, 8, 9, 12);   /* a batch larger than the worker's share */
    check_sampler(&ds, idx, 37, 37, 4, 13); /* one batch per epoch */
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

START_TEST(sampler_order_depends_only_on_the_worker_stream)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 64, 4, r);
    size_t idx[64], a[64 * 2], b[64 * 2];
    for (size_t k = 0; k < 64; k++)
        idx[k] = k;
    float x[16 * 1];
    uint8_t y[16];
    sim_err err = { 0 };
    for (int pass = 0; pass < 2; pass++) {
        data_sampler *s = data_sampler_create(&ds, idx, 64, 16, &err);
        gsl_rng *wr = rng(99, SIM_STREAM_WORKER + 1);
        for (size_t k = 0; k < 8; k++)
            data_sampler_next(s, wr, x, y, (pass == 0 ? a : b) + 16 * k);
        data_sampler_destroy(s);
        gsl_rng_free(wr);
    }
    ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
    ck_assert_int_ne(memcmp(a, a + 64, 64 * sizeof(size_t)), 0); /* reshuffled */
    ck_assert_int_ne(memcmp(a, idx, 64 * sizeof(size_t)), 0);    /* shuffled */
    ck_assert_ptr_null(data_sampler_create(&ds, idx, 0, 4, &err));
    expect_err(&err, SIM_EINVAL,
               "sampler needs at least one example and a batch >= 1, got 0 and 4");
    idx[5] = 64;
    ck_assert_ptr_null(data_sampler_create(&ds, idx, 64, 4, &err));
    expect_err(&err, SIM_EINVAL, "sampler example id 64 is not below 64");
    data_sampler_destroy(NULL);
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("data");
    TCase *tc = tcase_create("idx");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, idx_pair_reads_back_exactly);
    tcase_add_test(tc, idx_reads_uncompressed_files_and_stops_at_max_samples);
    tcase_add_test(tc, fashion_loader_picks_train_or_test_files_from_a_directory);
    tcase_add_test(tc, idx_wrong_magic_is_named_with_file_and_offset);
    tcase_add_test(tc, idx_truncated_images_report_where_the_data_ran_out);
    tcase_add_test(tc, idx_truncated_labels_report_where_the_data_ran_out);
    tcase_add_test(tc, idx_count_mismatch_names_both_files);
    tcase_add_test(tc, idx_label_out_of_range_is_named_with_its_offset);
    tcase_add_test(tc, idx_absurd_header_is_refused_before_allocating);
    tcase_add_test(tc, idx_header_announcing_more_than_the_file_holds_is_refused_before_allocating);
    tcase_add_test(tc, idx_cut_or_corrupt_gzip_streams_give_zlib_errors);
    tcase_add_test(tc, idx_refuses_bytes_after_the_data_or_after_the_gzip_stream);
    tcase_add_test(tc, fashion_probe_reads_the_four_headers_and_refuses_disagreeing_sizes);
    tcase_add_test(tc, real_fashion_mnist_has_the_known_shape_and_first_label);
    suite_add_tcase(s, tc);
    tc = tcase_create("libsvm");
    tcase_add_test(tc, libsvm_good_file_reads_into_dense_rows);
    tcase_add_test(tc, libsvm_binary_labels_map_minus_one_to_class_zero);
    tcase_add_test(tc, libsvm_errors_name_the_file_line_and_column);
    tcase_add_test(tc, libsvm_empty_or_missing_files_are_errors);
    tcase_add_test(tc, libsvm_takes_a_bom_and_refuses_nul_bytes_and_devices);
    suite_add_tcase(s, tc);
    tc = tcase_create("fifo");
    tcase_set_timeout(tc, 10); /* a wait for a writer fails by timing out */
    tcase_add_test(tc, a_fifo_nobody_writes_is_refused_without_waiting);
    suite_add_tcase(s, tc);
    tc = tcase_create("synthetic");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, synthetic_data_is_deterministic_for_a_seed);
    tcase_add_test(tc, synthetic_classes_are_balanced_and_separated_as_configured);
    tcase_add_test(tc, synthetic_rejects_bad_configurations);
    tcase_add_test(tc, standardizing_gives_zero_mean_and_unit_deviation);
    suite_add_tcase(s, tc);
    tc = tcase_create("partition");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, iid_partition_covers_every_example_once_in_near_equal_shares);
    tcase_add_test(tc, dirichlet_partition_covers_every_example_and_skews_with_small_alpha);
    tcase_add_test(tc, dirichlet_partition_fills_empty_workers);
    tcase_add_test(tc, partitions_reject_bad_worker_counts_and_alpha);
    suite_add_tcase(s, tc);
    tc = tcase_create("sampler");
    tcase_add_test(tc, sampler_deals_each_example_once_per_epoch);
    tcase_add_test(tc, sampler_order_depends_only_on_the_worker_stream);
    suite_add_tcase(s, tc);
    return s;
}
