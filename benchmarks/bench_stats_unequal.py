"""Welch's test with unequal seed counts and spreads: its exact error rate under the null, and the
candidates weighed to replace it (benchmarks/RESULTS.md, "Unequal seed counts and spreads").

Normal runs, group sizes n1 + n2 (2..8), group 1's sd r times group 2's. Welch's statistic
T = D / sqrt(s1^2/n1 + s2^2/n2) has, given the weight w = (sigma1^2/n1) / (sigma1^2/n1 + sigma2^2/n2),
the law T = Z / sqrt(w U1 + (1 - w) U2) with U_i = chi2_{d_i} / d_i (d_i = n_i - 1). Writing
(U1 d1, U2 d2) = R^2 (B, 1 - B), R^2 ~ chi2_{d1 + d2} independent of B ~ Beta(d1/2, d2/2), makes
every null probability of a test of the form |T| > c(w_hat) a one-dimensional integral over B
(Wang 1971, JASA 66:605, computed Welch's error rate so): P = E_B[2 t_nu.sf(c(w_hat(B)) sqrt(nu) g(B))],
nu = d1 + d2, g(B)^2 = w B/d1 + (1 - w)(1 - B)/d2; Gauss-Legendre over B = sin^2(theta) here.

Parts (``--part``):
- ``exact``: the error rate of report's rule (``stats.welch``: Welch-Satterthwaite df, Hsu's at two
  seeds against more), of scipy's Welch test, of the parametric bootstrap test (Krishnamoorthy, Lu &
  Mathew 2007: the law above at w = w_hat, computed exactly instead of resampled) and the level of
  Welch's test whose largest error rate over every spread ratio is alpha ("calibrated");
- ``compare``: ``stats.compare`` itself on simulated runs (the cells that matter), as a check;
- ``power``: power of each at equal seeds and spread, 1 and 2 sd apart;
- ``frontier``: the best any critical value depending on w_hat alone does at equal seeds.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_unequal.py --part exact
    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_unequal.py --part compare --reps 20000
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from scipy import optimize, special
from scipy import stats as st

from sweepgen.run.report.stats import calibrated
from sweepgen.run.report.stats import verdicts as stats

ALPHA = 0.05
HSU_DF = 1.0  # Hsu's df at two seeds against more (min(n) - 1), what report used before the calibration
RATIOS = (0.25, 0.5, 1.0, 2.0, 4.0)  # group 1's sd over group 2's
_X, _W = special.roots_legendre(96)
THETA = (_X + 1) * np.pi / 4  # B = sin^2(theta), theta in (0, pi/2)
WEIGHT = _W * np.pi / 4
# every spread ratio: the weight of group 1 from 0 to 1, ends included
WEIGHTS = np.concatenate([[0, 1e-6, 1e-4], np.linspace(0.001, 0.999, 300), [1 - 1e-4, 1 - 1e-6, 1]])

Crit = Callable[[np.ndarray, int, int, float], np.ndarray]  # c(w_hat, n1, n2, alpha)


def _angles(n1: int, n2: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sin^2, cos^2 of the nodes and their weights times the density of theta."""
    d1, d2 = n1 - 1, n2 - 1
    s, c = np.sin(THETA), np.cos(THETA)
    density = 2 * s ** (d1 - 1) * c ** (d2 - 1) / special.beta(d1 / 2, d2 / 2)
    return s * s, c * c, WEIGHT * density


def law_sf(t: float, w: float, n1: int, n2: int) -> float:
    """P(|T| > t) for T = Z / sqrt(w U1 + (1 - w) U2): the null law of Welch's statistic at weight w."""
    s2, c2, dens = _angles(n1, n2)
    nu = n1 + n2 - 2
    g = np.sqrt(nu * (w * s2 / (n1 - 1) + (1 - w) * c2 / (n2 - 1)))
    return float(np.sum(dens * 2 * st.t.sf(t * g, nu)))


def error_rate(w: np.ndarray, n1: int, n2: int, alpha: float, crit: Crit) -> np.ndarray:
    """The exact null rejection rate of |T| > crit(w_hat) at each true weight in ``w``."""
    s2, c2, dens = _angles(n1, n2)
    nu = n1 + n2 - 2
    a = np.atleast_1d(w)[:, None] * s2 / (n1 - 1)
    b = (1 - np.atleast_1d(w)[:, None]) * c2 / (n2 - 1)
    w_hat = a / (a + b)
    return np.sum(dens * 2 * st.t.sf(crit(w_hat, n1, n2, alpha) * np.sqrt(nu * (a + b)), nu), axis=1)


def law_quantile(w: float, n1: int, n2: int, alpha: float) -> float:
    """The t with P(|T| > t) = alpha under the law at weight w."""
    return float(optimize.brentq(lambda t: law_sf(t, w, n1, n2) - alpha, 0.1, 1e6))


