/* Labels of sweep points drawn by `hetsim plot RUN...` (app_sweep_point_labels): the
 * overrides that differ between the points drawn, read from their sweep's index.csv. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "app/sweep_plot.h"
#include "harness.h"

static char *sweep_with_index(void)
{
    char *dir = harness_tmpdir("labels"), path[1100];
    snprintf(path, sizeof(path), "%s/index.csv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("point,dir,protocol.name,workload.lr,seed,stop_reason,sim_time_s,final_accuracy,"
          "best_accuracy,time_to_target_s,mean_throughput_sps,wall_s\n"
          "0,\"protocol.name=a,workload.lr=0.1,seed=1\",a,0.1,1,time,3,,,,,\n"
          "1,\"protocol.name=a,workload.lr=0.1,seed=2\",a,0.1,2,time,3,,,,,\n"
          "2,\"protocol.name=b,workload.lr=0.1,seed=1\",b,0.1,1,time,3,,,,,\n",
          f);
    fclose(f);
    return dir;
}

START_TEST(labels_name_the_overrides_that_differ_between_the_points_drawn)
{
    char *dir = sweep_with_index(), d[4][1200];
    snprintf(d[0], sizeof(d[0]), "%s/protocol.name=a,workload.lr=0.1,seed=1", dir);
    snprintf(d[1], sizeof(d[1]), "%s/protocol.name=a,workload.lr=0.1,seed=2/", dir);
    snprintf(d[2], sizeof(d[2]), "%s/protocol.name=b,workload.lr=0.1,seed=1", dir);
    snprintf(d[3], sizeof(d[3]), "%s/not-a-point", dir);
    const char *dirs[] = { d[0], d[1], d[2], d[3] };
    char *labels[4];
    sim_err err;
    ck_assert_int_eq(app_sweep_point_labels(dirs, 4, labels, &err), 0);
    ck_assert_str_eq(labels[0], "protocol.name=a,seed=1");
    ck_assert_str_eq(labels[1], "protocol.name=a,seed=2");
    ck_assert_str_eq(labels[2], "protocol.name=b,seed=1");
    ck_assert_ptr_null(labels[3]); /* not a point: the run's own name */
    for (size_t i = 0; i < 4; i++)
        free(labels[i]);
    /* Two points of one protocol: only the seed tells them apart. */
    ck_assert_int_eq(app_sweep_point_labels(dirs, 2, labels, &err), 0);
    ck_assert_str_eq(labels[0], "seed=1");
    ck_assert_str_eq(labels[1], "seed=2");
    free(labels[0]);
    free(labels[1]);
    /* One point alone: all its overrides. */
    ck_assert_int_eq(app_sweep_point_labels(dirs + 2, 1, labels, &err), 0);
    ck_assert_str_eq(labels[0], "protocol.name=b,workload.lr=0.1,seed=1");
    free(labels[0]);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("labels");
    TCase *tc = tcase_create("labels");
    tcase_add_test(tc, labels_name_the_overrides_that_differ_between_the_points_drawn);
    suite_add_tcase(s, tc);
    return s;
}
