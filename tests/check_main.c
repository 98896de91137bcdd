/* The one main of every Check suite: tests/test_<module>.c defines test_suite(), and meson
 * links this file into each suite's executable. Check's fork mode stays on (crash isolation;
 * CK_FORK=no for gdb). GSL's default error handler aborts: it is turned off first. */
#include <stdlib.h>

#include <check.h>
#include <gsl/gsl_errno.h>

#include "suite.h"

int main(void)
{
    gsl_set_error_handler_off();
    SRunner *sr = srunner_create(test_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
