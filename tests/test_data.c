/* Data sets: IDX and LIBSVM readers (good files and one malformed file per error) and the
 * real Fashion-MNIST when installed.
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
#include "harness_data.h"
#include "models/data.h"
#include "sim/rng.h"
#include "suite.h"

#ifndef HETSIM_TEST_DATA
#define HETSIM_TEST_DATA "tests/data"
#endif

#define D HETSIM_TEST_DATA "/"

static const uint8_t IDX_LABELS[5] = { 7, 2, 9, 0, 4 };

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
    datat_expect_empty(&ds);
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
    datat_expect_err(&err, SIM_EINVAL,
                     D "ds_idx_bad_magic.gz: bad magic number 0x00000804 at byte 0, expected "
                       "0x00000803 (IDX images of unsigned bytes, 3 dimensions)");
    datat_expect_empty(&ds);
    /* a labels file given as images */
    ck_assert_int_eq(data_load_idx(D "ds_idx_labels.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EIO);
    datat_expect_err(&err, SIM_EIO,
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
    datat_expect_err(&err, SIM_EIO,
                     D
                     "ds_idx_trunc_images.gz: truncated at byte 58 while reading pixels (42 of 60 "
                     "bytes)");
    datat_expect_empty(&ds);
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
    datat_expect_err(&err, SIM_EIO,
                     D "ds_idx_trunc_labels.gz: truncated at byte 11 while reading labels (3 of 5 "
                       "bytes)");
    datat_expect_empty(&ds);
}
END_TEST

START_TEST(idx_count_mismatch_names_both_files)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(
        data_load_idx(D "ds_idx_images.gz", D "ds_idx_count_labels.gz", 10, 0, &ds, &err),
        SIM_EINVAL);
    datat_expect_err(&err, SIM_EINVAL,
                     D
                     "ds_idx_count_labels.gz: label count 4 at byte 4 does not match the 5 images "
                     "of " D "ds_idx_images.gz");
    datat_expect_empty(&ds);
}
END_TEST

START_TEST(idx_label_out_of_range_is_named_with_its_offset)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_idx(D "ds_idx_images.gz", D "ds_idx_bad_label.gz", 10, 0, &ds, &err),
                     SIM_EINVAL);
    datat_expect_err(&err, SIM_EINVAL,
                     D "ds_idx_bad_label.gz: label 12 at byte 10 is out of range 0..9");
    datat_expect_empty(&ds);
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
    datat_expect_err(
        &err, SIM_EINVAL,
        D "ds_idx_huge.gz: image count 2147483648 at byte 4 is out of range 1..16777216");
    datat_expect_empty(&ds);
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
    datat_expect_err(&err, SIM_EIO,
                     D "ds_idx_claims_labels.idx: truncated: the header announces 200008 bytes of "
                       "labels, more than a file of 1008 bytes can hold");
    datat_expect_empty(&ds);
    /* 1000 labels are there, but not 1000 images of 64x64: at most 1032 bytes a gzip byte */
    ck_assert_int_eq(
        data_load_idx(D "ds_idx_claims.gz", D "ds_idx_claims_labels.idx", 10, 1000, &ds, &err),
        SIM_EIO);
    sim_err_format(&err, buf, sizeof(buf));
    const char *head = D "ds_idx_claims.gz: truncated: the header announces 4096016 bytes of "
                         "pixels, more than a gzip file of ";
    ck_assert_msg(strncmp(buf, head, strlen(head)) == 0, "%s", buf);
    datat_expect_empty(&ds);
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
    datat_expect_empty(&ds);
    ck_assert_int_eq(data_load_idx(D "ds_idx_corrupt.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EIO);
    datat_expect_err(&err, SIM_EIO,
                     D "ds_idx_corrupt.gz: corrupt gzip data near byte 0 while reading the 16-byte "
                       "images header (zlib: invalid block type)");
    datat_expect_empty(&ds);
    ck_assert_int_eq(data_load_idx(D "ds_nonexistent.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EIO);
    datat_expect_err(&err, SIM_EIO, D "ds_nonexistent.gz: cannot open: No such file or directory");
}
END_TEST

START_TEST(idx_refuses_bytes_after_the_data_or_after_the_gzip_stream)
{
    data_set ds;
    sim_err err = { 0 };
    ck_assert_int_eq(data_load_idx(D "ds_idx_junk.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EINVAL);
    datat_expect_err(&err, SIM_EINVAL,
                     D
                     "ds_idx_junk.gz: unexpected bytes after the end of the gzip stream (the data "
                     "ends at byte 76)");
    datat_expect_empty(&ds);
    ck_assert_int_eq(data_load_idx(D "ds_idx_extra.idx", D "ds_idx_labels.gz", 10, 0, &ds, &err),
                     SIM_EINVAL);
    datat_expect_err(&err, SIM_EINVAL,
                     D "ds_idx_extra.idx: more data after byte 76 than the header announces");
    ck_assert_int_eq(
        data_load_idx(D "ds_idx_two_members.gz", D "ds_idx_labels.gz", 10, 0, &ds, &err),
        SIM_EINVAL);
    datat_expect_err(
        &err, SIM_EINVAL,
        D "ds_idx_two_members.gz: unexpected bytes after the end of the gzip stream (the "
          "data ends at byte 76)");
    /* the labels file is checked too */
    ck_assert_int_eq(data_load_idx(D "ds_idx_images.gz", D "ds_idx_junk.gz", 10, 0, &ds, &err),
                     SIM_EINVAL);
    datat_expect_err(&err, SIM_EINVAL,
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
    datat_expect_err(&err, SIM_EINVAL,
                     D
                     "ds_fmnist_sizes/t10k-images-idx3-ubyte.gz: image size 4x3 at byte 8 does not "
                     "match the 3x4 images of " D "ds_fmnist_sizes/train-images-idx3-ubyte.gz");
    ck_assert_int_eq(data_probe_fashion_mnist(D "ds_nonexistent", &train, &test, &err), SIM_EIO);
    datat_expect_err(&err, SIM_EIO,
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
    datat_expect_err(&err, code, text);
    datat_expect_empty(&ds);
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
                     "/dev/zero: not a regular file (a character device): LIBSVM data is read "
                     "in two passes; copy it into a file");
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
    datat_expect_empty(&ds);
    ck_assert_int_eq(data_load_idx(D "ds_idx_images.gz", fifo, 10, 0, &ds, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "a FIFO") != NULL, "%s", err.msg);
    harness_cleanup(dir);
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
    return s;
}
