//! The served weights of the classifier: one byte per class and feature, times the feature's
//! scale. Made once from the trained weights ([`quantize`]) and added up for every message
//! ([`add_rows`], the hot loop). Both take AVX2's steps where the processor has them (checked
//! at run time, cached by the standard library), the baseline's otherwise; no fused
//! multiply-add, so every byte and score is the same on both.

/// Each feature's weights (`classes` of them a feature in `weights`) as bytes times its scale,
/// into `rows` (`stride` bytes a feature) and `scales` (one a feature), both already sized.
pub(super) fn quantize(
    weights: &[f32],
    classes: usize,
    stride: usize,
    rows: &mut [i8],
    scales: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        unsafe { quantize_avx2(weights, classes, stride, rows, scales) };
        return;
    }
    quantize_rows(weights, classes, stride, rows, scales);
}

/// [`quantize_rows`] compiled for AVX2, where rounding is a few vector steps instead of a call
/// of `roundf` for each weight (the same rounding: half away from zero).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn quantize_avx2(
    weights: &[f32],
    classes: usize,
    stride: usize,
    rows: &mut [i8],
    scales: &mut [f32],
) {
    quantize_rows(weights, classes, stride, rows, scales);
}

/// [`quantize`]'s steps.
#[inline(always)]
fn quantize_rows(
    weights: &[f32],
    classes: usize,
    stride: usize,
    rows: &mut [i8],
    scales: &mut [f32],
) {
    for (f, scale_of) in scales.iter_mut().enumerate() {
        let row = &weights[f * classes..][..classes];
        let max = row.iter().fold(0.0f32, |m, w| m.max(w.abs()));
        if max == 0.0 {
            continue;
        }
        let scale = max / 127.0;
        *scale_of = scale;
        for (q, w) in rows[f * stride..][..classes].iter_mut().zip(row) {
            *q = (w / scale).round().clamp(-127.0, 127.0) as i8;
        }
    }
}

/// Classes added up a block at a time (see [`add_rows_in_blocks`]).
const BLOCK: usize = 16;

/// `out[c]` = the sum over `terms` of `rows[at + c] * times`, feature after feature in the
/// order given (the same float additions in the same order on every processor). With AVX2's
/// eight-lane steps that widen bytes to floats in one instruction when the processor has them
/// (checked once and cached by the standard library), the baseline's steps otherwise: the
/// widening is most of the hot path's instructions.
pub(super) fn add_rows(rows: &[i8], terms: &[(usize, f32)], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        unsafe { add_rows_avx2(rows, terms, out) };
        return;
    }
    add_rows_in_blocks(rows, terms, out);
}

/// [`add_rows`] compiled for AVX2: up to 64 classes (eight of its sixteen registers) summed
/// all at once, a feature's row in one pass; more, a block at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_rows_avx2(rows: &[i8], terms: &[(usize, f32)], out: &mut [f32]) {
    match out.len() {
        16 => add_rows_at_once::<16>(rows, terms, out),
        32 => add_rows_at_once::<32>(rows, terms, out),
        48 => add_rows_at_once::<48>(rows, terms, out),
        64 => add_rows_at_once::<64>(rows, terms, out),
        _ => add_rows_in_blocks(rows, terms, out),
    }
}

/// [`add_rows`] for `W` classes, all of them held in registers while the rows are added.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn add_rows_at_once<const W: usize>(rows: &[i8], terms: &[(usize, f32)], out: &mut [f32]) {
    let mut acc = [0.0f32; W];
    for &(at, times) in terms {
        let Some(row) = rows.get(at..at + W) else {
            continue;
        };
        for (a, &q) in acc.iter_mut().zip(row) {
            *a += f32::from(q) * times;
        }
    }
    out.copy_from_slice(&acc);
}

/// [`add_rows`], a block of classes at a time: the block's sums stay in registers while every
/// feature's bytes for it are added (`out.len()` is a multiple of [`BLOCK`], as `stride` is).
#[inline(always)]
fn add_rows_in_blocks(rows: &[i8], terms: &[(usize, f32)], out: &mut [f32]) {
    for (b, sums) in out.chunks_exact_mut(BLOCK).enumerate() {
        let mut acc = [0.0f32; BLOCK];
        for &(at, times) in terms {
            let Some(row) = rows.get(at + b * BLOCK..at + (b + 1) * BLOCK) else {
                continue;
            };
            for (a, &q) in acc.iter_mut().zip(row) {
                *a += f32::from(q) * times;
            }
        }
        sums.copy_from_slice(&acc);
    }
}