def welch_df(w_hat: np.ndarray, n1: int, n2: int) -> np.ndarray:
    return 1 / (w_hat**2 / (n1 - 1) + (1 - w_hat) ** 2 / (n2 - 1))


def scipy_welch(w_hat: np.ndarray, n1: int, n2: int, alpha: float) -> np.ndarray:
    return st.t.ppf(1 - alpha / 2, welch_df(w_hat, n1, n2))


def report_rule(w_hat: np.ndarray, n1: int, n2: int, alpha: float) -> np.ndarray:
    """What ``stats.welch`` did before the calibrated level: Welch-Satterthwaite, Hsu's df at two
    seeds against more (what `run --until-decided` still tests)."""
    if min(n1, n2) == 2 and n1 != n2:
        return np.full_like(w_hat, st.t.ppf(1 - alpha / 2, HSU_DF))
    return scipy_welch(w_hat, n1, n2, alpha)


def bootstrap_rule(w_hat: np.ndarray, n1: int, n2: int, alpha: float) -> np.ndarray:
    """The parametric bootstrap test's critical value: the law at w = w_hat (on a grid, spline)."""
    grid = np.linspace(0, 1, 61)
    cs = [law_quantile(g, n1, n2, alpha) for g in grid]
    spline = _spline(grid, np.log(cs))
    return np.exp(spline(w_hat))


