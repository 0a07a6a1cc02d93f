/* fit.h: fitting distributions to measured samples (maximum likelihood, standard errors, confidence
 * intervals, goodness of fit), the empirical distribution, the Kolmogorov-Smirnov statistics, and interval
 * estimates of shares and Poisson rates from counts: what calibration from measured data needs.
 *
 * Conventions, for every function below:
 *  - Samples are in the caller's unit (e.g. milliseconds); scale parameters come back in that unit.
 *  - Data-dependent failures (too few samples, a value out of a family's support, no convergence) return
 *    FALSE/NULL and set `error` (domain AN_FIT_ERROR); bad arguments (NULL pointers, a level outside (0, 1))
 *    are programming errors (g_return_val_if_fail).
 *  - z = Φ⁻¹(1 − α/2) with α = 1 − level is the standard normal quantile (gsl_cdf_ugaussian_Pinv); the
 *    fits use level 0.95 (z = 1.959964). χ²_p(ν) is the p-quantile of the chi-square distribution with ν
 *    degrees of freedom (gsl_cdf_chisq_Pinv), Beta⁻¹(p; a, b) that of the beta distribution
 *    (gsl_cdf_beta_Pinv).
 *  - The GSL error handler is left as the caller set it; no GSL call here is made with arguments it rejects.
 *  - Large parameters: GSL's quantile functions fail to converge for large degrees of freedom
 *    (gsl_cdf_chisq_Pinv from about ν = 27 000), and its incomplete gamma and beta functions fail for very
 *    large parameters (a gamma shape from 1e6, beta parameters from about 7e5). So chi-square, gamma and beta
 *    quantiles are computed here by bisection on gsl_cdf_*_P/Q, and above 2e5 (gamma shape, or both beta
 *    parameters) by the Cornish-Fisher expansion to second order, x = μ + σ(z + (z² − 1)γ/6 + (z³ − 3z)κ/24
 *    − (2z³ − 5z)γ²/36) with z = Φ⁻¹(p), γ the skewness and κ the excess kurtosis (relative error below
 *    1e-12 there); the gamma CDF above a shape of 2e5 is Wilson-Hilferty's Φ(((x/θk)^{1/3} − 1 + 1/9k)·3√k)
 *    (absolute error below 1e-8). The binomial quantiles of an_empirical_quantile_ci() likewise use the
 *    Cornish-Fisher expansion when n·f and n·(1 − f) both exceed 2e5.
 *  - Nothing here keeps state between calls; every function is reentrant.
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

/* ---- Kolmogorov-Smirnov -------------------------------------------------------------------------------- */

/* A Kolmogorov-Smirnov statistic and its p-value. */
typedef struct {
  double d; /* the statistic: the largest absolute distance between two CDFs, in [0, 1] */
  double p; /* the asymptotic p-value, Q_KS(λ) with λ as said by each function */
} AnKs;

/* The survival function of the Kolmogorov distribution (the limit law of √n·D):
 *   Q_KS(λ) = 2 Σ_{j≥1} (−1)^{j−1} exp(−2 j² λ²),                  used for λ ≥ 1.18;
 *   Q_KS(λ) = 1 − (√(2π)/λ) Σ_{j≥1} exp(−(2j−1)² π² / (8 λ²)),     used for 0 < λ < 1.18
 * (the two forms are equal; each is summed where it converges in a few terms, until a term no longer
 * changes the sum). Q_KS(λ) = 1 for λ ≤ 0; NaN gives NaN. E.g. Q_KS(1.3581) = 0.0500. */
double an_ks_q(double lambda);

/* A CDF for an_ks_one_sample(): F(x) given `data`. */
typedef double (*AnCdfFunc)(double x, const void *data);

/* One-sample test of `sorted` (n >= 1 values, ascending) against the continuous CDF F:
 *   D = max_{i=1..n} max(i/n − F(x_(i)), F(x_(i)) − (i−1)/n),   p = Q_KS(√n · D).
 * When F's parameters were estimated from the same sample the p-value is conservative (too large: the
 * Lilliefors effect); it still ranks fits and flags gross misfits. */
AnKs an_ks_one_sample(const double *sorted, size_t n, AnCdfFunc cdf, const void *data);

/* Two-sample test of `a` (na >= 1 values) and `b` (nb >= 1 values), both ascending:
 *   D = sup_x |F_a(x) − F_b(x)| with the empirical CDFs F(x) = #{values ≤ x} / size (so ties across the
 *   samples are stepped over together), p = Q_KS(√(na·nb/(na+nb)) · D), Smirnov's asymptotic p-value: an
 *   approximation that improves as na·nb/(na+nb) grows (treat it as rough below a few dozen), and one that
 *   assumes continuous data (many ties, e.g. delays rounded to milliseconds, make it conservative). */
AnKs an_ks_two_sample(const double *a, size_t na, const double *b, size_t nb);

/* ---- Parametric fits ----------------------------------------------------------------------------------- */

