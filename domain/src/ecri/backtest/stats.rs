//! Means and 95 % intervals across seeds: each seed is one run of the whole company, so the
//! seeds are independent draws and Student's t over them gives the interval.

/// A mean across seeds with its two-sided 95 % t interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    pub n: usize,
}

/// Student's t quantile at 0.975 for `df` degrees of freedom (infinite for none).
pub fn t975(df: usize) -> f64 {
    if df == 0 {
        f64::INFINITY
    } else {
        crate::ecri::lift::t_quantile(0.975, df as f64)
    }
}

/// The mean of `values` and its 95 % t interval (infinite with fewer than two values).
pub fn t_interval(values: &[f64]) -> Interval {
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n.max(1) as f64;
    if n < 2 {
        return Interval {
            mean,
            low: f64::NEG_INFINITY,
            high: f64::INFINITY,
            n,
        };
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t975(n - 1) * (var / n as f64).sqrt();
    Interval {
        mean,
        low: mean - half,
        high: mean + half,
        n,
    }
}

impl Interval {
    /// `+6.0 % (+5.1 to +6.9)`: a signed percent with its interval.
    pub fn pct(&self) -> String {
        format!(
            "{:+.1} % ({:+.1} to {:+.1})",
            self.mean, self.low, self.high
        )
    }

    /// `72.3 % (71.0-73.6)`: a share in percent with its interval.
    pub fn share(&self) -> String {
        format!("{:.1} % ({:.1}-{:.1})", self.mean, self.low, self.high)
    }

    /// `+0.3 pts (-0.2 to +0.8)`: a difference in points with its interval.
    pub fn points(&self) -> String {
        format!(
            "{:+.1} pts ({:+.1} to {:+.1})",
            self.mean, self.low, self.high
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_of_a_worked_example() {
        // 1..=5: mean 3, sample sd sqrt(2.5), se sqrt(0.5), t(4) 2.776.
        let i = t_interval(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(i.mean, 3.0);
        // t(0.975, 4) = 2.776 (to three decimals in the tables).
        let half = 2.776_445 * 0.5f64.sqrt();
        assert!((i.low - (3.0 - half)).abs() < 1e-5 && (i.high - (3.0 + half)).abs() < 1e-5);
        assert_eq!(i.pct(), "+3.0 % (+1.0 to +5.0)");
        let one = t_interval(&[2.0]);
        assert!(one.low.is_infinite() && one.high.is_infinite());
    }

    #[test]
    fn t_quantiles_match_the_table_and_approach_the_normal() {
        assert!((t975(9) - 2.262).abs() < 5e-4);
        assert!((t975(31) - 2.0395).abs() < 1e-3);
        assert!((t975(60) - 2.0003).abs() < 1e-3);
        assert!((t975(1000) - 1.9623).abs() < 1e-3);
        assert!(t975(0).is_infinite());
    }
}
