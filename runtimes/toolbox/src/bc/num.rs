//! bc's numbers: an integer of any size and a count of decimal places (`v / 10^scale`), with
//! GNU bc's rules for the scale of each result (truncated, never rounded), its reading of
//! constants in `ibase` and its printing in `obase`, line wrapping included.

use num_bigint::{BigInt, Sign};
use num_traits::{ToPrimitive, Zero};
use std::cmp::Ordering;

/// The most decimal digits a result may have. GNU bc has no limit but memory and time; here
/// a runaway `2^(10^9)` or `scale=10^9; 1/3` is refused instead of filling the sandbox's memory.
pub const MAX_DIGITS: u64 = 10_000_000;

/// Why a calculation stopped.
pub const TOO_LARGE: &str = "number too large (more than 10000000 digits)";

#[derive(Clone, Debug, Default)]
pub struct Num {
    pub v: BigInt,
    pub scale: usize,
    /// A negative power cut to zero: GNU keeps its sign, prints `-0` and takes no square
    /// root of it; any other operation makes it a plain 0.
    pub negzero: bool,
}

pub fn pow10(n: usize) -> BigInt {
    BigInt::from(10u32).pow(n as u32)
}

/// An upper bound of the decimal digits of `v`.
fn digits_bound(v: &BigInt) -> u64 {
    v.bits() * 30103 / 100000 + 1
}

impl Num {
    pub fn int(n: i64) -> Num {
        Num {
            v: BigInt::from(n),
            scale: 0,
            negzero: false,
        }
    }

    pub fn zero() -> Num {
        Num::int(0)
    }

    pub fn is_zero(&self) -> bool {
        self.v.is_zero()
    }

    pub fn is_neg(&self) -> bool {
        self.v.sign() == Sign::Minus
    }

    pub fn neg(&self) -> Num {
        Num {
            v: -&self.v,
            scale: self.scale,
            negzero: false,
        }
    }

    pub fn abs(&self) -> Num {
        if self.is_neg() {
            self.neg()
        } else {
            self.clone()
        }
    }

    /// The value with `scale` decimal places: more zeros, or digits cut off (toward zero).
    pub fn with_scale(&self, scale: usize) -> Num {
        let v = match scale.cmp(&self.scale) {
            Ordering::Equal => self.v.clone(),
            Ordering::Greater => &self.v * pow10(scale - self.scale),
            Ordering::Less => &self.v / pow10(self.scale - scale),
        };
        Num {
            negzero: self.negzero && v.is_zero(),
            v,
            scale,
        }
    }

    /// The integer part (toward zero).
    pub fn trunc(&self) -> BigInt {
        self.with_scale(0).v
    }

    /// The integer part as an i64; `None` when it does not fit.
    pub fn to_i64(&self) -> Option<i64> {
        self.trunc().to_i64()
    }

    pub fn cmp(&self, other: &Num) -> Ordering {
        let s = self.scale.max(other.scale);
        self.with_scale(s).v.cmp(&other.with_scale(s).v)
    }

    /// `a + b`; -0 + -0 stays -0 (GNU adds the magnitudes of equal signs).
    pub fn add(&self, other: &Num) -> Num {
        let s = self.scale.max(other.scale);
        Num {
            v: self.with_scale(s).v + other.with_scale(s).v,
            scale: s,
            negzero: self.negzero && other.negzero,
        }
    }

    /// `a - b`; -0 - 0 stays -0 (GNU adds the magnitudes of different signs).
    pub fn sub(&self, other: &Num) -> Num {
        let s = self.scale.max(other.scale);
        Num {
            v: self.with_scale(s).v - other.with_scale(s).v,
            scale: s,
            negzero: self.negzero && other.is_zero() && !other.negzero,
        }
    }