def _spline(x: np.ndarray, y: list[float] | np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    from scipy.interpolate import CubicSpline

    return CubicSpline(x, y)


def calibrated_level(n1: int, n2: int, alpha: float) -> float:
    """The level at which scipy's Welch test errs at most ``alpha`` at every spread ratio."""

    def worst(level: float) -> float:
        return float(error_rate(WEIGHTS, n1, n2, level, scipy_welch).max()) - alpha

    return alpha if worst(alpha) <= 0 else optimize.brentq(worst, alpha * 1e-3, alpha, xtol=1e-7)


def _weights(n1: int, n2: int) -> np.ndarray:
    r2 = np.asarray(RATIOS) ** 2
    return (r2 / n1) / (r2 / n1 + 1 / n2)


def exact() -> None:
    print("| n1 + n2 | rule | r = 1/4 | 1/2 | 1 | 2 | 4 | worst over every ratio |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n1 in range(2, 9):
        for n2 in range(n1, 9):
            level = calibrated_level(n1, n2, ALPHA)
            rules: dict[str, tuple[Crit, float]] = {
                "report now": (report_rule, ALPHA),
                "scipy Welch": (scipy_welch, ALPHA),
                "param. bootstrap": (bootstrap_rule, ALPHA),
                f"calibrated ({level:.4f})": (scipy_welch, level),
            }
            for name, (crit, a) in rules.items():
                cells = error_rate(_weights(n1, n2), n1, n2, a, crit)
                worst = error_rate(WEIGHTS, n1, n2, a, crit).max()
                row = " | ".join(f"{x:.2%}" for x in cells)
                print(f"| {n1} + {n2} | {name} | {row} | {worst:.2%} |", flush=True)


def simulate(n1: int, n2: int, r: float, reps: int, shift: float = 0.0) -> dict[str, float]:
    """Share of replications called better/worse by ``stats.compare`` (arm: n1 runs, sd r), and on
    the same draws by the calibrated level and the parametric bootstrap."""
    rng = np.random.default_rng(n1 * 1000 + n2 * 10 + int(4 * r))
    level = calibrated_level(n1, n2, ALPHA)
    calls = {"report": 0, "calibrated": 0, "bootstrap": 0}
    for _ in range(reps):
        arm, base = rng.normal(shift, r, n1), rng.normal(0.0, 1.0, n2)
        c = stats.compare(
            [("base", base.tolist()), ("arm", arm.tolist())], baseline="base", mode="max", seeds_needed=False
        )
        calls["report"] += c.comparisons[0].verdict in ("better", "worse")
        ea, eb = arm.var(ddof=1) / n1, base.var(ddof=1) / n2
        t = abs(arm.mean() - base.mean()) / np.sqrt(ea + eb)
        w_hat = np.array([ea / (ea + eb)])
        calls["calibrated"] += bool(t > scipy_welch(w_hat, n1, n2, level)[0])
        calls["bootstrap"] += bool(law_sf(t, ea / (ea + eb), n1, n2) < ALPHA)
    return {k: v / reps for k, v in calls.items()}


def compare(reps: int) -> None:
    print("| arm + baseline | arm sd | report (stats.compare) | calibrated | bootstrap | reps |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    cells = [(3, 5, 2.0), (3, 5, 4.0), (3, 8, 2.0), (3, 8, 4.0), (4, 8, 2.0), (4, 8, 4.0)]
    cells += [(3, 3, 4.0), (4, 4, 4.0), (5, 5, 4.0), (2, 5, 1.0)]
    for n1, n2, r in cells:
        out = simulate(n1, n2, r, reps)
        row = " | ".join(f"{out[k]:.2%}" for k in ("report", "calibrated", "bootstrap"))
        print(f"| {n1} + {n2} | {r:g}x | {row} | {reps} |", flush=True)


def power(reps: int) -> None:
    """Power of each rule; "calibrated" is report's level now (``calibrated.level``, the shipped code)."""
    print("| n1 + n2 | shift | before (Hsu at 2 + k) | scipy Welch | calibrated (report now) | bootstrap |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    sizes = [(n, n) for n in range(2, 9)] + [(3, 5), (3, 8), (4, 8), (2, 5), (2, 8)]
    for n1, n2 in sizes:
        level = calibrated.level(n1, n2, ALPHA)
        rng = np.random.default_rng(100 * n1 + n2)
        for shift in (1.0, 2.0):
            a, b = rng.normal(shift, 1.0, (reps, n1)), rng.normal(0.0, 1.0, (reps, n2))
            ea, eb = a.var(1, ddof=1) / n1, b.var(1, ddof=1) / n2
            t = np.abs(a.mean(1) - b.mean(1)) / np.sqrt(ea + eb)
            w_hat = ea / (ea + eb)
            shares = [
                (t > report_rule(w_hat, n1, n2, ALPHA)).mean(),
                (t > scipy_welch(w_hat, n1, n2, ALPHA)).mean(),
                (t > scipy_welch(w_hat, n1, n2, level)).mean(),
                (t > bootstrap_rule(w_hat, n1, n2, ALPHA)).mean(),
            ]
            row = " | ".join(f"{x:.1%}" for x in shares)
            print(f"| {n1} + {n2} | {shift:g} sd | {row} |", flush=True)


def frontier(n: int) -> None:
    """The most power (sum at 1 and 2 sd, equal spread) any rule |T| > c(w_hat) reaches at n + n
    seeds while erring at most alpha at every spread ratio: c free (log-linear between 9 knots of
    |w_hat - 1/2|), started from the calibrated level, SLSQP. Not a referenced method: it measures
    how far the candidates are from what a critical value depending on w_hat alone can do."""
    knots = np.linspace(0, 0.5, 9)
    ratios = WEIGHTS[WEIGHTS >= 0.5]  # c is symmetric in w_hat at equal n: one side suffices
    s2, _, dens = _angles(n, n)  # at equal spread and n, w_hat = B and T is noncentral t, 2(n-1) df

    def crit(theta: np.ndarray) -> Crit:
        return lambda w_hat, n1, n2, alpha: np.exp(np.interp(np.abs(w_hat - 0.5), knots, theta))

    def power_at(theta: np.ndarray, shift: float) -> float:
        c, nc = crit(theta)(s2, n, n, ALPHA), shift / np.sqrt(2 / n)
        return float(np.sum(dens * (st.nct.sf(c, 2 * n - 2, nc) + st.nct.cdf(-c, 2 * n - 2, nc))))

    start = np.log(scipy_welch(0.5 + knots, n, n, calibrated_level(n, n, ALPHA)))
    best = optimize.minimize(
        lambda th: -(power_at(th, 1.0) + power_at(th, 2.0)),
        start,
        constraints=[{"type": "ineq", "fun": lambda th: ALPHA - error_rate(ratios, n, n, ALPHA, crit(th))}],
        method="SLSQP",
        options={"maxiter": 200, "ftol": 1e-9},
    ).x
    welch = np.log(scipy_welch(0.5 + knots, n, n, ALPHA))
    for name, theta in (("Welch", welch), ("calibrated", start), ("best c(w_hat)", best)):
        worst = error_rate(ratios, n, n, ALPHA, crit(theta)).max()
        shares = f"{power_at(theta, 1.0):.1%} | {power_at(theta, 2.0):.1%} | {worst:.2%}"
        print(f"| {n} + {n} | {name} | {shares} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--part", choices=("exact", "compare", "power", "frontier"), default="exact")
    parser.add_argument("--reps", type=int, default=20000)
    args = parser.parse_args()
    if args.part == "exact":
        exact()
    elif args.part == "compare":
        compare(args.reps)
    elif args.part == "frontier":
        print("| n + n | rule | power 1 sd | power 2 sd | worst error rate over every ratio |")
        print("| --- | --- | ---: | ---: | ---: |")
        for n in (3, 4, 5):
            frontier(n)
    else:
        power(args.reps)


if __name__ == "__main__":
    main()
