//! Sampling helpers over a seeded ChaCha stream.
//!
//! Every draw the generator makes goes through these few functions, built only on
//! `next_u64` of [`rand_chacha::ChaCha8Rng`], whose output is fixed by its
//! specification. That keeps the dataset a function of the seed alone, independent
//! of any distribution algorithm a `rand` release might change. Nothing here may read
//! the clock, the environment or an OS entropy source.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

/// A deterministic random stream: `(seed, stream)` fully determines every draw.
pub(crate) struct Sampler {
    rng: ChaCha8Rng,
}

impl Sampler {
    /// The stream numbered `stream` of the generator seeded with `seed`. Different
    /// streams of one seed are independent, so each patient can have its own.
    pub(crate) fn new(seed: u64, stream: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        Sampler { rng }
    }

    /// Uniform in `[0, 1)` with 53 bits of precision.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[lo, hi)`.
    pub(crate) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in `[lo, hi]` (both inclusive).
    pub(crate) fn int(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(lo <= hi);
        let span = (hi - lo) as u64 + 1;
        lo + (self.rng.next_u64() % span) as i64
    }

    /// True with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Standard normal (Box–Muller).
    pub(crate) fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit(); // (0, 1]: ln is finite
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Normal with the given mean and standard deviation.
    pub(crate) fn gauss(&mut self, mean: f64, sd: f64) -> f64 {
        mean + sd * self.normal()
    }

    /// Log-normal with the given median and log-scale spread.
    pub(crate) fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        median * (sigma * self.normal()).exp()
    }

    /// One item picked with probability proportional to its weight.
    pub(crate) fn weighted<T: Copy>(&mut self, items: &[(T, f64)]) -> T {
        let total: f64 = items.iter().map(|(_, w)| w.max(0.0)).sum();
        debug_assert!(total > 0.0, "weights must not all be zero");
        let mut x = self.unit() * total;
        for &(item, w) in items {
            let w = w.max(0.0);
            if x < w {
                return item;
            }
            x -= w;
        }
        // Floating-point leftovers: the last item with a positive weight.
        items
            .iter()
            .rev()
            .find(|(_, w)| *w > 0.0)
            .map(|(t, _)| *t)
            .unwrap_or(items[0].0)
    }

    /// One element of a non-empty slice, uniformly.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.int(0, items.len() as i64 - 1) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_stream_same_draws_other_stream_other_draws() {
        let draw = |seed, stream| {
            let mut s = Sampler::new(seed, stream);
            (0..8).map(|_| s.int(0, 1_000_000)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7, 3), draw(7, 3));
        assert_ne!(draw(7, 3), draw(7, 4));
        assert_ne!(draw(7, 3), draw(8, 3));
    }

    #[test]
    fn draws_stay_in_range_and_weights_are_respected() {
        let mut s = Sampler::new(1, 0);
        let mut hits = [0u32; 3];
        for _ in 0..30_000 {
            let u = s.unit();
            assert!((0.0..1.0).contains(&u));
            let i = s.int(-2, 2);
            assert!((-2..=2).contains(&i));
            hits[s.weighted(&[(0usize, 1.0), (1, 0.0), (2, 3.0)])] += 1;
        }
        assert_eq!(hits[1], 0, "zero weight is never picked");
        let ratio = hits[2] as f64 / hits[0] as f64;
        assert!((2.7..3.3).contains(&ratio), "3:1 weights gave {ratio}");
    }
}