    /// `a * b` with `scale`: the exact product cut to min(a.scale + b.scale, max(scale,
    /// a.scale, b.scale)) places.
    pub fn mul(&self, other: &Num, scale: usize) -> Result<Num, &'static str> {
        if digits_bound(&self.v) + digits_bound(&other.v) > MAX_DIGITS {
            return Err(TOO_LARGE);
        }
        let full = self.scale + other.scale;
        let product = Num {
            v: &self.v * &other.v,
            scale: full,
            negzero: false,
        };
        Ok(product.with_scale(full.min(scale.max(self.scale).max(other.scale))))
    }

    /// `a / b` with `scale` places, cut toward zero; `None` when `b` is zero.
    pub fn div(&self, other: &Num, scale: usize) -> Result<Option<Num>, &'static str> {
        if other.is_zero() {
            return Ok(None);
        }
        // a.v / 10^as ÷ b.v / 10^bs = (a.v * 10^(scale + bs)) / (b.v * 10^as) / 10^scale
        let up = scale + other.scale;
        if digits_bound(&self.v) + up as u64 > MAX_DIGITS + other.scale as u64 {
            return Err(TOO_LARGE);
        }
        let (num, den) = if up >= self.scale {
            (&self.v * pow10(up - self.scale), other.v.clone())
        } else {
            (self.v.clone(), &other.v * pow10(self.scale - up))
        };
        Ok(Some(Num {
            v: num / den,
            scale,
            negzero: false,
        }))
    }

    /// `a % b` as GNU bc: `a - (a / b) * b`, the quotient with `scale` places, the remainder
    /// with max(a.scale, b.scale + scale).
    pub fn rem(&self, other: &Num, scale: usize) -> Result<Option<Num>, &'static str> {
        let Some(q) = self.div(other, scale)? else {
            return Ok(None);
        };
        let rscale = self.scale.max(other.scale + scale);
        let back = q.mul(other, rscale)?;
        let r = self.sub(&back);
        let s = r.scale.max(rscale);
        Ok(Some(r.with_scale(s)))
    }

    /// `a ^ n` for an integer `n`: exact, then cut to min(a.scale * n, max(scale, a.scale))
    /// places; a negative `n` divides 1 by the power with `scale` places.
    pub fn pow(&self, n: i64, scale: usize) -> Result<Num, &'static str> {
        if n == 0 {
            return Ok(Num::int(1));
        }
        let e = n.unsigned_abs();
        let places = (self.scale as u64).saturating_mul(e);
        let rscale = places.min(scale.max(self.scale) as u64) as usize;
        let exact = if self.v.bits() <= 1 {
            // 0, 1, -1, or one of them times 10^-s: the power is 0 or ±10^-(s*e) whatever e.
            let sign = if self.v.is_zero() {
                0
            } else if self.is_neg() && e % 2 == 1 {
                -1
            } else {
                1
            };
            if places > MAX_DIGITS {
                if n < 0 && sign != 0 {
                    return Err(TOO_LARGE);
                }
                // Below any place the result keeps.
                return Ok(Num {
                    v: BigInt::zero(),
                    scale: if n < 0 { scale } else { rscale },
                    negzero: false,
                });
            }
            Num {
                v: BigInt::from(sign),
                scale: places as usize,
                negzero: false,
            }
        } else {
            if digits_bound(&self.v).saturating_mul(e) > MAX_DIGITS {
                return Err(TOO_LARGE);
            }
            Num {
                v: self.v.pow(e as u32),
                scale: places as usize,
                negzero: false,
            }
        };
        if n < 0 {
            return Num::int(1).div(&exact, scale)?.ok_or("divide by zero");
        }
        let negative = exact.is_neg();
        let mut r = exact.with_scale(rscale);
        r.negzero = negative && r.is_zero();
        Ok(r)
    }

    /// The square root with max(scale, a.scale) places, cut toward zero; `None` for a
    /// negative number.
    pub fn sqrt(&self, scale: usize) -> Result<Option<Num>, &'static str> {
        if self.is_neg() || self.negzero {
            return Ok(None);
        }
        if self.is_zero() {
            return Ok(Some(Num::zero()));
        }
        if self.v == BigInt::from(1) && self.scale == 0 {
            return Ok(Some(Num::int(1)));
        }
        let rscale = scale.max(self.scale);
        if digits_bound(&self.v) / 2 + rscale as u64 > MAX_DIGITS {
            return Err(TOO_LARGE);
        }
        // sqrt(v / 10^s) * 10^r = sqrt(v * 10^(2r - s))
        let radicand = &self.v * pow10(2 * rscale - self.scale);
        Ok(Some(Num {
            v: radicand.sqrt(),
            scale: rscale,
            negzero: false,
        }))
    }

    /// GNU's `length()`: the digits of the number; below 1, its scale.
    pub fn length(&self) -> usize {
        let int = self.trunc();
        if int.is_zero() {
            self.scale.max(1)
        } else {
            int.magnitude().to_string().len() + self.scale
        }
    }

    /// A constant of the program as `ibase` reads it: a single digit is its own value (`A` is
    /// 10 in any base); in longer numbers a digit at or above the base counts as base - 1.
    pub fn parse(text: &str, ibase: u32) -> Num {
        let digit = |c: char| c.to_digit(36).unwrap_or(0);
        let chars: Vec<char> = text.chars().collect();
        if chars.len() == 1 {
            return Num::int(i64::from(digit(chars[0])));
        }
        let clamp = |c: char| digit(c).min(ibase - 1);
        let (int, frac) = match text.split_once('.') {
            Some((i, f)) => (i, f),
            None => (text, ""),
        };
        let base = BigInt::from(ibase);
        if ibase == 10 {
            let mut v = BigInt::zero();
            for c in int.chars().chain(frac.chars()) {
                v = v * 10u32 + clamp(c);
            }
            return Num {
                v,
                scale: frac.len(),
                negzero: false,
            };
        }
        let mut v = BigInt::zero();
        for c in int.chars() {
            v = v * &base + clamp(c);
        }
        let mut n = Num {
            v,
            scale: 0,
            negzero: false,
        };
        if !frac.is_empty() {
            let mut f = BigInt::zero();
            let mut denom = BigInt::from(1);
            for c in frac.chars() {
                f = f * &base + clamp(c);
                denom *= &base;
            }
            let part = Num {
                v: f,
                scale: 0,
                negzero: false,
            }
            .div(
                &Num {
                    v: denom,
                    scale: 0,
                    negzero: false,
                },
                frac.len(),
            )
            .ok()
            .flatten()
            .unwrap_or_default();
            n = n.add(&part);
        }
        n
    }

    /// The characters GNU bc prints for the number in `obase` (without line wrapping).
    pub fn format(&self, obase: u64) -> String {
        let mut out = String::new();
        if self.negzero {
            return "-0".into();
        }
        if self.is_neg() {
            out.push('-');
        }
        if self.is_zero() {
            return "0".into();
        }
        let abs = self.abs();
        if obase == 10 {
            let digits = abs.v.to_string();
            let (int, frac) = if digits.len() > abs.scale {
                digits.split_at(digits.len() - abs.scale)
            } else {
                ("", digits.as_str())
            };
            out.push_str(int);
            if abs.scale > 0 {
                out.push('.');
                out.extend(std::iter::repeat_n('0', abs.scale - frac.len()));
                out.push_str(frac);
            }
            return out;
        }
        let int = abs.trunc();
        let mut frac = abs.sub(&Num {
            v: int.clone(),
            scale: 0,
            negzero: false,
        });
        // Bases above 16 print each digit as a decimal number, as wide as obase - 1, after a
        // space.
        let width = (obase - 1).to_string().len();
        let digit = |d: u64, out: &mut String, space: bool| {
            if obase <= 16 {
                out.push(
                    char::from_digit(d as u32, 16)
                        .unwrap_or('0')
                        .to_ascii_uppercase(),
                );
            } else {
                if space {
                    out.push(' ');
                }
                out.push_str(&format!("{d:0width$}"));
            }
        };
        if !int.is_zero() {
            for d in int_digits(&int, obase) {
                digit(d, &mut out, true);
            }
        }
        if abs.scale > 0 {
            out.push('.');
            // As many digits as it takes for obase^k to have more integer digits than the
            // number has places.
            let base = BigInt::from(obase);
            let mut power = BigInt::from(1);
            let mut first = true;
            while power.to_string().len() <= abs.scale {
                frac.v *= &base;
                let d = frac.trunc();
                frac = frac.sub(&Num {
                    v: d.clone(),
                    scale: 0,
                    negzero: false,
                });
                digit(d.to_u64().unwrap_or(0), &mut out, !first);
                first = false;
                power *= &base;
            }
        }
        out
    }
}