typedef enum {
  AN_FIT_EXPONENTIAL, /* p[0] = mean (the scale, 1/rate) */
  AN_FIT_LOGNORMAL,   /* p[0] = mu, p[1] = sigma (of the logarithm) */
  AN_FIT_GAMMA,       /* p[0] = shape k, p[1] = scale θ */
} AnFitFamily;

/* An estimate with its uncertainty. */
typedef struct {
  double value; /* the point estimate */
  double se;    /* its standard error (the formula is given with each function) */
  double lo;    /* the confidence interval, lo <= value <= hi */
  double hi;
} AnEstimate;

/* A fitted distribution. */
typedef struct {
  AnFitFamily family;
  guint n_params;  /* 1 or 2: how many of p[] are set */
  AnEstimate p[2]; /* maximum-likelihood estimates (see AnFitFamily), standard errors, 95% intervals */
  size_t n;        /* the sample size */
  double loglik;   /* the log-likelihood at the estimate, ℓ = Σ log f(x_i) */
  double aic;      /* Akaike's criterion, 2·n_params − 2ℓ: smaller is better among fits of one sample */
  AnKs ks;         /* one-sample KS against the fitted CDF (see an_ks_one_sample()) */
} AnFit;

/* Exponential, density f(x) = exp(−x/μ)/μ on x >= 0. Needs n >= 2 finite values >= 0, not all 0.
 *   μ̂ = x̄ (the sample mean);  se = μ̂/√n (Fisher information n/μ²);
 *   exact 95% interval from 2n·x̄/μ ~ χ²(2n):  [2n·x̄ / χ²_{0.975}(2n),  2n·x̄ / χ²_{0.025}(2n)];
 *   ℓ = −n·log μ̂ − n. */
gboolean an_fit_exponential(const double *x, size_t n, AnFit *out, GError **error);

/* Lognormal, log x ~ N(μ, σ²). Needs n >= 2 finite values > 0, not all equal. With y_i = log x_i:
 *   μ̂ = ȳ,  σ̂² = Σ(y_i − ȳ)²/n (the maximum-likelihood divisor n, not n − 1);
 *   se(μ̂) = σ̂/√n,  se(σ̂) = σ̂/√(2n) (inverse Fisher information, diagonal);
 *   95% intervals: μ̂ ± z·se(μ̂);  σ̂·exp(±z/√(2n)) (Wald on log σ, so it stays positive);
 *   ℓ = −Σy_i − n·log σ̂ − (n/2)·log(2π) − n/2. */
gboolean an_fit_lognormal(const double *x, size_t n, AnFit *out, GError **error);

/* Gamma, f(x) = x^{k−1} exp(−x/θ) / (Γ(k) θ^k). Needs n >= 2 finite values > 0, not all equal.
 *   s = log x̄ − mean(log x_i) (> 0 unless all values are equal; terms near x̄ as −log1p((x_i − x̄)/x̄));
 *   k̂ solves g(k) = log k − ψ(k) − s = 0 (ψ the digamma function), by Minka's generalised Newton update
 *     1/k ← 1/k + g(k) / (k² g'(k)), g'(k) = 1/k − ψ'(k), from k₀ = (3 − s + √((s − 3)² + 24 s)) / (12 s),
 *     until a step changes k by less than 1e-12·k (at most 100 steps); from k = 20 on, g and g' come from
 *     the asymptotic series log k − ψ(k) = 1/2k + 1/12k² − 1/120k⁴ + ... (see fit.c), which keeps its
 *     precision for nearly constant samples (k in the millions);
 *   θ̂ = x̄ / k̂;
 *   per-sample Fisher information [[ψ'(k), 1/θ], [1/θ, k/θ²]] (ψ' the trigamma function), inverted:
 *     se(k̂) = √(k / (n (k ψ'(k) − 1))),  se(θ̂) = θ·√(ψ'(k) / (n (k ψ'(k) − 1))),  k ψ'(k) − 1 = −k g'(k);
 *   95% intervals Wald on the log scale: k̂·exp(±z·se(k̂)/k̂), θ̂·exp(±z·se(θ̂)/θ̂);
 *   ℓ = (k−1)·Σ log x_i − Σ x_i/θ − n·k·log θ − n·log Γ(k). */
gboolean an_fit_gamma(const double *x, size_t n, AnFit *out, GError **error);

/* The fitted distribution's CDF at x (gsl_cdf_exponential_P, gsl_cdf_lognormal_P, gsl_cdf_gamma_P; see
 * "Large parameters" for gamma shapes above 2e5). */
double an_fit_cdf(const AnFit *fit, double x);
/* Its quantile function at f in [0, 1]: gsl_cdf_exponential_Pinv, gsl_cdf_lognormal_Pinv, and for the gamma
 * a bisection on its CDF (gsl_cdf_gamma_Pinv fails for small and large shapes; see "Large parameters"). */
