/* Statistics over seeds: means, standard deviations and Student-t intervals.
 *
 * Shared by `hetsim check` (prediction intervals of a golden's seeds) and `hetsim report`
 * (confidence intervals of a mean over seeds). Plain functions over arrays of doubles; the
 * t quantiles are GSL's (gsl_cdf_tdist_Qinv).
 */
#ifndef APP_STATS_H
#define APP_STATS_H

#include <stdbool.h>
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

/* Fieller's interval at level APP_STATS_LEVEL for the ratio of the means of two independent
 * samples, num[0..nn) over den[0..nd) (NaN values skipped): the ratios R for which
 * mean(num) - R mean(den) is within t * sqrt(v_num + R^2 v_den) of 0, v the squared standard
 * errors of the means, t Student's with the Welch-Satterthwaite degrees of freedom of that
 * combination at the estimate. *ratio receives mean(num) / mean(den), NaN when mean(den) is 0
 * (a ratio over nothing: a baseline that trained nothing printed "inf") or the ratio is past a
 * double (a throughput of 1e149 over 1e-300, each within a results file's range, printed
 * "inf"); *lo and *hi the
 * interval: NaN with fewer than two values on either side; -inf and +inf when the
 * denominator's mean is not told apart from 0 at that level (the interval is unbounded); both
 * the ratio when neither sample varies. Returns true for a bounded interval. */
bool app_stats_ratio_ci(const double *num, size_t nn, const double *den, size_t nd, double *ratio,
                        double *lo, double *hi);

#endif