/// The digits of a positive integer in `base`, most significant first.
fn int_digits(n: &BigInt, base: u64) -> Vec<u64> {
    if base <= 256 {
        let (_, d) = n.to_radix_be(base as u32);
        return d.into_iter().map(u64::from).collect();
    }
    let b = BigInt::from(base);
    let mut n = n.clone();
    let mut out = Vec::new();
    while !n.is_zero() {
        out.push((&n % &b).to_u64().unwrap_or(0));
        n /= &b;
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(text: &str) -> Num {
        Num::parse(text, 10)
    }

    #[test]
    fn scales_follow_gnu() {
        assert_eq!(n("1.5").mul(&n("1.25"), 3).unwrap().format(10), "1.875");
        assert_eq!(n("1.5").mul(&n("1.25"), 0).unwrap().format(10), "1.87");
        assert_eq!(n("10").div(&n("3"), 2).unwrap().unwrap().format(10), "3.33");
        assert_eq!(n("5").rem(&n("3"), 2).unwrap().unwrap().format(10), ".02");
        assert_eq!(
            n("10").neg().rem(&n("3"), 0).unwrap().unwrap().format(10),
            "-1"
        );
        assert_eq!(n("2").pow(-2, 3).unwrap().format(10), ".250");
        assert_eq!(
            n("2").pow(64, 0).unwrap().format(10),
            "18446744073709551616"
        );
        assert_eq!(
            n("2").sqrt(20).unwrap().unwrap().format(10),
            "1.41421356237309504880"
        );
        assert!(n("2").pow(1_000_000_000, 0).is_err());
        assert_eq!(n("1").pow(1_000_000_000, 0).unwrap().format(10), "1");
    }

    #[test]
    fn bases() {
        assert_eq!(Num::parse("FF", 16).format(10), "255");
        assert_eq!(Num::parse("AA", 10).format(10), "99");
        assert_eq!(Num::parse("A", 2).format(10), "10");
        assert_eq!(n("255").format(16), "FF");
        assert_eq!(n("3.14159").format(16), "3.243F3");
        assert_eq!(n("12345.678").format(100), " 01 23 45.67 80");
        assert_eq!(n(".1").format(2), ".0001");
    }
}
