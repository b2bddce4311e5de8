"""PRINTING AND CLI: error bars: a standard error and a 95 % interval for every accuracy and mean
that estimates something (a part of every grader; docs/reports.md "Error bars" says which
formula and why; see CONTRIBUTING.md)."""
import math
# -- end of source-tree preamble: the build keeps only what follows --
Z95 = 1.959963984540054     # the standard normal's 97.5 % quantile
# Student's t 97.5 % quantiles for 1..30 degrees of freedom (beyond 30: within 4 % of Z95)
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t975(df: int) -> float:
    return T975[df - 1] if 1 <= df <= len(T975) else Z95


def wilson(p: float, n: float) -> list:
    """The Wilson score 95 % interval of a proportion p observed over n (possibly effective,
    non-integer) trials: never outside [0, 1], and not of zero width at p = 0 or 1."""
    if not n or n <= 0:
        return None
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def proportion_interval(p: float, stderr: float, n: int) -> list:
    """The 95 % interval of a proportion whose standard error is `stderr` (clustered or
    stratified): Wilson's on the effective sample size p(1-p)/stderr^2 (Kish), which is n itself
    for independent trials; n where the proportion is 0 or 1 (no spread to scale by)."""
    n_eff = p * (1 - p) / (stderr * stderr) if stderr and 0 < p < 1 else n
    return wilson(p, min(n_eff, n) if n else n_eff)


def binomial_estimate(k: int, n: int) -> tuple:
    """(stderr, ci95) of k successes in n independent trials (None, None when n = 0)."""
    if not n:
        return None, None
    p = k / n
    return round(math.sqrt(p * (1 - p) / n), 4), wilson(p, n)


def clustered_estimate(clusters: list) -> tuple:
    """(stderr, ci95) of the pooled proportion sum(k)/sum(n) over clusters [(k, n), ...] whose
    units are not independent (SciCode's steps within one problem): the cluster-robust (CR1)
    standard error sqrt(G/(G-1) * sum((k_g - p n_g)^2)) / N; the interval is Wilson's on the
    effective sample size, never more than N.  One cluster: no estimate of the spread (None)."""
    clusters = [(k, n) for k, n in clusters if n]
    big_n = sum(n for _, n in clusters)
    g = len(clusters)
    if g < 2 or not big_n:
        return None, None
    p = sum(k for k, _ in clusters) / big_n
    var = g / (g - 1) * sum((k - p * n) ** 2 for k, n in clusters) / big_n ** 2
    se = math.sqrt(var)
    return round(se, 4), proportion_interval(p, se, big_n)


def mean_estimate(values: list, bounds: tuple = (0.0, 1.0)) -> tuple:
    """(stderr, ci95) of the mean of independent values: s/sqrt(n) and Student's t interval
    (n - 1 degrees of freedom), clipped to the values' possible range `bounds`; fewer than two
    values: (None, None)."""
    n = len(values)
    if n < 2:
        return None, None
    m = sum(values) / n
    s = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    se = s / math.sqrt(n)
    half = t975(n - 1) * se
    return round(se, 4), [round(max(bounds[0], m - half), 4), round(min(bounds[1], m + half), 4)]


def interval_text(ci) -> str:
    return "n/a" if not ci else f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def intervals_overlap(a, b) -> bool:
    return bool(a and b) and a[0] <= b[1] and b[0] <= a[1]
