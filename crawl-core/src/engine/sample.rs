//! An evenly spread sample of a listing of unknown length, in bounded memory: what the
//! site-template passes learn from.

/// Most items a template pass learns from.
pub(super) const TEMPLATE_SAMPLE: usize = 300;

/// Keeps every `stride`-th item offered; when it holds twice [`TEMPLATE_SAMPLE`], every
/// other one is dropped and the stride doubles, so at most `2 × TEMPLATE_SAMPLE` items are
/// held however long the listing.
pub(super) struct SpreadSample<T> {
    items: Vec<T>,
    stride: usize,
    seen: usize,
}

impl<T> SpreadSample<T> {
    pub(super) fn new() -> Self {
        SpreadSample {
            items: Vec::new(),
            stride: 1,
            seen: 0,
        }
    }

    /// Offers the next item of the listing.
    pub(super) fn offer(&mut self, item: T) {
        if self.seen.is_multiple_of(self.stride) {
            self.items.push(item);
            if self.items.len() >= 2 * TEMPLATE_SAMPLE {
                let mut i = 0;
                self.items.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.stride *= 2;
            }
        }
        self.seen += 1;
    }

    /// Items offered so far.
    pub(super) fn seen(&self) -> usize {
        self.seen
    }

    /// At most [`TEMPLATE_SAMPLE`] of the kept items, evenly spread.
    pub(super) fn into_spread(self) -> impl Iterator<Item = T> {
        let step = self.items.len().div_ceil(TEMPLATE_SAMPLE).max(1);
        self.items.into_iter().step_by(step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_listing_keeps_an_even_sample_in_bounded_memory() {
        let mut s = SpreadSample::new();
        for i in 0..100_000usize {
            s.offer(i);
            assert!(s.items.len() < 2 * TEMPLATE_SAMPLE);
        }
        assert_eq!(s.seen(), 100_000);
        let picked: Vec<usize> = s.into_spread().collect();
        assert!(picked.len() <= TEMPLATE_SAMPLE && picked.len() > TEMPLATE_SAMPLE / 2);
        assert_eq!(picked[0], 0);
        assert!(*picked.last().unwrap_or(&0) > 90_000, "{picked:?}");
    }
}
