/* Statistics over seeds: means, standard deviations and Student-t intervals.
 *
 * Shared by `hetsim check` (prediction intervals of a golden's seeds) and `hetsim report`
 * (confidence intervals of a mean over seeds). Plain functions over arrays of doubles; the
 * t quantiles are GSL's (gsl_cdf_tdist_Qinv).
 */
#ifndef APP_STATS_H
#define APP_STATS_H

#include <stddef.h>

/* The confidence level of the intervals `hetsim report` and `plot --by` give. */
#define APP_STATS_LEVEL 0.95

/* The mean of x[0..n) and their sample standard deviation (n - 1 in the denominator) into
 * *mean and *sd (either may be NULL). NaN values are skipped; returns how many were used.
 * With none, both are NaN; with one, *sd is NaN. */
size_t app_stats_mean_sd(const double *x, size_t n, double *mean, double *sd);

/* The t quantile with `df` degrees of freedom (> 0) exceeded with probability `upper`
 * (in (0, 1)): gsl_cdf_tdist_Qinv(upper, df). */
double app_stats_t_quantile(double upper, double df);

/* The two-sided Student-t confidence interval of the mean at level APP_STATS_LEVEL over
 * the values of x[0..n) that are not NaN: *mean and the half-width
 * *half = t(1 - (1 - level) / 2, m - 1) * sd / sqrt(m), m the number used (returned). *half is
 * NaN with fewer than two values, *mean NaN with none. */
size_t app_stats_mean_ci(const double *x, size_t n, double *mean, double *half);

#endif
