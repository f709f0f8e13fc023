//! The statistics of `report` and `compare`: a proportion's confidence interval and a paired
//! test of two runs over the same tasks.

/// `count` as a share of `of`; 0 of nothing is 0.
pub fn share(count: usize, of: usize) -> f64 {
    if of == 0 {
        0.0
    } else {
        count as f64 / of as f64
    }
}

/// The 95% Wilson score interval of `k` successes in `n` trials, as `(low, high)`; `(0, 1)`
/// when there are no trials. Unlike the normal approximation it stays inside [0, 1] and is
/// sound for small `n` and rates near 0 or 1, which is where agents' rates often are.
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    const Z: f64 = 1.959_963_984_540_054;
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = n as f64;
    let p = k as f64 / n;
    let z2 = Z * Z;
    let centre = p + z2 / (2.0 * n);
    let spread = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let denom = 1.0 + z2 / n;
    (
        ((centre - spread) / denom).max(0.0),
        ((centre + spread) / denom).min(1.0),
    )
}

/// The exact (binomial) two-sided McNemar test: the p-value of `b` tasks that changed one way
/// and `c` the other way, if either way were equally likely. Tasks that did not change carry
/// no information about the difference and are not counted. 1 when nothing changed.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    // P(X <= k) for X ~ Binomial(n, 1/2), summed in log space so that n in the thousands
    // neither overflows nor underflows.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0f64; // ln C(n, 0)
    let mut tail = 0.0f64;
    for i in 0..=k {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose + ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }

    #[test]
    fn wilson_matches_known_values() {
        // Reference values of the closed form (Newcombe 1998), computed independently.
        let (lo, hi) = wilson(50, 100);
        assert!(close(lo, 0.4038) && close(hi, 0.5962), "{lo} {hi}");
        let (lo, hi) = wilson(0, 10);
        assert!(close(lo, 0.0) && close(hi, 0.2775), "{lo} {hi}");
        let (lo, hi) = wilson(10, 10);
        assert!(close(lo, 0.7225) && close(hi, 1.0), "{lo} {hi}");
        let (lo, hi) = wilson(1, 3);
        assert!(close(lo, 0.0615) && close(hi, 0.7923), "{lo} {hi}");
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }

    #[test]
    fn mcnemar_matches_the_binomial() {
        // b=1, c=9: 2 * (C(10,0) + C(10,1)) / 2^10 = 22/1024.
        assert!(close(mcnemar_exact(1, 9), 22.0 / 1024.0));
        assert!(close(mcnemar_exact(9, 1), 22.0 / 1024.0));
        // b=0, c=5: 2/32.
        assert!(close(mcnemar_exact(0, 5), 0.0625));
        // Balanced changes are no evidence at all.
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // b=0, c=1: the smallest possible evidence, p = 1.
        assert_eq!(mcnemar_exact(0, 1), 1.0);
        // Large n stays finite and tiny: 0 vs 2000.
        let p = mcnemar_exact(0, 2000);
        assert!(p > 0.0 && p < 1e-300 || p == 0.0);
        // 450 vs 550: 2 * sum(C(1000, i) for i <= 450) / 2^1000 in exact integer arithmetic
        // is 0.00173053608...
        assert!((mcnemar_exact(450, 550) - 0.001_730_536_08).abs() < 1e-9);
    }
}
