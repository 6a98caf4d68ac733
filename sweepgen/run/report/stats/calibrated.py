"""Welch's t-test at a level calibrated over the variance ratio: its exact error rate on normal runs,
the level at which its worst error rate over every ratio of the two groups' spreads is the stated
one, and the p-value that goes with it (the largest, over that ratio, probability that Welch's p
falls at or below the observed one).

Why: with 2-4 seeds a side Welch's test (Welch–Satterthwaite df) errs more than it says where the
spreads differ: up to 7.0% at 3 + 8 seeds, 5.9% at 3 + 3 (benchmarks/RESULTS.md §22), and several
times its level at Holm's small levels. The spread ratio is a nuisance parameter the test cannot
know; taking the p-value's supremum over it is the classical construction of a valid p-value, here
computed exactly rather than bounded. Its rejections are a subset of Welch's.

How: given the weight w = (sigma1^2/n1) / (sigma1^2/n1 + sigma2^2/n2), Welch's statistic is
Z / sqrt(w U1 + (1 - w) U2), U_i = chi2_{d_i} / d_i (d_i = n_i - 1). Splitting the two chi-squares
into their sum R^2 ~ chi2_{d1 + d2} and the share B = sin^2(theta) ~ Beta(d1/2, d2/2) makes every
rejection rate a one-dimensional integral over theta (how Wang 1971, JASA 66:605, computed Welch's
error rate), done by Gauss–Legendre; the supremum over w is a grid search refined by a bounded
scalar search. Each (n1, n2, level) is computed once per process (``level`` is cached): a report
compares many arms at few distinct seed counts and Holm levels. Welch's critical values on the
grid come from an interpolant of scipy's t quantile over the df, confirmed against it
(``_critical``): 65 quantiles per grid instead of 3,744, the same numbers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# a weight grid even on the logit scale (the worst ratio can lie near either end), ends included
LOGIT_SPAN, LOGIT_POINTS = 9.0, 37
LEVEL_RTOL = 1e-9  # the calibrated level's relative tolerance: far below any reported digit
# the t quantile's interpolant over the df (``_critical``): its degree, and its largest error in log q
CHEB_DEGREE, CHEB_RTOL = 31, 1e-12
FEW_QUANTILES = 256  # at most this many df: stdtrit costs less than the interpolant (one weight's)
CACHED_WEIGHTS = 64  # sets of at most this many weights (the grid) keep their level-free part
FAR_SHIFT = 100.0  # noncentralities past which the power's tail is integrated over Z (``_upper_far``)


@functools.lru_cache(maxsize=256)
def _nodes(n1: int, n2: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sin^2 and cos^2 of the quadrature nodes over theta, and their weights times theta's density.
    More nodes as the groups grow: the density narrows like 1 / sqrt(n1 + n2)."""
    import numpy as np
    from scipy import special

    d1, d2 = n1 - 1, n2 - 1
    x, weight = _legendre(max(96, 16 * math.ceil(math.sqrt(d1 + d2))))
    theta = (x + 1) * math.pi / 4
    s, c = np.sin(theta), np.cos(theta)
    log_density = (d1 - 1) * np.log(s) + (d2 - 1) * np.log(c) - special.betaln(d1 / 2, d2 / 2)
    return s * s, c * c, weight * math.pi / 4 * 2 * np.exp(log_density)


