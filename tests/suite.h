/* Each tests/test_<module>.c defines its Check suite as test_suite(); tests/check_main.c,
 * linked into every suite's executable, runs it. */
#ifndef HETSIM_TESTS_SUITE_H
#define HETSIM_TESTS_SUITE_H

#include <check.h>

Suite *test_suite(void);

#endif
