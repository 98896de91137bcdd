/* Statistics over seeds (see stats.h). */
#include "app/stats.h"

#include <math.h>

#include <gsl/gsl_cdf.h>

/* The sums run over the differences from the first value, so that identical values have a mean
 * equal to them and a deviation of exactly 0 (around their rounded mean, 0.1 three times had
 * a deviation of 1.7e-17: an interval where there is none). An infinite first value shifts
 * nothing. */
size_t app_stats_mean_sd(const double *x, size_t n, double *mean, double *sd)
{
    double first = 0.0, sum = 0.0, ss = 0.0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i])) {
            if (m == 0 && isfinite(x[i]))
                first = x[i];
            sum += x[i] - first;
            m++;
        }
    double shift = m > 0 ? sum / (double)m : (double)NAN;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i]))
            ss += (x[i] - first - shift) * (x[i] - first - shift);
    if (mean != NULL)
        *mean = first + shift;
    if (sd != NULL)
        *sd = m > 1 ? sqrt(ss / (double)(m - 1)) : (double)NAN;
    return m;
}

double app_stats_t_quantile(double upper, double df)
{
    return gsl_cdf_tdist_Qinv(upper, df);
}

size_t app_stats_mean_ci(const double *x, size_t n, double *mean, double *half)
{
    double sd = NAN;
    size_t m = app_stats_mean_sd(x, n, mean, &sd);
    *half = m > 1 ? app_stats_t_quantile((1.0 - APP_STATS_LEVEL) / 2.0, (double)(m - 1)) * sd /
                        sqrt((double)m)
                  : (double)NAN;
    return m;
}

bool app_stats_ratio_ci(const double *num, size_t nn, const double *den, size_t nd, double *ratio,
                        double *lo, double *hi)
{
    double mn = NAN, sn = NAN, md = NAN, sd = NAN;
    size_t kn = app_stats_mean_sd(num, nn, &mn, &sn), kd = app_stats_mean_sd(den, nd, &md, &sd);
    *ratio = kn > 0 && kd > 0 && md != 0.0 ? mn / md : (double)NAN; /* over 0: no ratio */
    if (isinf(*ratio)) /* past a double (1e149 over 1e-300, in-bound results): none either */
        *ratio = NAN;
    *lo = *hi = NAN;
    if (kn < 2 || kd < 2 || !isfinite(*ratio))
        return false;
    double vn = sn * sn / (double)kn, vd = sd * sd / (double)kd, r = *ratio;
    double var = vn + r * r * vd;
    if (!(var > 0.0)) {
        *lo = *hi = r;
        return true;
    }
    double df =
        var * var / (vn * vn / (double)(kn - 1) + r * r * r * r * vd * vd / (double)(kd - 1));
    double t = app_stats_t_quantile((1.0 - APP_STATS_LEVEL) / 2.0, df), t2 = t * t;
    double a = md * md - t2 * vd;
    if (!(a > 0.0)) {
        *lo = -INFINITY;
        *hi = INFINITY;
        return false;
    }
    double root = t * sqrt(vd * mn * mn + vn * a);
    *lo = (mn * md - root) / a;
    *hi = (mn * md + root) / a;
    return true;
}