@functools.lru_cache(maxsize=64)
def _legendre(count: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [-1, 1], read-only: a power search asks ``_nodes`` for
    hundreds of group sizes but few node counts, and each costs scipy an eigenvalue problem."""
    from scipy import special

    x, weight = special.roots_legendre(count)
    x.setflags(write=False)
    weight.setflags(write=False)
    return x, weight


@functools.lru_cache(maxsize=64)
def _cached_frame(n1: int, n2: int, key: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_frame`` of the weights whose bytes are ``key`` (the grid's come back at every level and p),
    with the Chebyshev basis at its df in place of where they lie: the interpolant is then one
    product with its coefficients."""
    import numpy as np
    from numpy.polynomial import chebyshev

    scale, df, where = _frame(np.frombuffer(key, dtype=float), n1, n2)
    return scale, df, chebyshev.chebvander(where, CHEB_DEGREE)


def _frame(weights: np.ndarray, n1: int, n2: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What ``rates`` needs that does not depend on the level: at each (weight, node), sqrt(nu (a +
    b)), Welch's estimated df, and where 1/df lies in its range (``_df_range``) mapped onto [-1, 1]."""
    import numpy as np

    s2, c2, _ = _nodes(n1, n2)
    d1, d2 = n1 - 1, n2 - 1
    a = weights[:, None] * s2 / d1  # group 1's share of the estimated squared error
    b = (1 - weights[:, None]) * c2 / d2
    w_hat = a / (a + b)
    df = 1 / (w_hat**2 / d1 + (1 - w_hat) ** 2 / d2)
    low, high = _df_range(n1, n2)
    return np.sqrt((d1 + d2) * (a + b)), df, (2 / df - (low + high)) / (high - low)


def _df_range(n1: int, n2: int) -> tuple[float, float]:
    """1/df of Welch's df at its largest (d1 + d2) and smallest (the smaller d): every df it takes."""
    return 1 / (n1 + n2 - 2), 1 / (min(n1, n2) - 1)


@functools.lru_cache(maxsize=1)
def _chebyshev() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The interpolation nodes on [-1, 1] (Chebyshev points of the first kind), the matrix from
    values there to Chebyshev coefficients, the check points (the extrema of the next polynomial,
    ends included: where an interpolant of an analytic function errs most) and their basis."""
    import numpy as np
    from numpy.polynomial import chebyshev

    count = CHEB_DEGREE + 1
    nodes = np.cos(np.pi * (np.arange(count) + 0.5) / count)
    fit = np.linalg.inv(chebyshev.chebvander(nodes, CHEB_DEGREE))
    checks = np.cos(np.pi * np.arange(count + 1) / count)
    return nodes, fit, checks, chebyshev.chebvander(checks, CHEB_DEGREE)


@functools.lru_cache(maxsize=4096)
def _interpolant(n1: int, n2: int, tail: float) -> np.ndarray | None:
    """The Chebyshev coefficients of log q(1/df) over every df of (n1, n2), q Student's upper
    ``tail`` quantile, or None where the interpolant does not agree with scipy's ``stdtrit`` to
    CHEB_RTOL at CHEB_DEGREE + 2 points other than its nodes (its extrema of error). Cached: a
    worst rate asks it at one level for its grid and every step of its search."""
    import numpy as np
    from scipy import special

    low, high = _df_range(n1, n2)
    nodes, fit, checks, at_checks = _chebyshev()

    def log_quantile(u: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            out: np.ndarray = np.log(-special.stdtrit(2 / ((high - low) * u + (low + high)), tail))
        return out

    coefficients: np.ndarray = fit @ log_quantile(nodes)
    if not np.all(np.abs(at_checks @ coefficients - log_quantile(checks)) <= CHEB_RTOL):  # NaN fails too
        return None
    return coefficients


def _critical(df: np.ndarray, where: np.ndarray, n1: int, n2: int, tail: float) -> np.ndarray:
    """Student's t upper ``tail`` quantile at each df (``where``: 1/df mapped onto [-1, 1] by
    ``_frame``, or the Chebyshev basis there, one more axis). For a few df (one weight's, in the
    worst rate's search) scipy's ``stdtrit`` itself; for many (3,744 on the grid), ``stdtrit`` to
    its own last digits from CHEB_DEGREE + 1 of its values per (n1, n2, level): log q is analytic
    in 1/df, so a Chebyshev interpolant over the df's range is exact to ~1e-13 (benchmarks/
    RESULTS.md §41). Where it is not confirmed (quantiles near 0, where stdtrit's own relative
    digits go; two seeds against hundreds at tiny levels) every quantile is ``stdtrit``'s."""
    import numpy as np
    from numpy.polynomial import chebyshev
    from scipy import special

    coefficients = None if df.size <= FEW_QUANTILES else _interpolant(n1, n2, tail)
    if coefficients is None:
        return -special.stdtrit(df, tail)  # type: ignore[no-any-return]
    if where.shape != df.shape:
        return np.exp(where @ coefficients)  # type: ignore[no-any-return]
    return np.exp(chebyshev.chebval(where, coefficients))  # type: ignore[no-any-return]


def rates(weights: np.ndarray, n1: int, n2: int, level: float, shift: float = 0.0) -> np.ndarray:
    """The exact rate (normal runs) at which Welch's test at ``level`` rejects, at each true weight
    of group 1 in ``weights`` (0: group 1 has no noise, 1: group 2 has none): its error rate at equal
    means, its power where they are ``shift`` true standard errors of the difference apart."""
    import numpy as np
    from scipy import special

    if level >= 1.0:
        return np.ones_like(weights, dtype=float)
    if level <= 0.0:
        return np.zeros_like(weights, dtype=float)
    _, _, dens = _nodes(n1, n2)
    nu = n1 + n2 - 2
    weights = np.ascontiguousarray(np.atleast_1d(weights), dtype=float)
    if 1 < weights.size <= CACHED_WEIGHTS:
        scale, df, where = _cached_frame(n1, n2, weights.tobytes())
    else:  # one weight (the search's), or many (a dense check's): cheap next to the quantiles
        scale, df, where = _frame(weights, n1, n2)
    critical = _critical(df, where, n1, n2, level / 2)  # an upper tail: 1 - level / 2 is 1 at tiny levels
    # P(|Z + shift| / R > c / (sqrt(nu) g)) with R^2 ~ chi2_nu / nu: Student's t with nu df,
    # noncentral by ``shift``
    bound = critical * scale
    if shift == 0.0:
        tails = 2 * special.stdtr(nu, -bound)
    else:
        tails = _noncentral_tails(nu, abs(shift), bound)
    out: np.ndarray = np.sum(dens * tails, axis=1)
    return out


def _noncentral_tails(nu: int, shift: float, bound: np.ndarray) -> np.ndarray:
    """P(|T| > bound), T noncentral t (``nu`` df, noncentrality ``shift`` >= 0). scipy's ``nctdtr``
    costs time linear in the noncentrality and gives NaN in some far tails: past ``FAR_SHIFT``, and
    where it fails, the upper tail is E_Z[P(R < (Z + shift) / bound)], R^2 ~ chi2_nu / nu, by
    Gauss-Hermite over Z (``_upper_far``), and the lower tail P(Z + shift < -bound R) is at most
    Phi(-shift): 0 to any digit there (scipy fails on it only at shifts of 10 or more, Phi < 1e-23)."""
    import numpy as np
    from scipy import special

    if shift > FAR_SHIFT:
        return _upper_far(nu, shift, bound)
    low, high = special.nctdtr(nu, shift, -bound), special.nctdtr(nu, shift, bound)
    upper = 1 - high
    if np.isnan(high).any():
        upper = np.where(np.isnan(high), _upper_far(nu, shift, bound), upper)
    out: np.ndarray = np.where(np.isnan(low), 0.0, low) + upper
    return out


def _upper_far(nu: int, shift: float, bound: np.ndarray) -> np.ndarray:
    """P(Z + shift > bound R): smooth in Z once shift is large (Z + shift > 0 but for Phi(-shift))."""
    import numpy as np
    from scipy import special

    z, w = _hermite()
    reach = np.maximum(z.reshape((-1,) + (1,) * bound.ndim) + shift, 0.0) / bound
    out: np.ndarray = np.tensordot(w, special.chdtr(nu, nu * reach * reach), axes=1)
    return out


@functools.lru_cache(maxsize=1)
def _hermite() -> tuple[np.ndarray, np.ndarray]:
    """Probabilists' Gauss-Hermite nodes, weights normalised to sum to 1 (E over a standard normal)."""
    from scipy import special

    z, w = special.roots_hermitenorm(48)
    return z, w / w.sum()


@functools.lru_cache(maxsize=1)
def _grid() -> tuple[np.ndarray, np.ndarray]:
    """The weights searched first, and their logits (the ends 0 and 1 standing at -40 and 40)."""
    import numpy as np
    from scipy import special

    logits = np.linspace(-LOGIT_SPAN, LOGIT_SPAN, LOGIT_POINTS)
    return np.concatenate([[0.0], special.expit(logits), [1.0]]), np.concatenate([[-40.0], logits, [40.0]])


def worst_rate(n1: int, n2: int, level: float) -> float:
    """The largest error rate of Welch's test at ``level`` over every ratio of spreads."""
    if level <= 0.0:
        return 0.0
    if level >= 1.0:
        return 1.0
    import numpy as np
    from scipy import optimize, special

    n1, n2 = sorted((n1, n2))  # the rate at (n2, n1, w) is the rate at (n1, n2, 1 - w)
    weights, logits = _grid()
    on_grid = rates(weights, n1, n2, level)
    best = int(np.argmax(on_grid))
    low, high = logits[max(best - 1, 0)], logits[min(best + 1, len(logits) - 1)]
    found = optimize.minimize_scalar(
        lambda z: -rates(np.array([special.expit(z)]), n1, n2, level)[0],
        bounds=(low, high),
        method="bounded",
        options={"xatol": 1e-4},  # the rate is flat at its maximum: an error of 1e-4 in z moves it ~1e-8
    )
    return float(max(on_grid[best], -found.fun))


def level(n1: int, n2: int, alpha: float) -> float:
    """The level at which Welch's test errs at most ``alpha`` at every ratio of spreads (normal runs):
    the root of worst_rate = alpha, at most ``alpha`` (Welch's test never errs less than its level
    at every ratio: the rate at a ratio where one group has no noise is its level, or above)."""
    small, large = sorted((n1, n2))  # one entry for both orders
    return _level(small, large, alpha)


@functools.lru_cache(maxsize=4096)
def _level(n1: int, n2: int, alpha: float) -> float:
    from scipy import optimize

    if worst_rate(n1, n2, alpha) <= alpha:
        return alpha

    # on log scales the worst rate is nearly a straight line in the level (a power of it: with two
    # seeds, t with 1 df, far from proportional), so brentq there takes few steps at any alpha
    def excess(log_level: float) -> float:
        rate = worst_rate(n1, n2, math.exp(log_level))
        return math.log(rate) - math.log(alpha) if rate > 0 else -math.inf

    low = math.log(alpha) - 10.0
    while excess(low) > 0:
        low -= 10.0
    root = optimize.brentq(excess, low, math.log(alpha), xtol=LEVEL_RTOL)
    found = math.exp(root - LEVEL_RTOL)  # the side of the root where the rate is at most alpha
    # far in the tails (two seeds against hundreds, at a small Holm level) the integral loses its
    # digits; a level whose rate is not confirmed is not used: none is (0, nothing rejected)
    return found if worst_rate(n1, n2, found) <= alpha * (1 + 1e-6) else 0.0


def p_value(welch_p: float, n1: int, n2: int) -> float:
    """The calibrated p of Welch's ``welch_p``: the largest probability, over every ratio of spreads,
    that Welch's p falls at or below the observed one (normal runs, equal means). Rejecting where
    it is below alpha is rejecting where Welch's p is below ``level(n1, n2, alpha)``."""
    return min(1.0, worst_rate(n1, n2, welch_p))


def p_values(welch_p: np.ndarray, n1: int, n2: int) -> np.ndarray:
    """``p_value`` of each of Welch's p in ``welch_p`` at one (n1, n2), in one pass: the grid's rates
    at every level together, then scipy's bounded search in lockstep (``_bounded_max``). The same
    numbers as ``p_value`` one at a time (the same quantiles, the same search path), in 20-25% less
    CPU where many groups share their seed counts (the best mean's test; its cost is scipy's t tails
    on the grid, which this does not reduce: benchmarks/RESULTS.md §43)."""
    import numpy as np

    levels = np.asarray(welch_p, dtype=float)
    out = np.clip(levels, 0.0, 1.0)  # a level at or past 0 or 1 errs at that rate (worst_rate)
    inside = (levels > 0.0) & (levels < 1.0)
    if inside.any():
        small, large = sorted((n1, n2))  # the rate at (n2, n1, w) is the rate at (n1, n2, 1 - w)
        out[inside] = np.minimum(1.0, _worst_rates(small, large, levels[inside]))
    out_: np.ndarray = out
    return out_


def _worst_rates(n1: int, n2: int, levels: np.ndarray) -> np.ndarray:
    """``worst_rate`` at each of ``levels`` (all in (0, 1)), ``n1 <= n2``."""
    import numpy as np
    from scipy import special

    weights, logits = _grid()
    on_grid = _grid_rates(weights, n1, n2, levels)
    best = np.argmax(on_grid, axis=1)
    low = logits[np.maximum(best - 1, 0)]
    high = logits[np.minimum(best + 1, len(logits) - 1)]

    def rate(z: np.ndarray, which: np.ndarray) -> np.ndarray:
        return _rates_each(special.expit(z), n1, n2, levels[which])

    found = _bounded_max(rate, low, high, xatol=1e-4)
    out: np.ndarray = np.maximum(on_grid[np.arange(len(levels)), best], found)
    return out


def _grid_rates(weights: np.ndarray, n1: int, n2: int, levels: np.ndarray) -> np.ndarray:
    """``rates`` on the grid ``weights`` at each of ``levels``: each level's quantiles as ``rates``
    takes them (``_critical``), the tails of every level in one call to scipy."""
    import numpy as np
    from scipy import special

    _, _, dens = _nodes(n1, n2)
    scale, df, where = _cached_frame(n1, n2, np.ascontiguousarray(weights, dtype=float).tobytes())
    critical = np.stack([_critical(df, where, n1, n2, float(level) / 2) for level in levels])
    out: np.ndarray = np.sum(dens * (2 * special.stdtr(n1 + n2 - 2, -(critical * scale))), axis=2)
    return out


def _rates_each(weights: np.ndarray, n1: int, n2: int, levels: np.ndarray) -> np.ndarray:
    """``rates`` of one weight at one level per entry (the search's steps, one per p): scipy's
    ``stdtrit`` at each weight's df, as ``rates`` of one weight takes it."""
    import numpy as np
    from scipy import special

    _, _, dens = _nodes(n1, n2)
    scale, df, _ = _frame(np.asarray(weights, dtype=float), n1, n2)
    critical = -special.stdtrit(df, (levels / 2)[:, None])
    out: np.ndarray = np.sum(dens * (2 * special.stdtr(n1 + n2 - 2, -critical * scale)), axis=1)
    return out


def _bounded_max(
    func: Callable[[np.ndarray, np.ndarray], np.ndarray], low: np.ndarray, high: np.ndarray, xatol: float
) -> np.ndarray:
    """The maxima of ``func`` over each [low, high], by scipy's ``minimize_scalar(method="bounded")``
    (Brent's golden section and parabolic steps, scipy.optimize._optimize._minimize_scalar_bounded)
    run on every interval in lockstep: each step evaluates ``func(x, which)`` at one point of each
    search still open (``which``: their indices), so each search takes scipy's own path. Returns
    the largest value each found (-fun)."""
    import numpy as np

    sqrt_eps, golden_mean = math.sqrt(2.2e-16), 0.5 * (3.0 - math.sqrt(5.0))
    a, b = low.astype(float).copy(), high.astype(float).copy()
    xf = a + golden_mean * (b - a)
    nfc, fulc = xf.copy(), xf.copy()
    rat, e = np.zeros_like(a), np.zeros_like(a)
    fx = -func(xf, np.arange(len(a)))
    ffulc, fnfc = fx.copy(), fx.copy()
    for _ in range(MAX_STEPS):
        xm = 0.5 * (a + b)
        tol1 = sqrt_eps * np.abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        live = np.flatnonzero(np.abs(xf - xm) > tol2 - 0.5 * (b - a))
        if not live.size:
            break
        x = _brent_step(live, (a, b, xf, nfc, fulc, fx, fnfc, ffulc), (rat, e), (xm, tol1, tol2))
        fu = -func(x, live)
        _brent_update(live, x, fu, (a, b, xf, nfc, fulc, fx, fnfc, ffulc))
    return -fx


MAX_STEPS = 500  # scipy's maxiter for the bounded search


def _brent_step(
    i: np.ndarray,
    state: tuple[np.ndarray, ...],
    steps: tuple[np.ndarray, np.ndarray],
    tols: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """The next point of each search in ``i`` (scipy's parabolic-or-golden choice); ``rat`` and
    ``e`` (``steps``) updated in place."""
    import numpy as np

    a, b, xf, nfc, fulc, fx, fnfc, ffulc = (s[i] for s in state)
    rat, e = steps
    xm, tol1, tol2 = (t[i] for t in tols)
    r_, e_ = rat[i], e[i]
    parabola = np.abs(e_) > tol1
    r = (xf - nfc) * (fx - ffulc)
    q = (xf - fulc) * (fx - fnfc)
    p = (xf - fulc) * q - (xf - nfc) * r
    q = 2.0 * (q - r)
    p = np.where(q > 0.0, -p, p)
    q = np.abs(q)
    old_e = e_
    e_ = np.where(parabola, r_, e_)  # scipy: r = e; e = rat
    with np.errstate(divide="ignore", invalid="ignore"):
        accepted = parabola & (np.abs(p) < np.abs(0.5 * q * old_e)) & (p > q * (a - xf)) & (p < q * (b - xf))
        fitted = (p + 0.0) / q
    x = xf + fitted
    near = ((x - a) < tol2) | ((b - x) < tol2)
    si = np.sign(xm - xf) + ((xm - xf) == 0)
    fitted = np.where(near, tol1 * si, fitted)
    golden_e = np.where(xf >= xm, a - xf, b - xf)
    golden_mean = 0.5 * (3.0 - math.sqrt(5.0))
    r_ = np.where(accepted, fitted, golden_mean * golden_e)
    e_ = np.where(accepted, e_, golden_e)
    rat[i], e[i] = r_, e_
    si = np.sign(r_) + (r_ == 0)
    out: np.ndarray = xf + si * np.maximum(np.abs(r_), tol1)
    return out


def _brent_update(i: np.ndarray, x: np.ndarray, fu: np.ndarray, state: tuple[np.ndarray, ...]) -> None:
    """scipy's bracket and best-three update of each search in ``i`` after evaluating ``fu`` at ``x``
    (``state``'s arrays, in place)."""
    import numpy as np

    a, b, xf, nfc, fulc, fx, fnfc, ffulc = state
    old = [s[i].copy() for s in state]
    oa, ob, oxf, onfc, ofulc, ofx, ofnfc, offulc = old
    better = fu <= ofx
    a[i] = np.where(better & (x >= oxf), oxf, np.where(~better & (x < oxf), x, oa))
    b[i] = np.where(better & (x < oxf), oxf, np.where(~better & (x >= oxf), x, ob))
    second = ~better & ((fu <= ofnfc) | (onfc == oxf))
    third = ~better & ~second & ((fu <= offulc) | (ofulc == oxf) | (ofulc == onfc))
    fulc[i] = np.where(better | second, onfc, np.where(third, x, ofulc))
    ffulc[i] = np.where(better | second, ofnfc, np.where(third, fu, offulc))
    nfc[i] = np.where(better, oxf, np.where(second, x, onfc))
    fnfc[i] = np.where(better, ofx, np.where(second, fu, ofnfc))
    xf[i] = np.where(better, x, oxf)
    fx[i] = np.where(better, fu, ofx)
