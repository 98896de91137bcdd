/* A sweep's index.csv, internal (see app/index.h): app/index.c reads the file and checks its
 * rows; app/index_rows.c holds a row's swept values and seed to its run's run.json. Calls run
 * one way: index.c -> index_rows.c. */
#ifndef APP_INDEX_STATE_H
#define APP_INDEX_STATE_H

#include <stddef.h>

#include "app/index.h"

/* Row r's swept values and seed set into a second reading of its run.json (`text`, n bytes)
 * change nothing in the resolved scenario: the paths that differ into diff[size] (empty when
 * none). A run.json that is not JSON with a scenario is left to app_index_run_facts. */
void ix_row_diff(const app_index *ix, size_t r, const char *text, size_t n, char *diff,
                 size_t size);

#endif
