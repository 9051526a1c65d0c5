//! Student's t distribution: its CDF and its quantile, for the intervals
//! and p-values over runs (`docs/bench/comparing-policies.md`: the unit of
//! inference is the run, so a comparison has runs − 1 degrees of freedom,
//! often 9 or fewer, where the normal's 1.96 would be too narrow).
//!
//! The CDF is exact up to floating point (the regularized incomplete beta
//! function by its continued fraction), and the quantile inverts that same
//! CDF by bisection, so an interval and a p-value computed from one t
//! statistic never disagree on which side of 5 % it falls. `df` infinite is
//! the normal distribution.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms: about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection keeps the series where it converges.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=100_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b).
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The fraction converges fast on one side of the mean only.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// The standard normal CDF, through erfc (Numerical Recipes' Chebyshev
/// fit, relative error under 1.2e-7: far below what a report prints).
fn normal_cdf(z: f64) -> f64 {
    let x = -z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let y = t
        * (-x * x - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    let erfc = if x >= 0.0 { y } else { 2.0 - y };
    0.5 * erfc
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom (> 0; infinite:
/// the normal).
pub fn cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if df.is_infinite() {
        return normal_cdf(t);
    }
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, df / (df + t * t));
    if t > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The two-sided p-value of a t statistic: P(|T| ≥ |t|).
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_infinite() {
        return 0.0;
    }
    (2.0 * cdf(-t.abs(), df)).min(1.0)
}

/// The `p` quantile (0 < p < 1) of Student's t with `df` degrees of
/// freedom: the t with `cdf(t, df) = p`, by bisection on [`cdf`].
pub fn quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if p < 0.5 {
        return -quantile(1.0 - p, df);
    }
    let mut hi = 1.0;
    while cdf(hi, df) < p && hi < 1e12 {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * hi.max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two-sided 95 % critical values from the printed tables (three
    /// decimals), and the normal's 1.960 for infinite df.
    #[test]
    fn quantiles_match_the_printed_table() {
        let table = [
            (1.0, 12.706),
            (2.0, 4.303),
            (3.0, 3.182),
            (4.0, 2.776),
            (5.0, 2.571),
            (9.0, 2.262),
            (10.0, 2.228),
            (19.0, 2.093),
            (29.0, 2.045),
            (60.0, 2.000),
            (120.0, 1.980),
            (f64::INFINITY, 1.960),
        ];
        for (df, want) in table {
            let got = quantile(0.975, df);
            assert!(
                (got - want).abs() < 5e-4,
                "t(0.975, {df}) = {got}, want {want}"
            );
            assert!((quantile(0.025, df) + got).abs() < 1e-9);
        }
        // One-sided 99 % for 4 df, and the 99.5 % point for 1 df.
        assert!((quantile(0.99, 4.0) - 3.747).abs() < 5e-4);
        assert!((quantile(0.995, 1.0) - 63.657).abs() < 5e-3);
    }

    #[test]
    fn the_cdf_matches_closed_forms_and_the_quantile() {
        // df 1 is the Cauchy: 1/2 + atan(t)/π; df 2: 1/2 + t / (2 √(2 + t²)).
        for t in [-3.0, -0.5, 0.0, 0.7, 2.0, 10.0] {
            let cauchy = 0.5 + f64::atan(t) / std::f64::consts::PI;
            assert!((cdf(t, 1.0) - cauchy).abs() < 1e-12, "df 1, t {t}");
            let two = 0.5 + t / (2.0 * (2.0 + t * t).sqrt());
            assert!((cdf(t, 2.0) - two).abs() < 1e-12, "df 2, t {t}");
        }
        for df in [1.0, 3.0, 9.0, 29.0, 1000.0] {
            for p in [0.6, 0.9, 0.975, 0.999] {
                assert!((cdf(quantile(p, df), df) - p).abs() < 1e-9, "df {df} p {p}");
            }
        }
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
    }

    #[test]
    fn p_values_cross_5_percent_at_the_critical_value() {
        for df in [2.0, 4.0, 9.0] {
            let c = quantile(0.975, df);
            assert!((two_sided_p(c, df) - 0.05).abs() < 1e-9);
            assert!(two_sided_p(c * 1.01, df) < 0.05 && two_sided_p(-c * 0.99, df) > 0.05);
        }
        assert_eq!(two_sided_p(0.0, 5.0), 1.0);
        assert_eq!(two_sided_p(f64::INFINITY, 5.0), 0.0);
        assert!(quantile(0.5, 0.0).is_nan() && cdf(1.0, 0.0).is_nan());
    }
}