double an_fit_quantile(const AnFit *fit, double f);
/* "exponential", "lognormal", "gamma". */
const char *an_fit_family_name(AnFitFamily family);
/* The name of parameter i: "mean"; "mu", "sigma"; "shape", "scale". */
const char *an_fit_param_name(AnFitFamily family, guint i);

/* The fit as JSON: {"family", "n", "params": {<name>: {"value", "se", "lo", "hi"}...}, "loglik", "aic",
 * "ks": {"d", "p"}}, keys in this order. Free with json_decref(). */
json_t *an_fit_to_json(const AnFit *fit);

/* ---- The empirical distribution ------------------------------------------------------------------------ */

typedef struct AnEmpirical AnEmpirical;

/* A sorted copy of n >= 1 finite values (NaN and infinities are an error). Free with an_empirical_free(). */
AnEmpirical *an_empirical_new(const double *x, size_t n, GError **error);
void an_empirical_free(AnEmpirical *emp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AnEmpirical, an_empirical_free)

size_t an_empirical_n(const AnEmpirical *emp);
/* The values in ascending order (owned by `emp`). */
const double *an_empirical_sorted(const AnEmpirical *emp);
double an_empirical_mean(const AnEmpirical *emp);
/* F_n(x) = #{x_i <= x} / n. */
double an_empirical_cdf(const AnEmpirical *emp, double x);
/* The type-7 quantile (linear interpolation, R's default, as the summaries use): with d = (n − 1)·f and
 * i = ⌊d⌋, x_(i) + (d − i)(x_(i+1) − x_(i)) on the 0-based sorted values; f in [0, 1]. */
double an_empirical_quantile(const AnEmpirical *emp, double f);
/* A distribution-free interval for the f-quantile q from order statistics: with B ~ Binomial(n, f) and
 * α = 1 − level, l is the largest index with P(B <= l − 1) <= α/2 and u the smallest with
 * P(B <= u − 1) >= 1 − α/2; then P(x_(l) <= q < x_(u)) = P(l <= B <= u − 1) >= level (1-based order
 * statistics). Returns FALSE (lo, hi untouched) when the sample is too small for that (l < 1 or u > n). With
 * n·f and n·(1 − f) above 2e5, l and u come from the Cornish-Fisher expansion of the binomial quantiles
 * with a continuity correction, and may be off by one order statistic. */
gboolean an_empirical_quantile_ci(const AnEmpirical *emp, double f, double level, double *lo, double *hi);

/* ---- Shares and rates from counts ---------------------------------------------------------------------- */

typedef enum {
  /* Wilson's score interval: centre (p̂ + z²/2n)/(1 + z²/n), half-width
   * z/(1 + z²/n)·√(p̂(1 − p̂)/n + z²/4n²). Close to nominal coverage; the default choice. */
  AN_CI_WILSON,
  /* Clopper-Pearson's exact interval: [Beta⁻¹(α/2; k, n−k+1), Beta⁻¹(1−α/2; k+1, n−k)], with 0 for the
   * lower end when k = 0 and 1 for the upper end when k = n. Coverage at least the level (conservative). */
  AN_CI_CLOPPER_PEARSON,
} AnCiMethod;

/* The share k/n of n >= 1 trials (e.g. main blocks mined by one pool among all main blocks): value
 * p̂ = k/n, se = √(p̂(1 − p̂)/n), and the interval of `method` at `level` (e.g. 0.95). k <= n. n = 0 is an
 * error (no trials). */
gboolean an_share_ci(uint64_t k, uint64_t n, double level, AnCiMethod method, AnEstimate *out,
                     GError **error);

/* Multinomial shares of m >= 1 categories (e.g. pools) from their counts (n = Σ counts >= 1): out[i] is
 * an_share_ci(counts[i], n, ...). With `simultaneous`, each interval is computed at level 1 − (1 − level)/m
 * (Bonferroni), so that all m intervals hold together with probability at least `level`. */
gboolean an_shares_ci(const uint64_t *counts, guint m, double level, AnCiMethod method, gboolean simultaneous,
                      AnEstimate *out, GError **error);

/* The rate of a Poisson process from `count` events over `duration` > 0 (any unit; the rate is per that
 * unit): value k/T, se = √k/T, and Garwood's exact interval
 *   [χ²_{α/2}(2k) / 2T, χ²_{1−α/2}(2k + 2) / 2T], with 0 for the lower end when k = 0.
 * A duration that is not finite and > 0 is an error. */
gboolean an_poisson_rate_ci(uint64_t count, double duration, double level, AnEstimate *out, GError **error);

#define AN_FIT_ERROR (an_fit_error_quark())
GQuark an_fit_error_quark(void);

typedef enum {
  AN_FIT_ERROR_INVALID_DATA,   /* too few values, a value out of the family's support, all values equal */
  AN_FIT_ERROR_NO_CONVERGENCE, /* the gamma shape's Newton iteration did not converge */
} AnFitErrorCode;

G_END_DECLS
